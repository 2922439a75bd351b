//! Prompt tests (`testing.md`): a case of a `*.test.yaml` file runs its prompt on
//! the engine as `promptforge run` would, prepared against the Host's real catalog,
//! with the model and the Harness tools answered from the case's scripts, and its
//! `expect:` checked against what happened. The CLI's `promptforge test` and the
//! language server both run cases through [`run_case`].
//!
//! One module per concept: [`hooked`] (the Host's tools with another call),
//! [`scripted`] (the calls answered from scripts),
//! [`expect`] (the expectations), [`failure`] (a failed expectation and its text),
//! [`selection`] (`--filter`, `--shard`, live cases), [`record`] (a live run recorded
//! as a case) and [`writer`] (a case written as YAML).

pub mod answer_cache;
pub mod expect;
pub mod failure;
pub mod hooked;
pub mod judge;
pub mod messages;
pub mod record;
pub mod repeats;
pub mod requests;
pub mod scripted;
pub mod selection;
pub mod writer;

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_syntax::test_file::Case;
use tokio_util::sync::CancellationToken;

pub use failure::{Failure, Shown};

use crate::host::Host;
use crate::input::ScriptedInput;
use crate::models::script::ScriptProvider;
use crate::run::{run_text, Outcome, RunEvents, RunOptions};
use crate::store::Store;
use hooked::{CallHook, HookedPlugin};
use scripted::ToolScripts;

/// The Host model name a scripted case's labels resolve to.
pub const SCRIPT_MODEL: &str = "script";

/// How one case ended.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// The case's name (empty for a case without one).
    pub name: String,
    /// Where the case is written in its test file.
    pub range: Range<usize>,
    /// Every failure, in the order of `testing.md`'s keys; empty when the case passed.
    pub failures: Vec<Failure>,
    /// The run's outcome.
    pub outcome: Outcome,
    /// The seed the run used (the first run's, for a repeated case).
    pub seed: u64,
    /// How long the case took.
    pub duration: Duration,
    /// The pass rate of a repeated live case (None: it ran once).
    pub runs: Option<repeats::PassRate>,
    /// The model answers a live case's runs got and how many a cache gave
    /// (`promptforge test --cache`): a verdict on reused answers says so.
    pub cache: answer_cache::CacheUse,
}

impl CaseReport {
    /// True when every expectation held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The seed of a case that sets none: fixed for its name (FNV-1a), so the case's
/// nonce and task ids are the same at every run.
pub fn default_seed(name: &str) -> u64 {
    fnv1a(name.as_bytes())
}

/// FNV-1a, 64 bits: a stable hash for seeds and shards (the same on every machine
/// and release, unlike the standard library's hasher).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// What a case run is given besides its case.
#[derive(Clone)]
pub struct CaseOptions {
    /// Cancels the case.
    pub cancel: CancellationToken,
    /// The run's events (a front end's progress).
    pub events: Arc<dyn RunEvents>,
    /// Traces every case's run (its [`Outcome::trace`]); a case whose `expect`
    /// checks its requests is traced anyway.
    pub trace: bool,
    /// Runs every live case this many times (`--repeat`), over its `repeat:`.
    pub repeat: Option<u64>,
    /// Runs the case under this debugger (`promptforge dap`'s launch of a case):
    /// once, whatever its `repeat:`.
    pub debugger: Option<Arc<crate::run::Debugger>>,
}

impl Default for CaseOptions {
    fn default() -> Self {
        CaseOptions {
            cancel: CancellationToken::new(),
            events: Arc::new(crate::run::NoEvents),
            trace: false,
            repeat: None,
            debugger: None,
        }
    }
}

/// Runs one case of a test file on the prompt text `prompt`, in a Host derived from
/// `base` (its configuration, models and Plugins): a scripted case gets the script
/// provider for every model label and its Plugins' tools answered from `tools:`; a
/// live case runs on the Host's real model and tools. Either way `input.ask` is
/// answered from `input:` (then `input_unavailable`) and the store starts with
/// `store:`. A live case with `repeat:` (or [`CaseOptions::repeat`]) runs that
/// many times ([`repeats`]).
pub async fn run_case(base: &Host, prompt: &str, case: &Case, options: CaseOptions) -> CaseReport {
    let name = case.name.as_ref().map_or("", |n| n.value.as_str());
    let seed = case.seed.unwrap_or_else(|| default_seed(name));
    match repeats::runs_of(case, &options) {
        Some(runs) if options.debugger.is_none() => {
            repeats::run_repeated(base, prompt, case, options, seed, runs).await
        }
        _ => run_once(base, prompt, case, options, seed).await,
    }
}

/// One run of `case` with `seed`.
pub(crate) async fn run_once(
    base: &Host,
    prompt: &str,
    case: &Case,
    options: CaseOptions,
    seed: u64,
) -> CaseReport {
    let started = Instant::now();
    let name = case.name.as_ref().map_or("", |n| n.value.as_str());
    let stop = options.cancel.child_token();
    let input = Some(Arc::new(ScriptedInput::new(case.input.clone())) as _);
    let cache_count = Arc::new(answer_cache::CacheCount::default());
    let (host, scripts, model) = if case.live {
        let mut host = base.derive(base.harness().clone(), input);
        let count = Arc::clone(&cache_count);
        host.tap_models(Arc::new(move |provider| count.wrap(provider)));
        (host, None, None)
    } else {
        let scripts = ToolScripts::new(&case.tools, stop.clone());
        let hook: Arc<dyn CallHook> = scripts.clone();
        let harness = base
            .harness()
            .wrapped(&move |plugin| HookedPlugin::wrap(plugin, hook.clone()));
        let mut host = base.derive(harness, input);
        let model = Arc::new(ScriptProvider::new(case.model.clone().unwrap_or_default()));
        host.override_models(SCRIPT_MODEL, model.clone());
        (host, Some(scripts), Some(model))
    };
    let files = case
        .store
        .iter()
        .map(|(path, text)| (path.value.clone(), text.clone()));
    let store = Arc::new(Store::with_files(files));
    let run_options = RunOptions {
        args: case.args.clone(),
        seed: Some(seed),
        cancel: stop,
        debugger: options.debugger.clone(),
        trace: options.trace || requests::needs_trace(&case.expect),
    };
    let host = Arc::new(host);
    let outcome = run_text(
        prompt,
        Arc::clone(&host),
        store.clone(),
        run_options,
        options.events,
    )
    .await;
    // The judge asks after the run (in a scripted case, the script's next round).
    let judged = match &case.expect.judge {
        Some(judge) if !options.cancel.is_cancelled() => {
            judge::grade(&host, judge, outcome.result.as_deref(), &options.cancel).await
        }
        _ => None,
    };
    let mut failures = verdict(
        case,
        &outcome,
        &store,
        scripts.as_deref(),
        model.as_deref(),
        &options.cancel,
    );
    // (A cancelled case, or a script that ran out, has said all there is to say.)
    let said = options.cancel.is_cancelled() || model.as_deref().is_some_and(|m| m.ran_out());
    if let (Some(failure), false) = (judged, said) {
        failures.push(failure);
    }
    CaseReport {
        name: name.to_owned(),
        range: case.range.clone(),
        failures,
        outcome,
        seed,
        duration: started.elapsed(),
        runs: None,
        cache: cache_count.get(),
    }
}

/// The case's failures: an unscripted call alone (the run was stopped there), else
/// the script's own verdicts and every expectation that does not hold.
fn verdict(
    case: &Case,
    outcome: &Outcome,
    store: &Store,
    scripts: Option<&ToolScripts>,
    model: Option<&ScriptProvider>,
    cancel: &CancellationToken,
) -> Vec<Failure> {
    let at = Some(case.range.clone());
    if let Some(scripts) = scripts {
        let unscripted = scripts.unscripted();
        if !unscripted.is_empty() {
            return unscripted
                .iter()
                .map(|path| Failure::new("tools", messages::unscripted_call(path)).at(at.clone()))
                .collect();
        }
    }
    if cancel.is_cancelled() {
        return vec![Failure::new("run", crate::messages::CANCELLED).at(at)];
    }
    let snapshot = store.snapshot().unwrap_or_else(|_| BTreeMap::new());
    let observed = expect::Observed {
        outcome,
        store: &snapshot,
        live: case.live,
        trace: outcome.trace.as_ref(),
    };
    let mut failures = expect::check(&case.expect, &observed);
    if let Some(model) = model {
        let scripted = case.model.as_ref().map_or(0, Vec::len);
        if model.ran_out() {
            // The run's Model error is this verdict, not a failure of its own.
            failures.retain(|f| f.what != "run");
            failures.insert(
                0,
                Failure::new("model", crate::messages::script_ended(scripted)).at(at.clone()),
            );
        } else if model.rounds_left() > 0 {
            failures.insert(
                0,
                Failure::new(
                    "model",
                    messages::scripted_rounds_unused(model.rounds_left()),
                )
                .at(at),
            );
        }
    }
    failures
}
