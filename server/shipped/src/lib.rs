//! The Host as PromptForge ships it: the engine's Host with every shipped extension
//! registered (the HTTP model providers of `promptforge-providers`). The front ends
//! (the CLI, the language server) build their Hosts here; the engine itself knows
//! only its traits and its own offline models.

use promptforge_engine::host::{Config, ConfigError, Extensions};
use promptforge_engine::Host;

/// Every extension PromptForge ships, registered.
pub fn extensions() -> Extensions {
    let mut extensions = Extensions::new();
    promptforge_providers::register(&mut extensions);
    extensions
}

/// A Host from a configuration with every shipped extension, reading API keys from
/// the process environment.
pub fn host(config: Config) -> Result<Host, ConfigError> {
    host_with_env(config, &|name| std::env::var(name).ok())
}

/// A Host from a configuration with every shipped extension, reading API keys
/// through `env`.
pub fn host_with_env(
    config: Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Host, ConfigError> {
    Host::with_extensions(config, env, &extensions())
}
