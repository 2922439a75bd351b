//! The first-party `promptforge/web` Plugin (`host.md` §3): `fetch` always, and
//! `search` only when `[web] search_endpoint` is set. Both tools' output is untrusted,
//! and every failure is one short line (`messages`).
//!
//! `fetch`: http and https only; the host is resolved here and every address checked
//! against [`AddressPolicy`] before the request, which then goes to exactly those
//! addresses (no proxy, no second lookup). Redirects (301, 302, 303, 307, 308) are
//! followed by hand, at most [`fetch::MAX_REDIRECTS`], each target checked the same
//! way. A body past `max_fetch_bytes` is cut there and a note says so. One deadline
//! (30 s) covers the lookups, the redirects and the body; the run's cancel signal
//! ends the call at once. HTML becomes Markdown with absolute links; text, JSON, XML
//! and YAML pass as text; other media types fail.
//!
//! `search`: the endpoint is the Host's and trusted, so fetch's address policy does
//! not apply to it. A GET in the Brave Search API's shape (`q`, `count`, `freshness`,
//! `safesearch`, `country`, `search_lang`; domains as `site:`/`-site:` terms in `q`),
//! the key in `X-Subscription-Token`. When `search_key_env` names a variable that is
//! not set, search is still contributed and each call fails naming the variable.

pub mod address;
pub mod content;
pub mod fetch;
pub mod messages;
pub mod search;

use std::sync::Arc;

use async_trait::async_trait;

pub use address::{AddressPolicy, Blocked};
pub use fetch::{FetchSettings, FetchTool};
pub use search::{SearchSettings, SearchTool};

use promptforge_engine::harness::{Activation, ActivationError, Plugin, Tool};
use promptforge_engine::host::config::WebConfig;
use promptforge_engine::host::Extensions;

/// The Plugin id.
pub const PLUGIN_ID: &str = "promptforge/web";
/// The fetch tool's path.
pub const FETCH_TOOL: &str = "promptforge/web/fetch";
/// The search tool's path.
pub const SEARCH_TOOL: &str = "promptforge/web/search";

/// Registers `promptforge/web` on `extensions`: every Host built with them has it,
/// configured by its `[web]` table.
pub fn register(extensions: &mut Extensions) {
    extensions.register_plugins(PLUGIN_ID, |config, env| {
        vec![Arc::new(WebPlugin::from_config(&config.web, env)) as Arc<dyn Plugin>]
    });
}

/// The `promptforge/web` Plugin.
#[derive(Debug, Clone)]
pub struct WebPlugin {
    fetch: FetchSettings,
    search: Option<SearchSettings>,
}

impl WebPlugin {
    /// The Plugin from explicit settings; `search` None leaves search out.
    pub fn new(fetch: FetchSettings, search: Option<SearchSettings>) -> Self {
        WebPlugin { fetch, search }
    }

    /// The Plugin a `[web]` table configures, the search key read through `env`.
    /// A `search_key_env` that is not set still contributes search; its calls fail
    /// with a message naming the variable.
    pub fn from_config(config: &WebConfig, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let fetch = FetchSettings {
            policy: AddressPolicy::from_setting(config.allow_private_addresses),
            max_bytes: config
                .max_fetch_bytes
                .unwrap_or(fetch::DEFAULT_MAX_FETCH_BYTES),
            ..FetchSettings::default()
        };
        let search = config
            .search_endpoint
            .as_ref()
            .filter(|endpoint| !endpoint.trim().is_empty())
            .map(|endpoint| SearchSettings {
                endpoint: endpoint.trim().to_owned(),
                key: match &config.search_key_env {
                    Some(variable) => env(variable)
                        .filter(|key| !key.is_empty())
                        .map(Some)
                        .ok_or_else(|| variable.clone()),
                    None => Ok(None),
                },
                timeout: search::DEFAULT_SEARCH_TIMEOUT,
            });
        WebPlugin { fetch, search }
    }

    /// True when the Plugin contributes `search`.
    pub fn has_search(&self) -> bool {
        self.search.is_some()
    }
}

#[async_trait]
impl Plugin for WebPlugin {
    fn id(&self) -> &str {
        PLUGIN_ID
    }

    async fn activate(
        &self,
        _activation: Activation,
    ) -> Result<Vec<Arc<dyn Tool>>, ActivationError> {
        let mut tools: Vec<Arc<dyn Tool>> = vec![Arc::new(FetchTool::new(self.fetch.clone()))];
        if let Some(search) = &self.search {
            tools.push(Arc::new(SearchTool::new(search.clone())));
        }
        Ok(tools)
    }
}
