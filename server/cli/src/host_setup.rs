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

/// The configuration for a prompt in `dir` (or for no prompt: the working folder);
/// the error is the one line to print.
pub fn load_config(global: &GlobalArgs, dir: Option<PathBuf>) -> Result<Config, String> {
    let discovery = Discovery::from_env(global.config.clone(), dir);
    let config = discovery.load().map_err(|e| e.to_string())?;
    if global.verbose {
        match &config.path {
            Some(path) => eprintln!("configuration: {}", path.display()),
            None => eprintln!("configuration: built-in defaults"),
        }
    }
    Ok(config)
}

/// The Host of a configuration (API keys read from the environment).
pub fn host_of(config: Config) -> Result<Host, String> {
    Host::new(config).map_err(|e| e.to_string())
}
