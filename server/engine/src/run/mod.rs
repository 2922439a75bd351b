//! The run (`language.md` §2–§7): `parse -> prepare -> H1 pass -> walk -> result`.

pub mod api;
pub mod chain_var;
pub mod context;
pub mod control;
pub mod conversation;
pub mod debugger;
pub mod identity;
pub mod json;
pub mod location;
pub mod tools;
pub mod vm;
pub mod walk;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

pub use context::{NoEvents, RunEvents};
pub use debugger::{
    Answer, BlockLine, ChainKind, DebugListener, Debugger, ExceptionFilters, Frame, FramePlace,
    HitCondition, LineBreakpoint, Query, ScopeInfo, StepKind, Stop, StopReason, Variable,
};

use crate::error::RunError;
use crate::host::Host;
use crate::prepare::{prepare, Prepared};
use crate::run::context::{Chain, RunShared};
use crate::run::identity::RunIdentity;
use crate::store::{Store, StoreLimits};
use crate::trace::{OpenSpan, SpanKind, Trace, TraceRecorder};

/// What a run is given besides the prompt.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The argument string (`args`).
    pub args: String,
    /// The seed: fixes the untrusted nonce and the run id.
    pub seed: Option<u64>,
    /// Cancels the run.
    pub cancel: CancellationToken,
    /// A debugger to attach (`promptforge dap`); None costs nothing.
    pub debugger: Option<Arc<Debugger>>,
    /// Records the run's trace ([`Outcome::trace`]); off costs nothing.
    pub trace: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The result (None: no result).
    pub result: Option<String>,
    /// The run error, when the run failed.
    pub error: Option<RunError>,
    /// Tool calls per alias over the whole run.
    pub calls: BTreeMap<String, u64>,
    /// The run log.
    pub log: Vec<String>,
    /// Host notices (the offline default's).
    pub notices: Vec<String>,
    /// Model rounds used.
    pub rounds: u64,
    /// How long the run took.
    pub duration: Duration,
    /// The run's trace, when [`RunOptions::trace`] asked for one.
    pub trace: Option<Trace>,
}

impl Outcome {
    fn refused(error: RunError, log: Vec<String>, started: Instant) -> Self {
        Outcome {
            result: None,
            error: Some(error),
            calls: BTreeMap::new(),
            log,
            notices: Vec::new(),
            rounds: 0,
            duration: started.elapsed(),
            trace: None,
        }
    }
}

/// Runs a prepared prompt; when it returns, the run has ended
/// ([`crate::harness::RunEnd`]).
pub async fn run(
    prepared: Arc<Prepared>,
    host: Arc<Host>,
    store: Arc<Store>,
    options: RunOptions,
    events: Arc<dyn RunEvents>,
) -> Outcome {
    // However the run ends (or if its future is dropped), its Plugins' processes
    // end with it, not when the last reference to one of their tools goes.
    let _end = prepared.end.guard();
    let started = Instant::now();
    let identity = match RunIdentity::new(options.seed) {
        Ok(identity) => identity,
        Err(message) => return Outcome::refused(RunError::internal(message), Vec::new(), started),
    };
    let limits = host.limits();
    let recorder = options
        .trace
        .then(|| TraceRecorder::new(&identity.run_id, limits.trace_bytes));
    let title = || SpanKind::Run {
        title: (prepared.document.title.as_ref()).map_or_else(String::new, |t| t.text.to_string()),
        result: None,
    };
    let run_span = recorder.as_ref().map(|r| r.open(None, None, title()));
    let shared = Arc::new(RunShared {
        limits,
        prepared,
        host,
        store,
        cancel: options.cancel.clone(),
        identity,
        seed: options.seed,
        default_model: Mutex::new(None),
        log: Default::default(),
        notices: Mutex::new(Vec::new()),
        rounds: AtomicU64::new(0),
        sections_entered: AtomicU64::new(0),
        events,
        tools: Default::default(),
        debugger: options.debugger.clone(),
        trace: recorder.clone(),
        trace_root: run_span.as_ref().and_then(OpenSpan::id),
        token_memo: Default::default(),
    });
    shared.store.set_limits(StoreLimits {
        bytes: shared.limits.store_bytes,
        files: shared.limits.store_files,
    });
    for line in shared.prepared.log.clone() {
        // Prepare's lines are few and short; past the limit they are dropped.
        let _ = shared.log_line(shared.trace_root, line);
    }
    let mut chain = Chain::main_debugged(
        options.args,
        options.cancel.child_token(),
        options.debugger.as_ref(),
    );
    chain.trace_parent = shared.trace_root;
    let chain = Arc::new(chain);
    let outcome = if options.cancel.is_cancelled() {
        Err(RunError::cancelled())
    } else {
        walk::run_main(shared.clone(), chain, api::GLOBALS).await
    };
    let outcome = match outcome {
        Err(_) if options.cancel.is_cancelled() => Err(RunError::cancelled()),
        other => other,
    };
    let (result, error) = match outcome {
        Ok(result) => (result, None),
        Err(error) => (None, Some(error)),
    };
    if let Some(span) = run_span {
        let failure = error.as_ref().map(|e| e.message.clone());
        span.finish(failure, |kind| {
            if let SpanKind::Run { result: slot, .. } = kind {
                slot.clone_from(&result);
            }
        });
    }
    Outcome {
        result,
        error,
        calls: shared.tools.run_counts(),
        log: shared.log.lines(),
        notices: shared.notices.lock().map(|n| n.clone()).unwrap_or_default(),
        rounds: shared.rounds.load(Ordering::SeqCst),
        duration: started.elapsed(),
        trace: recorder.map(|r| r.snapshot()),
    }
}

/// Parses, prepares and runs a prompt's text; a parse or prepare refusal is the
/// outcome's error.
pub async fn run_text(
    text: &str,
    host: Arc<Host>,
    store: Arc<Store>,
    options: RunOptions,
    events: Arc<dyn RunEvents>,
) -> Outcome {
    let started = Instant::now();
    let analysis = promptforge_luacheck::parse(text);
    match prepare(
        text,
        &analysis,
        &host,
        store.clone(),
        options.cancel.clone(),
    )
    .await
    {
        Ok(prepared) => run(Arc::new(prepared), host, store, options, events).await,
        Err(error) => Outcome::refused(error, Vec::new(), started),
    }
}
