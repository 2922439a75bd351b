//! The Hosts the test files' prompts run on, one per configuration file: each
//! with its live answers kept where `--cache` or the configuration's `[test]
//! cache` says (not with `--no-cache`), and, with `--models`, one Host per
//! model named, every label pinned to it (the pinned Hosts share the
//! configuration and the Host models, so each costs little).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use promptforge_engine::host::{Found, TestConfig};
use promptforge_engine::prompt_tests::answer_cache::AnswerCache;
use promptforge_engine::Host;

use crate::cli::{GlobalArgs, TestArgs};
use crate::host_setup::{self, ConfigFailure};

/// A live case's Host for one model of `--models`.
#[derive(Clone)]
pub struct PinnedHost {
    /// The Host model's name, as `--models` gives it.
    pub model: String,
    /// The Host, every label resolved to that model.
    pub host: Arc<Host>,
}

/// A prompt's Host, and its Hosts per model of `--models` (in their order).
#[derive(Clone)]
pub struct HostSet {
    /// The Host of the prompt's folder.
    pub host: Arc<Host>,
    /// One per `--models` name (empty without the flag).
    pub pinned: Vec<PinnedHost>,
}

/// Where live answers are kept, as the command line says.
enum CacheChoice {
    /// `--no-cache`: nowhere.
    Off,
    /// `--cache DIR`: there, whatever the configuration says.
    Dir(PathBuf),
    /// Where each configuration's `[test] cache` says, if anywhere.
    FromConfig,
}

/// The Hosts of the prompts' folders, one per configuration file.
pub struct Hosts<'a> {
    global: &'a GlobalArgs,
    cache: CacheChoice,
    /// `--cache-max-age`, over a configuration's `cache_max_age`.
    max_age: Option<u64>,
    /// `--models`.
    models: Vec<String>,
    hosts: HashMap<Found, Result<HostSet, String>>,
    /// The caches in use, by folder and maximum age.
    caches: HashMap<(PathBuf, Option<u64>), Arc<AnswerCache>>,
    /// True once a configuration was refused for want of trust (exit 2).
    pub refused: bool,
    /// The names of `--models` that some configuration does not define (exit 2,
    /// before anything runs), each said once.
    pub unknown_models: Vec<String>,
}

impl<'a> Hosts<'a> {
    /// No Host yet; `args` says how answers are kept and which models run.
    pub fn new(global: &'a GlobalArgs, args: &TestArgs) -> Self {
        let cache = match (&args.cache, args.no_cache) {
            (_, true) => CacheChoice::Off,
            (Some(dir), false) => CacheChoice::Dir(dir.clone()),
            (None, false) => CacheChoice::FromConfig,
        };
        Hosts {
            global,
            cache,
            max_age: args.cache_max_age,
            models: args.models.clone().unwrap_or_default(),
            hosts: HashMap::new(),
            caches: HashMap::new(),
            refused: false,
            unknown_models: Vec::new(),
        }
    }

    /// The Hosts a prompt at `prompt` runs on, as `run` finds its configuration
    /// (`--config` first); the error is the configuration's.
    pub fn host_for(&mut self, prompt: &Path) -> Result<HostSet, String> {
        let key = host_setup::find_config(self.global, Some(host_setup::prompt_dir(prompt)));
        if let Some(found) = self.hosts.get(&key) {
            return found.clone();
        }
        let set = match host_setup::load_path(self.global, &key) {
            Ok(config) => {
                let cache = self.cache_for(&config.test);
                host_setup::host_of(config).map(|mut host| {
                    if let Some(cache) = &cache {
                        host.wrap_models(&|provider| cache.wrap(provider));
                    }
                    self.pin(host)
                })
            }
            Err(ConfigFailure::Untrusted(refusal)) => {
                // Said once per configuration, as `run` says it; its files fail.
                eprintln!("promptforge: {refusal}");
                self.refused = true;
                Err(refusal)
            }
            Err(ConfigFailure::Unusable(line)) => Err(line),
        };
        self.hosts.insert(key, set.clone());
        set
    }

    /// The Host, and one per `--models` name pinned to it; a name the
    /// configuration does not define is noted in `unknown_models`.
    fn pin(&mut self, host: Host) -> HostSet {
        let mut pinned = Vec::new();
        for model in &self.models {
            let mut one = host.derive(host.harness().clone(), host.input());
            match one.pin_model(model) {
                Ok(()) => pinned.push(PinnedHost {
                    model: model.clone(),
                    host: Arc::new(one),
                }),
                Err(message) => {
                    if !self.unknown_models.contains(&message) {
                        self.unknown_models.push(message);
                    }
                }
            }
        }
        HostSet {
            host: Arc::new(host),
            pinned,
        }
    }

    /// The cache a configuration's Host keeps its answers in, if any.
    fn cache_for(&mut self, test: &TestConfig) -> Option<Arc<AnswerCache>> {
        let dir = match &self.cache {
            CacheChoice::Off => return None,
            CacheChoice::Dir(dir) => dir.clone(),
            CacheChoice::FromConfig => test.cache.clone()?,
        };
        let max_age = self.max_age.or(test.cache_max_age);
        let cache = self
            .caches
            .entry((dir.clone(), max_age))
            .or_insert_with(|| AnswerCache::new(dir, max_age.map(Duration::from_secs)));
        Some(cache.clone())
    }

    /// What the caches did, added up (answers reused, requests to a model); None
    /// when no cache was asked for.
    pub fn cache_counts(&self) -> Option<(u64, u64)> {
        let asked_for = matches!(self.cache, CacheChoice::Dir(_)) || !self.caches.is_empty();
        asked_for.then(|| {
            self.caches
                .values()
                .map(|c| c.counts())
                .fold((0, 0), |(r, a), (r2, a2)| (r + r2, a + a2))
        })
    }
}
