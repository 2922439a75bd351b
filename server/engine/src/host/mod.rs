//! The Host (`host.md`): its configuration, its models, the Plugins it registers,
//! the services it offers them and the limits of a run.

pub mod config;
pub mod config_keys;
pub mod discovery;
pub mod extensions;
pub mod layers;
pub mod trust;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use config::{Config, ConfigError, Limits, ModelConfig, ProviderKind, TestConfig, TraceConfig};
pub use discovery::{Discovery, Found, Loaded};
pub use extensions::{Env, Extensions, PluginFactory, ProviderFactory};
pub use trust::{Part, TrustNeed, TrustPolicy};

use crate::harness::{Harness, Services};
use crate::input::InputBroker;
use crate::messages;
use crate::models::echo::EchoProvider;
use crate::models::script::ScriptProvider;
use crate::models::withheld::WithheldProvider;
use crate::models::{ModelProvider, ProviderSettings};

/// Seconds a model round may take when `timeout_s` is not set.
pub const DEFAULT_TIMEOUT_S: u64 = 120;
/// Retries when `retries` is not set.
pub const DEFAULT_RETRIES: u32 = 2;
/// The name the built-in offline model goes by.
pub const ECHO_MODEL: &str = "echo";

/// A Host model: a configured `[model.NAME]` ready to call, or why it cannot be.
#[derive(Clone)]
pub struct HostModel {
    /// The Host model's name (the `[model.NAME]` key, or `echo`).
    pub name: String,
    /// The provider, or why it cannot be used (a missing API key variable, ...).
    pub provider: Result<Arc<dyn ModelProvider>, String>,
    /// The provider's own model name.
    pub provider_model: String,
}

impl std::fmt::Debug for HostModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostModel")
            .field("name", &self.name)
            .field(
                "provider",
                &self.provider.as_ref().map(|p| p.kind().to_owned()),
            )
            .field("provider_model", &self.provider_model)
            .finish()
    }
}

/// Wraps a model's provider (see [`Host::tap_models`]).
pub type ModelTap = Arc<dyn Fn(Arc<dyn ModelProvider>) -> Arc<dyn ModelProvider> + Send + Sync>;

/// The Host a run happens in. Its configuration and models are shared with the
/// Hosts derived from it ([`Host::derive`]) until one of them changes them, so
/// a Host per case, or per model of `test --models`, costs little.
pub struct Host {
    config: Arc<Config>,
    harness: Harness,
    models: Arc<BTreeMap<String, HostModel>>,
    echo: HostModel,
    notice_given: AtomicBool,
    input: Option<Arc<dyn InputBroker>>,
    /// The model every label resolves to, when set (a prompt test's script).
    model_override: Option<HostModel>,
    /// The model every label of the prompt resolves to (`test --models`),
    /// when no override is set; the judge of `expect.judge` keeps its own.
    pinned: Option<HostModel>,
    /// Wraps each model as it is resolved ([`Host::tap_models`]).
    tap: Option<ModelTap>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("config", &self.config.path)
            .field("harness", &self.harness)
            .field("models", &self.models)
            .finish()
    }
}

impl Host {
    /// A Host from a configuration, reading API keys from the process environment,
    /// with no extensions (a model of an unregistered provider kind cannot be used;
    /// `promptforge_shipped::host` builds one with everything PromptForge ships).
    pub fn new(config: Config) -> Result<Host, ConfigError> {
        Host::with_env(config, &|name| std::env::var(name).ok())
    }

    /// A Host from a configuration, reading API keys through `env`, with no extensions.
    pub fn with_env(
        config: Config,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Host, ConfigError> {
        Host::with_extensions(config, env, &Extensions::new())
    }

    /// A Host from a configuration, reading API keys through `env` and building each
    /// Host model's provider with the factory `extensions` registers for its kind.
    pub fn with_extensions(
        config: Config,
        env: &dyn Fn(&str) -> Option<String>,
        extensions: &Extensions,
    ) -> Result<Host, ConfigError> {
        let mut models = BTreeMap::new();
        for (name, model) in &config.models {
            let built = build_model(&config, name, model, env, extensions)?;
            models.insert(name.clone(), built);
        }
        Ok(Host::assemble(config, models, env, extensions))
    }

    /// The Host of `config` with its built `models`, `echo`, and the Plugins
    /// `extensions` build for `config` with `env`.
    fn assemble(
        config: Config,
        models: BTreeMap<String, HostModel>,
        env: &dyn Fn(&str) -> Option<String>,
        extensions: &Extensions,
    ) -> Host {
        let mut harness = Harness::new();
        for plugin in extensions.build_plugins(&config, env) {
            harness.register(plugin);
        }
        Host {
            config: Arc::new(config),
            harness,
            models: Arc::new(models),
            echo: HostModel {
                name: ECHO_MODEL.to_owned(),
                provider: Ok(Arc::new(EchoProvider)),
                provider_model: ECHO_MODEL.to_owned(),
            },
            notice_given: AtomicBool::new(false),
            input: None,
            model_override: None,
            pinned: None,
            tap: None,
        }
    }

    /// The Host of the built-in defaults with no extensions: no models (every label
    /// uses `echo`) and no Plugins.
    pub fn offline() -> Host {
        Host::offline_with(&Extensions::new())
    }

    /// The Host of the built-in defaults: no models (every label uses `echo`), and
    /// the Plugins `extensions` build for the default configuration with no
    /// environment (`promptforge_shipped::offline`: `promptforge/web` with its
    /// defaults, fetch of public addresses and no search).
    pub fn offline_with(extensions: &Extensions) -> Host {
        Host::assemble(Config::default(), BTreeMap::new(), &|_| None, extensions)
    }

    /// A Host like this one (configuration, models, limits) with another Harness
    /// and operator: a prompt test's Host, whose Plugins answer from scripts.
    pub fn derive(&self, harness: Harness, input: Option<Arc<dyn InputBroker>>) -> Host {
        Host {
            config: self.config.clone(),
            harness,
            models: self.models.clone(),
            echo: self.echo.clone(),
            notice_given: AtomicBool::new(false),
            input,
            model_override: self.model_override.clone(),
            pinned: self.pinned.clone(),
            tap: self.tap.clone(),
        }
    }

    /// Every label resolves to `provider` from now on, whatever its `model:` says
    /// and with no offline notice: a prompt test's scripted model.
    pub fn override_models(&mut self, name: &str, provider: Arc<dyn ModelProvider>) {
        self.model_override = Some(HostModel {
            name: name.to_owned(),
            provider: Ok(provider),
            provider_model: name.to_owned(),
        });
    }

    /// Every label of the prompt resolves to the Host model `name` from now on,
    /// whatever its `model:` says (`promptforge test --models`): a
    /// `[model.NAME]` of the configuration, or the built-in `echo`. A judge
    /// resolves past it ([`Host::resolve_unpinned`]); an override
    /// ([`Host::override_models`]) wins over it. The error, for a name that is
    /// neither, names the configured models.
    pub fn pin_model(&mut self, name: &str) -> Result<(), String> {
        let model = match self.models.get(name) {
            Some(model) => model.clone(),
            None if name == ECHO_MODEL => self.echo.clone(),
            None => {
                let configured: Vec<String> = self.models.keys().cloned().collect();
                let config = self.config.path.as_ref().map(|p| p.display().to_string());
                return Err(messages::unknown_pinned_model(
                    name,
                    config.as_deref(),
                    &configured,
                ));
            }
        };
        self.pinned = Some(model);
        Ok(())
    }

    /// Wraps the provider of every Host model (the built-in `echo` included), e.g. to
    /// record what a live run's models replied.
    pub fn wrap_models(&mut self, wrap: &dyn Fn(Arc<dyn ModelProvider>) -> Arc<dyn ModelProvider>) {
        let wrap_one = |model: &mut HostModel| {
            if let Ok(provider) = &model.provider {
                model.provider = Ok(wrap(provider.clone()));
            }
        };
        Arc::make_mut(&mut self.models)
            .values_mut()
            .for_each(wrap_one);
        wrap_one(&mut self.echo);
        if let Some(model) = self.model_override.as_mut() {
            wrap_one(model);
        }
        if let Some(model) = self.pinned.as_mut() {
            wrap_one(model);
        }
    }

    /// Wraps each model this Host resolves from now on (the override, the pin,
    /// a configured model or `echo`) with `tap` as it is resolved, after any
    /// tap set before: unlike [`Host::wrap_models`], it costs nothing per
    /// model the Host has, only per model a prompt resolves.
    pub fn tap_models(&mut self, tap: ModelTap) {
        self.tap = Some(match self.tap.take() {
            None => tap,
            Some(before) => Arc::new(move |provider| tap(before(provider))),
        });
    }

    /// `model` with the tap applied to its provider.
    fn tapped(&self, mut model: HostModel) -> HostModel {
        if let (Some(tap), Ok(provider)) = (&self.tap, &model.provider) {
            model.provider = Ok(tap(provider.clone()));
        }
        model
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The run limits.
    pub fn limits(&self) -> Limits {
        self.config.limits
    }

    /// Replaces the run limits.
    pub fn set_limits(&mut self, limits: Limits) {
        Arc::make_mut(&mut self.config).limits = limits;
    }

    /// The Harness, to register Plugins.
    pub fn harness_mut(&mut self) -> &mut Harness {
        &mut self.harness
    }

    /// The Harness.
    pub fn harness(&self) -> &Harness {
        &self.harness
    }

    /// Sets the operator's input broker (None: no operator).
    pub fn set_input(&mut self, input: Option<Arc<dyn InputBroker>>) {
        self.input = input;
    }

    /// The operator's input broker, when there is an operator.
    pub fn input(&self) -> Option<Arc<dyn InputBroker>> {
        self.input.clone()
    }

    /// The services offered to Plugins.
    pub fn services(&self) -> Services {
        Services::new(self.input.clone())
    }

    /// Adds (or replaces) a Host model, e.g. a scripted model for tests.
    pub fn add_model(&mut self, name: &str, provider: Arc<dyn ModelProvider>) {
        Arc::make_mut(&mut self.models).insert(
            name.to_owned(),
            HostModel {
                name: name.to_owned(),
                provider: Ok(provider),
                provider_model: name.to_owned(),
            },
        );
    }

    /// Sets the Host's default model.
    pub fn set_default_model(&mut self, name: &str) {
        Arc::make_mut(&mut self.config).default_model = Some(name.to_owned());
    }

    /// True when no model is configured: every label uses the built-in `echo` model.
    pub fn is_offline_default(&self) -> bool {
        self.models.is_empty()
    }

    /// The Host model a label resolves to: its `model:`, else the default model; with
    /// no model configured at all, `echo`. The error is the Binding message.
    pub fn resolve(&self, label: &str, model: Option<&str>) -> Result<HostModel, String> {
        match &self.pinned {
            // A pinned model that cannot be used (its key is missing) says why.
            Some(pinned) if self.model_override.is_none() => match &pinned.provider {
                Ok(_) => Ok(self.tapped(pinned.clone())),
                Err(message) => Err(message.clone()),
            },
            _ => self.resolve_unpinned(label, model),
        }
    }

    /// The Host model a label resolves to as [`Host::resolve`] says, the pin of
    /// [`Host::pin_model`] aside: an `expect.judge`'s model, which grades every
    /// model of `test --models` alike.
    pub fn resolve_unpinned(&self, label: &str, model: Option<&str>) -> Result<HostModel, String> {
        if let Some(model) = &self.model_override {
            return Ok(self.tapped(model.clone()));
        }
        if self.is_offline_default() {
            return Ok(self.tapped(self.echo.clone()));
        }
        let name = match model.or(self.config.default_model.as_deref()) {
            Some(name) => name,
            None => return Err(messages::no_default_model(label)),
        };
        let found = self.models.get(name).ok_or_else(|| {
            let configured: Vec<String> = self.models.keys().cloned().collect();
            messages::unknown_host_model(label, name, &configured)
        })?;
        match &found.provider {
            Ok(_) => Ok(self.tapped(found.clone())),
            Err(message) => Err(message.clone()),
        }
    }

    /// The notice of the offline default, the first time it is asked for; then None.
    pub fn take_echo_notice(&self) -> Option<&'static str> {
        let offline = self.is_offline_default() && self.model_override.is_none();
        (offline && !self.notice_given.swap(true, Ordering::SeqCst))
            .then_some(messages::ECHO_NOTICE)
    }
}

fn build_model(
    config: &Config,
    name: &str,
    model: &ModelConfig,
    env: &dyn Fn(&str) -> Option<String>,
    extensions: &Extensions,
) -> Result<HostModel, ConfigError> {
    let provider_model = model.model.clone().unwrap_or_else(|| name.to_owned());
    if let Some(need) = config.withheld(&trust::Part::Model(name.to_owned())) {
        // Not built: its key is not read and its file not opened.
        return Ok(HostModel {
            name: name.to_owned(),
            provider: Ok(Arc::new(WithheldProvider::new(need.to_string()))),
            provider_model,
        });
    }
    let api_key = match &model.api_key_env {
        Some(variable) => match env(variable) {
            Some(key) => Ok(Some(key)),
            None => Err(messages::missing_api_key(name, variable)),
        },
        None => Ok(None),
    };
    let timeout = Duration::from_secs(model.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S));
    let retries = model.retries.unwrap_or(DEFAULT_RETRIES);
    let settings = |api_key| ProviderSettings {
        base_url: model.base_url.clone(),
        model: provider_model.clone(),
        api_key,
        timeout,
        retries,
        host_model: name.to_owned(),
    };
    let provider: Result<Arc<dyn ModelProvider>, String> = match model.provider {
        ProviderKind::Echo => Ok(Arc::new(EchoProvider)),
        ProviderKind::Script => {
            let path = model.path.clone().unwrap_or_default();
            let provider = ScriptProvider::from_file(&path).map_err(|e| ConfigError {
                path: config.path.clone().unwrap_or_default(),
                line: None,
                message: format!("model.{name}: {e}"),
            })?;
            Ok(Arc::new(provider))
        }
        kind @ (ProviderKind::Openai | ProviderKind::Anthropic) => api_key.and_then(|api_key| {
            extensions
                .build_provider(kind, settings(api_key))
                .ok_or_else(|| messages::provider_unavailable(name, kind.as_str()))
        }),
    };
    Ok(HostModel {
        name: name.to_owned(),
        provider,
        provider_model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    type Built = Arc<std::sync::Mutex<Vec<ProviderSettings>>>;

    /// A Host whose `openai` and `anthropic` factories record the settings they get
    /// and build `echo` (the HTTP providers live in `promptforge-providers`).
    fn host_with(text: &str, env: &[(&str, &str)], extensions: Extensions) -> Host {
        let config = Config::parse(text, Path::new("promptforge.toml")).unwrap();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Host::with_extensions(
            config,
            &|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            &extensions,
        )
        .unwrap()
    }

    fn recording() -> (Extensions, Built) {
        let built = Built::default();
        let mut extensions = Extensions::new();
        for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
            let built = built.clone();
            extensions.register_provider(kind, move |settings| {
                built.lock().unwrap().push(settings);
                Arc::new(EchoProvider) as Arc<dyn ModelProvider>
            });
        }
        (extensions, built)
    }

    fn host(text: &str, env: &[(&str, &str)]) -> Host {
        host_with(text, env, recording().0)
    }

    #[test]
    fn providers_are_built_by_the_factory_registered_for_their_kind() {
        let text = "[model.local]\nprovider = \"openai\"\nmodel = \"qwen\"\nbase_url = \"http://127.0.0.1:9/v1\"\ntimeout_s = 5\nretries = 0\n[model.claude]\nprovider = \"anthropic\"\napi_key_env = \"KEY_X\"\n";
        let (extensions, built) = recording();
        let host = host_with(text, &[("KEY_X", "sk")], extensions);
        let mut built = built.lock().unwrap().clone();
        built.sort_by(|a, b| a.host_model.cmp(&b.host_model));
        assert_eq!(
            built,
            [
                ProviderSettings {
                    base_url: None,
                    model: "claude".into(),
                    api_key: Some("sk".into()),
                    timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
                    retries: DEFAULT_RETRIES,
                    host_model: "claude".into(),
                },
                ProviderSettings {
                    base_url: Some("http://127.0.0.1:9/v1".into()),
                    model: "qwen".into(),
                    api_key: None,
                    timeout: Duration::from_secs(5),
                    retries: 0,
                    host_model: "local".into(),
                },
            ]
        );
        assert!(host.resolve("w", Some("local")).is_ok());

        let bare = host_with(text, &[("KEY_X", "sk")], Extensions::new());
        assert_eq!(
            bare.resolve("w", Some("local")).unwrap_err(),
            "the Host model \"local\" uses the provider \"openai\", which this build of PromptForge does not include"
        );
    }

    /// A provider that names its wrapping in its kind.
    struct Tagged(Arc<dyn ModelProvider>, &'static str);

    #[async_trait::async_trait]
    impl ModelProvider for Tagged {
        fn kind(&self) -> &str {
            self.1
        }

        async fn complete(
            &self,
            request: &crate::models::ModelRequest,
            cancel: &tokio_util::sync::CancellationToken,
        ) -> Result<crate::models::ModelReply, crate::models::ModelError> {
            self.0.complete(request, cancel).await
        }
    }

    #[test]
    fn a_derived_host_shares_its_models_and_taps_only_what_it_resolves() {
        let text = "[model.a]\nprovider = \"echo\"\n[model.b]\nprovider = \"echo\"\n";
        let base = host(text, &[]);
        let mut derived = base.derive(base.harness().clone(), None);
        assert!(Arc::ptr_eq(&base.models, &derived.models));
        assert!(Arc::ptr_eq(&base.config, &derived.config));
        derived.tap_models(Arc::new(|p| Arc::new(Tagged(p, "first")) as _));
        derived.tap_models(Arc::new(|p| Arc::new(Tagged(p, "second")) as _));
        let kind = |host: &Host, model: &str| {
            let model = host.resolve("w", Some(model)).unwrap();
            model.provider.unwrap().kind().to_owned()
        };
        // The later tap wraps the earlier one; the base Host is untouched.
        assert_eq!(kind(&derived, "a"), "second");
        assert_eq!(kind(&base, "a"), "echo");
        derived.pin_model("b").unwrap();
        assert_eq!(kind(&derived, "a"), "second");
        assert!(Arc::ptr_eq(&base.models, &derived.models));
    }

    #[test]
    fn with_no_configuration_every_label_uses_echo_with_one_notice() {
        let host = Host::offline();
        assert_eq!(host.resolve("writer", None).unwrap().name, "echo");
        assert_eq!(host.resolve("writer", Some("gpt-9")).unwrap().name, "echo");
        assert_eq!(host.take_echo_notice(), Some(messages::ECHO_NOTICE));
        assert_eq!(host.take_echo_notice(), None);
        assert_eq!(
            messages::ECHO_NOTICE,
            "no model is configured; every model label uses the built-in echo model (configure one in promptforge.toml: see the book, docs/src/configuration.md)"
        );
    }

    #[test]
    fn labels_resolve_through_the_configuration() {
        let host = host(
            "default_model = \"local\"\n[model.local]\nprovider = \"openai\"\nmodel = \"qwen\"\n[model.claude]\nprovider = \"anthropic\"\napi_key_env = \"KEY_X\"\n[model.quiet]\nprovider = \"echo\"\n",
            &[],
        );
        assert!(host.take_echo_notice().is_none());
        let local = host.resolve("writer", None).unwrap();
        assert_eq!(
            (local.name.as_str(), local.provider_model.as_str()),
            ("local", "qwen")
        );
        assert_eq!(
            host.resolve("w", Some("quiet")).unwrap().provider_model,
            "quiet"
        );
        assert_eq!(
            host.resolve("w", Some("claude")).unwrap_err(),
            "the Host model \"claude\" needs the environment variable KEY_X (its api_key_env), which is not set"
        );
        assert_eq!(
            host.resolve("w", Some("gpt")).unwrap_err(),
            "model label \"w\" uses the Host model \"gpt\", which the configuration does not define; configured models: [claude, local, quiet]"
        );
    }

    #[test]
    fn a_pinned_model_takes_every_label() {
        let text = "default_model = \"local\"\n[model.local]\nprovider = \"openai\"\n[model.quiet]\nprovider = \"echo\"\n[model.claude]\nprovider = \"anthropic\"\napi_key_env = \"KEY_X\"\n";
        let mut host = host(text, &[]);
        host.pin_model("quiet").unwrap();
        assert_eq!(host.resolve("w", None).unwrap().name, "quiet");
        assert_eq!(host.resolve("w", Some("local")).unwrap().name, "quiet");
        host.pin_model("echo").unwrap();
        assert_eq!(host.resolve("w", Some("local")).unwrap().name, "echo");
        host.pin_model("claude").unwrap();
        assert_eq!(
            host.resolve("w", None).unwrap_err(),
            "the Host model \"claude\" needs the environment variable KEY_X (its api_key_env), which is not set"
        );
        host.pin_model("quiet").unwrap();
        assert_eq!(host.resolve_unpinned("judge", None).unwrap().name, "local");
        assert_eq!(
            host.pin_model("gpt").unwrap_err(),
            "--models: \"gpt\" is not a Host model (promptforge.toml defines [claude, local, quiet]; echo is built in)"
        );
        assert_eq!(
            Host::offline().pin_model("gpt").unwrap_err(),
            "--models: \"gpt\" is not a Host model (no configuration was found; echo is built in)"
        );
    }

    #[test]
    fn api_keys_come_from_the_environment_and_a_default_is_needed() {
        let host = host(
            "[model.claude]\nprovider = \"anthropic\"\napi_key_env = \"KEY_X\"\n",
            &[("KEY_X", "sk")],
        );
        assert_eq!(host.resolve("w", Some("claude")).unwrap().name, "claude");
        assert_eq!(
            host.resolve("w", None).unwrap_err(),
            "model label \"w\" names no model and the configuration sets no default_model"
        );
    }
}
