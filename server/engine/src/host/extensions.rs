//! What a Host is built with beyond the engine's own models: the model providers,
//! keyed by the provider kind a `[model.NAME]` table names (`host.md` §2). The
//! engine builds `echo` and `script` itself; the HTTP providers are registered by
//! the crate that ships them (`promptforge-shipped`), as a third party's would be.

use std::sync::Arc;

use crate::host::config::ProviderKind;
use crate::models::{ModelProvider, ProviderSettings};

/// Builds a provider from one Host model's settings.
pub type ProviderFactory = Arc<dyn Fn(ProviderSettings) -> Arc<dyn ModelProvider> + Send + Sync>;

/// The extensions a Host is built with: for now, its provider factories.
#[derive(Clone, Default)]
pub struct Extensions {
    providers: Vec<(ProviderKind, ProviderFactory)>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> = self.providers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("Extensions")
            .field("providers", &kinds)
            .finish()
    }
}

impl Extensions {
    /// No extensions: only the engine's own `echo` and `script` models can be built.
    pub fn new() -> Self {
        Extensions::default()
    }

    /// Registers (or replaces) the factory of the provider `kind`.
    pub fn register_provider(
        &mut self,
        kind: ProviderKind,
        factory: impl Fn(ProviderSettings) -> Arc<dyn ModelProvider> + Send + Sync + 'static,
    ) -> &mut Self {
        self.providers.retain(|(known, _)| *known != kind);
        self.providers.push((kind, Arc::new(factory)));
        self
    }

    /// The provider `kind` built from `settings`, when a factory is registered for it.
    pub fn build_provider(
        &self,
        kind: ProviderKind,
        settings: ProviderSettings,
    ) -> Option<Arc<dyn ModelProvider>> {
        self.providers
            .iter()
            .find(|(known, _)| *known == kind)
            .map(|(_, factory)| factory(settings))
    }
}
