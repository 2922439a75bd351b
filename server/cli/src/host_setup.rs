//! The Host a command works on: the configuration found in `host.md` §1's order
//! (from `--config`, the environment, the prompt's folder upward, the user's file)
//! and the Host built from it.

use std::path::{Path, PathBuf};

use promptforge_engine::host::{Config, Discovery, Host};

use crate::cli::GlobalArgs;

/// The folder a prompt's configuration search starts in (`.` for a bare file name).
pub fn prompt_dir(file: &Path) -> PathBuf {
    match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The configuration file a prompt in `dir` (or no prompt: the working folder)
/// uses, None for the built-in defaults.
pub fn config_path(global: &GlobalArgs, dir: Option<PathBuf>) -> Option<PathBuf> {
    Discovery::from_env(global.config.clone(), dir).find()
}

/// Reads the configuration at `path` (None: the built-in defaults); the error is the
/// one line to print.
pub fn load_path(global: &GlobalArgs, path: Option<&Path>) -> Result<Config, String> {
    if global.verbose {
        match path {
            Some(path) => eprintln!("configuration: {}", path.display()),
            None => eprintln!("configuration: built-in defaults"),
        }
    }
    match path {
        Some(path) => Config::load(path).map_err(|e| e.to_string()),
        None => Ok(Config::default()),
    }
}

/// The configuration for a prompt in `dir` (or for no prompt: the working folder);
/// the error is the one line to print.
pub fn load_config(global: &GlobalArgs, dir: Option<PathBuf>) -> Result<Config, String> {
    load_path(global, config_path(global, dir).as_deref())
}

/// The Host of a configuration (API keys read from the environment).
pub fn host_of(config: Config) -> Result<Host, String> {
    Host::new(config).map_err(|e| e.to_string())
}
