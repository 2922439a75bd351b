//! The state a run shares across its sections, chains and arms, and the state of
//! one chain and one section: the bottom layer of `run`, which names no module
//! above it (the globals a section VM gets come in as [`SectionGlobals`]).

pub mod tasks;
pub mod tools;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mlua::Lua;
use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use crate::error::{EngineError, ErrorKind};
use crate::host::{Host, Limits};
use crate::messages;
use crate::prepare::Prepared;
use crate::run::debugger;
use crate::run::identity::RunIdentity;
use crate::run::location::SectionPath;
use crate::run::vm::control::VmControl;
use crate::store::Store;
use crate::trace::{EventKind, OpenSpan, SpanId, SpanKind, TraceRecorder};
use tools::{RunTools, SectionTools};

/// What a run reports while it goes, for a front end's status line and log.
pub trait RunEvents: Send + Sync {
    /// A line of the run log (`log`, `print`, prepare's lines).
    fn log(&self, _line: &str) {}
    /// A Host notice (the offline default's).
    fn notice(&self, _text: &str) {}
    /// A section starts (`""` for the H1 pass).
    fn section(&self, _heading: &str) {}
    /// A model round starts (the run's round count so far, this one included).
    fn model_round(&self, _label: &str, _round: u64) {}
    /// A tool call starts: the alias called, the tool path of a bound tool (None
    /// for a local or an Engine tool) and the call's id (the model's call id, or
    /// `call-N` for a script's `tools.call`).
    fn tool_call(&self, _alias: &str, _path: Option<&str>, _call_id: &str) {}
    /// The tool call `call_id` ended: `ok` is false when the tool failed, its
    /// handler raised, its arguments broke the schema or the call was cancelled.
    fn tool_result(&self, _alias: &str, _call_id: &str, _ok: bool) {}
}

/// Events nobody listens to.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoEvents;

impl RunEvents for NoEvents {}

/// What every section, chain and arm of a run shares.
pub struct RunShared {
    /// The prepared prompt.
    pub prepared: Arc<Prepared>,
    /// The Host.
    pub host: Arc<Host>,
    /// The run's filesystem.
    pub store: Arc<Store>,
    /// The run's cancel signal.
    pub cancel: CancellationToken,
    /// The limits.
    pub limits: Limits,
    /// The nonce and run id.
    pub identity: RunIdentity,
    /// The seed, when the Host gave one.
    pub seed: Option<u64>,
    /// `models.default`.
    pub default_model: Mutex<Option<String>>,
    /// The run log.
    pub log: RunLog,
    /// Host notices given during the run.
    pub notices: Mutex<Vec<String>>,
    /// Model rounds used.
    pub rounds: AtomicU64,
    /// Sections entered so far, every walk counted (`[limits] walk_sections`).
    pub sections_entered: AtomicU64,
    /// The listener.
    pub events: Arc<dyn RunEvents>,
    /// The `tools.always` list, the run-wide call counts and the tasks.
    pub tools: RunTools,
    /// The debugger attached to the run, if any.
    pub debugger: Option<Arc<debugger::Debugger>>,
    /// The run's trace while it is recorded (None: not traced, at no cost).
    pub trace: Option<Arc<TraceRecorder>>,
    /// The run's own span in the trace.
    pub trace_root: Option<SpanId>,
    /// The token counts of the texts of the run's traced rounds so far.
    pub token_memo: crate::models::estimate::TokenMemo,
}

/// What the host keeps for any log line besides its bytes, counted against
/// `[limits] log_bytes` with them: the line's `String` in the run log and in
/// the outcome (24 bytes each on 64-bit), its allocation's rounding, and the
/// listener's share (a line printed, an editor's event). Without it a run of
/// empty lines would keep about 50 bytes per counted byte.
pub const LOG_LINE_OVERHEAD: u64 = 64;

/// The run log: its lines and their size, bounded by `[limits] log_bytes` (the
/// log lives in host memory, outside every VM's ceiling).
#[derive(Debug, Default)]
pub struct RunLog {
    lines: Mutex<Vec<String>>,
    bytes: AtomicU64,
}

impl RunLog {
    /// The lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl RunShared {
    /// Adds a line to the run log; past `[limits] log_bytes` the line is refused
    /// with a `limit` error (each line counts its bytes and
    /// [`LOG_LINE_OVERHEAD`]).
    /// The line is an event of span `span` in the run's trace.
    pub fn log_line(&self, span: Option<SpanId>, line: String) -> Result<(), EngineError> {
        let size = (line.len() as u64).saturating_add(LOG_LINE_OVERHEAD);
        let before = self.log.bytes.fetch_add(size, Ordering::SeqCst);
        if before.saturating_add(size) > self.limits.log_bytes {
            self.log.bytes.fetch_sub(size, Ordering::SeqCst);
            return Err(EngineError::limit(messages::log_bytes_limit(
                self.limits.log_bytes,
            )));
        }
        self.events.log(&line);
        self.trace_event(span, || EventKind::Log { line: line.clone() });
        if let Ok(mut lines) = self.log.lines.lock() {
            lines.push(line);
        }
        Ok(())
    }

    /// Opens a span under `parent` when the run is traced; `kind` is built only
    /// then, and not when the trace is full (the span is then dropped).
    pub fn open_span(
        &self,
        parent: Option<SpanId>,
        line: Option<u32>,
        kind: impl FnOnce() -> SpanKind,
    ) -> Option<OpenSpan> {
        self.open_span_of(parent, line, 0, kind)
    }

    /// [`RunShared::open_span`] for a span whose text is at least `at_least`
    /// bytes (a model round's, which holds the conversation so far): dropped
    /// without being built when it cannot fit.
    pub fn open_span_of(
        &self,
        parent: Option<SpanId>,
        line: Option<u32>,
        at_least: u64,
        kind: impl FnOnce() -> SpanKind,
    ) -> Option<OpenSpan> {
        let recorder = self.trace.as_ref()?;
        Some(recorder.open_with(parent, line, at_least, kind))
    }

    /// Adds an event to span `span` when the run is traced; `kind` is built only
    /// then.
    pub fn trace_event(&self, span: Option<SpanId>, kind: impl FnOnce() -> EventKind) {
        if let Some(recorder) = &self.trace {
            recorder.event(span, kind());
        }
    }

    /// Gives a Host notice.
    pub fn notice(&self, text: &str) {
        self.trace_event(self.trace_root, || EventKind::Notice {
            text: text.to_owned(),
        });
        self.events.notice(text);
        if let Ok(mut notices) = self.notices.lock() {
            notices.push(text.to_owned());
        }
    }

    /// Counts a model round and reports it; gives the run's count so far, this
    /// round included.
    pub fn count_round(&self, label: &str) -> u64 {
        let round = self.rounds.fetch_add(1, Ordering::SeqCst) + 1;
        self.events.model_round(label, round);
        round
    }
}

/// The store paths the arms of one fanout wrote (the write-write race).
#[derive(Debug, Default)]
pub struct RaceTracker {
    writes: Mutex<HashMap<String, usize>>,
}

impl RaceTracker {
    /// Records that arm `arm` wrote `path`; another arm's earlier write is a race.
    pub fn record(&self, path: &str, arm: usize) -> Result<(), EngineError> {
        let mut writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        match writes.get(path) {
            Some(&first) if first != arm => Err(EngineError::new(
                ErrorKind::Store,
                messages::fanout_race(first, arm, path),
            )),
            Some(_) => Ok(()),
            None => {
                writes.insert(path.to_owned(), arm);
                Ok(())
            }
        }
    }
}

/// One walk: the main walk, a `call` chain or a fanout arm.
#[derive(Debug)]
pub struct Chain {
    /// 0 for the main walk; each chain one deeper than its caller.
    pub depth: u32,
    /// `args`.
    pub args: String,
    /// `var`: the walk's JSON data.
    pub var: Mutex<Json>,
    /// In a fanout arm: its 1-based index and its member.
    pub arm: Option<(usize, Json)>,
    /// The fanouts this chain's writes count for, with this chain's arm in each.
    pub races: Vec<(Arc<RaceTracker>, usize)>,
    /// Fires when this chain must stop.
    pub cancel: CancellationToken,
    /// The chain's registration with the run's debugger, when one is attached.
    pub debug: Option<ChainDebug>,
    /// The span its sections open under: the chain's own span (the run's for the
    /// main walk), when the run is traced.
    pub trace_parent: Option<SpanId>,
    /// The chain's own span, ended when the chain is dropped.
    pub trace_span: Option<OpenSpan>,
}

/// A chain as the run's debugger knows it.
#[derive(Debug)]
pub struct ChainDebug {
    /// Its thread (ended when the chain is dropped).
    pub thread: debugger::DebugThread,
    /// The frames of its callers when it started, innermost first.
    pub caller_frames: Vec<debugger::Frame>,
    /// True when an error ending it is caught by a caller's `pcall` or by the
    /// engine (a task): not an uncaught error then.
    pub protected: bool,
}

impl Chain {
    /// The main walk of a run.
    pub fn main(args: String, cancel: CancellationToken) -> Self {
        Chain {
            depth: 0,
            args,
            var: Mutex::new(Json::Object(Default::default())),
            arm: None,
            races: Vec::new(),
            cancel,
            debug: None,
            trace_parent: None,
            trace_span: None,
        }
    }

    /// The main walk of a run, registered as the debugger's first thread.
    pub fn main_debugged(
        args: String,
        cancel: CancellationToken,
        debugger: Option<&Arc<debugger::Debugger>>,
    ) -> Self {
        let mut chain = Chain::main(args, cancel);
        chain.debug = debugger.map(|debugger| ChainDebug {
            thread: debugger.start_thread(None, debugger::ChainKind::Walk, String::new()),
            caller_frames: Vec::new(),
            protected: false,
        });
        chain
    }

    /// The current `var` data.
    pub fn var(&self) -> Json {
        self.var.lock().map(|v| v.clone()).unwrap_or(Json::Null)
    }

    /// Replaces the `var` data.
    pub fn set_var(&self, value: Json) {
        if let Ok(mut var) = self.var.lock() {
            *var = value;
        }
    }
}

/// The conversation a section's `models.loop` or `models.infer` works on now:
/// kept only while a debugger is attached, for its Run scope.
#[derive(Debug, Default, Clone)]
pub struct LiveConversation {
    /// The list the loop appends to.
    pub records: Arc<Mutex<Vec<crate::models::ChatMessage>>>,
    /// The records of the round in progress, not yet appended (the assistant's
    /// record with its tool calls, the tool records so far).
    pub pending: Vec<crate::models::ChatMessage>,
}

/// What a section selected and did so far.
#[derive(Debug, Default)]
pub struct SectionState {
    /// The conversation in progress (see [`LiveConversation`]).
    pub conversation: Option<LiveConversation>,
    /// `models.use`.
    pub model_use: Option<String>,
    /// True after the section's first tool or model call.
    pub first_call: bool,
    /// The section's scope, call counts and local tools.
    pub tools: SectionTools,
}

/// One section's run: its VM's context.
pub struct SectionCtx {
    /// The run.
    pub run: Arc<RunShared>,
    /// The chain it runs in.
    pub chain: Arc<Chain>,
    /// Where it is (empty: the H1 pass).
    pub path: SectionPath,
    /// The heading text (`""` in the H1 pass).
    pub heading: String,
    /// The VM's control.
    pub control: Arc<VmControl>,
    /// What it selected and did.
    pub state: Mutex<SectionState>,
    /// Its span in the run's trace, when the run is traced.
    pub trace_span: Option<SpanId>,
}

impl SectionCtx {
    /// Reads the section's state.
    pub fn with_state<T>(&self, f: impl FnOnce(&mut SectionState) -> T) -> T {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut state)
    }
}

/// The globals of a section's VM, which the walk installs in every fresh VM. The
/// Lua API layer (`run::api`) implements it and the entry hands it down, so the
/// walk and the mechanisms that start chains (`call`, `fanout`, the `task` tool)
/// never name the layer above them.
pub trait SectionGlobals: Send + Sync {
    /// Installs the globals a VM has before the shared library replays.
    fn install_base(&self, lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()>;
    /// Installs the alias and model globals, after the shared library replays (a
    /// declared alias or label wins over a shared global of the same name).
    fn install_handles(&self, lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()>;
}

/// The globals every section VM of a run gets (see [`SectionGlobals`]).
pub type Globals = &'static dyn SectionGlobals;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_arm_writing_a_path_races() {
        let tracker = RaceTracker::default();
        tracker.record("a.md", 1).unwrap();
        tracker.record("a.md", 1).unwrap();
        tracker.record("b.md", 2).unwrap();
        let error = tracker.record("a.md", 3).unwrap_err();
        assert_eq!(error.message, "fanout arms 1 and 3 both wrote \"a.md\"");
        assert_eq!(error.kind, ErrorKind::Store);
    }
}
