//! The Host the prompt-test runner's tests run on: offline, with the real
//! `promptforge/web` registered as the shipped Host registers it.

use promptforge_engine::host::Extensions;
use promptforge_engine::Host;

/// The offline Host with `promptforge/web` registered.
pub fn web_host() -> Host {
    let mut extensions = Extensions::new();
    promptforge_web::register(&mut extensions);
    Host::offline_with(&extensions)
}
