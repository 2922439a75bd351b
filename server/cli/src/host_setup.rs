//! The Host a command works on: the configuration found in `host.md` §1's order
//! (from `--config`, the environment, the prompt's folder upward over the user's
//! file), trusted as §1.1 says (`--trust`, `$PROMPTFORGE_TRUST`, the records of
//! `promptforge trust`), and the Host built from it.

use std::path::{Path, PathBuf};

use promptforge_engine::host::discovery::load_found;
use promptforge_engine::host::{Config, Discovery, Found, Host, TrustPolicy};

use crate::cli::GlobalArgs;

/// The folder a prompt's configuration search starts in (`.` for a bare file name).
pub fn prompt_dir(file: &Path) -> PathBuf {
    match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The configuration files a prompt in `dir` (or no prompt: the working folder)
/// uses; `found.top()` is the one whose keys win.
pub fn find_config(global: &GlobalArgs, dir: Option<PathBuf>) -> Found {
    Discovery::from_env(global.config.clone(), dir).find()
}

/// Why a configuration gives no Host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigFailure {
    /// It cannot be read or is not valid: the line to print.
    Unusable(String),
    /// A key of a project file that is not trusted acts on the world: the refusal.
    Untrusted(String),
}

impl std::fmt::Display for ConfigFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigFailure::Unusable(line) | ConfigFailure::Untrusted(line) => f.write_str(line),
        }
    }
}

impl From<ConfigFailure> for String {
    fn from(failure: ConfigFailure) -> String {
        failure.to_string()
    }
}

/// Reads the configuration `found` names (nothing: the built-in defaults), trusted
/// as the command line says; the error is the one line to print (a refusal when
/// an acting key of a project file is not trusted).
pub fn load_path(global: &GlobalArgs, found: &Found) -> Result<Config, ConfigFailure> {
    for skipped in &found.skipped {
        eprintln!("promptforge: {skipped}");
    }
    if global.verbose {
        match found.top() {
            Some(path) => eprintln!("configuration: {}", path.display()),
            None => eprintln!("configuration: built-in defaults"),
        }
    }
    let policy = TrustPolicy::from_env(global.trust);
    let found = Found {
        skipped: Vec::new(),
        ..found.clone()
    };
    load_found(found, &policy)
        .map_err(|e| ConfigFailure::Unusable(e.to_string()))?
        .trusted_config()
        .map_err(ConfigFailure::Untrusted)
}

/// The configuration for a prompt in `dir` (or for no prompt: the working folder);
/// the error is the one line to print.
pub fn load_config(global: &GlobalArgs, dir: Option<PathBuf>) -> Result<Config, String> {
    Ok(load_path(global, &find_config(global, dir))?)
}

/// The Host of a configuration (API keys read from the environment).
pub fn host_of(config: Config) -> Result<Host, String> {
    promptforge_shipped::host(config).map_err(|e| e.to_string())
}
