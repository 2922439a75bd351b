//! What the web Plugin's integration tests share.

use std::path::Path;

use promptforge_engine::host::{Config, Extensions};
use promptforge_engine::Host;

/// The Host of a configuration whose `[web]` table sets `allow_private_addresses`
/// (its web Plugin can then fetch from loopback, or not), with `promptforge/web`
/// registered as the shipped Host registers it.
pub fn web_config_host(allow_private_addresses: bool) -> Host {
    let text = format!("[web]\nallow_private_addresses = {allow_private_addresses}\n");
    let config = Config::parse(&text, Path::new("promptforge.toml")).expect("the configuration");
    let mut extensions = Extensions::new();
    promptforge_web::register(&mut extensions);
    Host::with_extensions(config, &|_| None, &extensions).expect("the Host")
}
