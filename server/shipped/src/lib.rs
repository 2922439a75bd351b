//! The Host as PromptForge ships it: the engine's Host with every shipped extension
//! registered (the HTTP model providers of `promptforge-providers`, the
//! `promptforge/web` Plugin of `promptforge-web`, and an MCP server Plugin of
//! `promptforge-mcp` for each `[plugin."ns/name"]` table). The front ends (the CLI,
//! the language server) build their Hosts here; the engine itself knows only its
//! traits and its own offline models.

use promptforge_engine::host::{Config, ConfigError, Extensions};
use promptforge_engine::Host;

/// Every extension PromptForge ships, registered.
pub fn extensions() -> Extensions {
    let mut extensions = Extensions::new();
    promptforge_providers::register(&mut extensions);
    promptforge_web::register(&mut extensions);
    promptforge_mcp::register(&mut extensions);
    extensions
}

/// The Host of the built-in defaults with every shipped extension: no models (every
/// label uses `echo`) and `promptforge/web` with its defaults (fetch of public
/// addresses, no search).
pub fn offline() -> Host {
    Host::offline_with(&extensions())
}

/// Ends every Plugin process still running (the MCP servers' process groups):
/// for a front end about to exit.
pub fn kill_plugin_processes() {
    promptforge_mcp::kill_all_servers();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offline_host_has_the_web_plugin_and_the_engine_alone_has_none() {
        assert_eq!(offline().harness().ids(), ["promptforge/web"]);
        assert!(Host::offline().harness().ids().is_empty());
    }

    #[test]
    fn a_configured_host_has_web_then_each_mcp_server_in_the_tables_order() {
        let text = "[plugin.\"acme/b\"]\ncommand = \"b\"\n[plugin.\"acme/a\"]\ncommand = \"a\"\n";
        let config = Config::parse(text, std::path::Path::new("promptforge.toml")).unwrap();
        let host = host_with_env(config, &|_| None).unwrap();
        assert_eq!(
            host.harness().ids(),
            ["promptforge/web", "acme/a", "acme/b"]
        );
    }
}
