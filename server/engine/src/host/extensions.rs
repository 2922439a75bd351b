//! What a Host is built with beyond the engine's own models: the model providers,
//! keyed by the provider kind a `[model.NAME]` table names (`host.md` §2), and the
//! Plugins its configuration asks for (`host.md` §3). The engine builds `echo` and
//! `script` itself and registers no Plugin; the HTTP providers, `promptforge/web`
//! and the MCP servers are registered by the crate that ships them
//! (`promptforge-shipped`), as a third party's would be.

use std::sync::Arc;

use crate::harness::Plugin;
use crate::host::config::{Config, ProviderKind};
use crate::models::{ModelProvider, ProviderSettings};

/// Builds a provider from one Host model's settings.
pub type ProviderFactory = Arc<dyn Fn(ProviderSettings) -> Arc<dyn ModelProvider> + Send + Sync>;

/// Reads the environment for a Host: an API key's or a Plugin's variable.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Builds the Plugins a configuration asks for, reading variables through the
/// Host's environment.
pub type PluginFactory = Arc<dyn Fn(&Config, Env<'_>) -> Vec<Arc<dyn Plugin>> + Send + Sync>;

/// The extensions a Host is built with: its provider factories and its Plugin
/// factories.
#[derive(Clone, Default)]
pub struct Extensions {
    providers: Vec<(ProviderKind, ProviderFactory)>,
    plugins: Vec<(&'static str, PluginFactory)>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> = self.providers.iter().map(|(k, _)| k.as_str()).collect();
        let plugins: Vec<&str> = self.plugins.iter().map(|(name, _)| *name).collect();
        f.debug_struct("Extensions")
            .field("providers", &kinds)
            .field("plugins", &plugins)
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

    /// Registers (or replaces) the Plugin factory `name`: each Host built with
    /// these extensions registers the Plugins it returns for the Host's
    /// configuration, factories in the order they were first registered.
    pub fn register_plugins(
        &mut self,
        name: &'static str,
        factory: impl Fn(&Config, Env<'_>) -> Vec<Arc<dyn Plugin>> + Send + Sync + 'static,
    ) -> &mut Self {
        let factory: PluginFactory = Arc::new(factory);
        match self.plugins.iter_mut().find(|(known, _)| *known == name) {
            Some(slot) => slot.1 = factory,
            None => self.plugins.push((name, factory)),
        }
        self
    }

    /// The Plugins every registered factory builds for `config`, in registration order.
    pub fn build_plugins(&self, config: &Config, env: Env<'_>) -> Vec<Arc<dyn Plugin>> {
        self.plugins
            .iter()
            .flat_map(|(_, factory)| factory(config, env))
            .collect()
    }
}
