//! The VM's control block: the pending abort (a jump, a limit, a cancellation),
//! the instruction count, the host memory kept for the VM and whether `jump` works
//! now. Plain state: the section's context holds it, the sandbox's hooks and the
//! block runner read and write it.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use mlua::Lua;
use tokio_util::sync::CancellationToken;

use crate::error::EngineError;
use crate::host::Limits;
use crate::messages;
use crate::run::debugger::{Debugger, Frame, SectionView};
use crate::run::location::{Located, SectionPath};

/// The instructions one evaluation (a Debug Console expression, a breakpoint's
/// condition, a logpoint) may run.
pub const EVAL_INSTRUCTIONS: u64 = 10_000_000;

/// The message of an evaluation past its budget.
pub fn eval_budget_message() -> String {
    format!("the expression ran past its budget of {EVAL_INSTRUCTIONS} instructions")
}

/// What ends a block early and passes through every `pcall`.
#[derive(Debug, Clone)]
pub enum Abort {
    /// `jump(target)`.
    Jump(Located),
    /// A limit or a cancellation.
    Error(EngineError),
}

/// The VM's side of the run: the pending abort, the instruction count, whether jump works.
#[derive(Debug)]
pub struct VmControl {
    abort: Mutex<Option<Abort>>,
    pub(super) instructions: AtomicU64,
    /// True while the shared library replays (jump is refused then).
    pub shared_loading: AtomicBool,
    pub(super) cancel: CancellationToken,
    pub(super) limits: Limits,
    pub(super) last_line: Mutex<Option<(usize, u32)>>,
    /// The thread running the current block: only it yields to the scheduler.
    pub(super) driver_thread: AtomicUsize,
    /// Local tool handlers running now, nested ones included (jump is refused then).
    pub handlers: AtomicUsize,
    /// Bytes this VM made the host keep for it (message list texts), counted
    /// against the VM's memory ceiling.
    host_bytes: AtomicU64,
    /// The VM's side of the run's debugger, when one is attached.
    pub debug: Option<VmDebug>,
}

/// A VM's side of the run's debugger: its chain's thread, where it runs, and the
/// state the hooks keep while the debugger watches it.
pub struct VmDebug {
    /// The run's debugger.
    pub debugger: Arc<Debugger>,
    /// The thread of the VM's chain.
    pub thread: i64,
    /// The section the VM runs (empty: the H1 pass).
    pub section: SectionPath,
    /// Its heading as written (`## Go`; `# Title` for the H1 pass).
    pub heading: String,
    /// The blocks whose code the VM runs: its section's and the shared
    /// library's (a breakpoint in another block never concerns it).
    pub blocks: Vec<usize>,
    /// The frames below this VM's: its chain's callers, as they were when the
    /// chain started.
    pub caller_frames: Vec<Frame>,
    /// True when an error ending this chain is caught by a caller's `pcall` (or
    /// by the engine, for a task): it is not an uncaught error then.
    pub protected: bool,
    /// The Run scope of the VM's section.
    view: OnceLock<Weak<dyn SectionView>>,
    /// True while the debugger runs Lua in the paused VM (`evaluate`, a
    /// condition): the hooks neither stop nor charge the VM's budget then.
    pub evaluating: AtomicBool,
    /// Instructions the current evaluation ran.
    pub eval_instructions: AtomicU64,
    /// True when the VM's hook triggers watch lines.
    pub lines_on: AtomicBool,
    /// The frames of this VM's threads that wait for a local tool handler they
    /// called (the innermost wait last).
    pub waiting_frames: Mutex<Vec<Vec<Frame>>>,
}

impl std::fmt::Debug for VmDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VmDebug")
            .field("thread", &self.thread)
            .field("section", &self.section)
            .finish_non_exhaustive()
    }
}

impl VmDebug {
    /// The debugger's side of a VM of thread `thread`, running `section` (its
    /// path, heading as written and the blocks whose code it runs).
    pub fn new(
        debugger: Arc<Debugger>,
        thread: i64,
        (section, heading, blocks): (SectionPath, String, Vec<usize>),
        caller_frames: Vec<Frame>,
        protected: bool,
    ) -> Self {
        VmDebug {
            lines_on: AtomicBool::new(debugger.wants_lines(&blocks)),
            debugger,
            thread,
            section,
            heading,
            blocks,
            caller_frames,
            protected,
            view: OnceLock::new(),
            evaluating: AtomicBool::new(false),
            eval_instructions: AtomicU64::new(0),
            waiting_frames: Mutex::new(Vec::new()),
        }
    }

    /// Gives the VM its section's Run scope (once).
    pub fn attach_view(&self, view: Weak<dyn SectionView>) {
        let _ = self.view.set(view);
    }

    /// The section's Run scope, while the section lives.
    pub fn view(&self) -> Option<Arc<dyn SectionView>> {
        self.view.get().and_then(Weak::upgrade)
    }

    /// True while this VM runs the H1 pass.
    pub fn is_h1(&self) -> bool {
        self.section.is_empty()
    }

    /// True while the debugger runs Lua in this VM.
    pub fn is_evaluating(&self) -> bool {
        self.evaluating.load(Ordering::Relaxed)
    }

    /// The frames of the threads waiting in this VM, innermost first.
    pub fn waiting(&self) -> Vec<Frame> {
        let waits = self
            .waiting_frames
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        waits.iter().rev().flatten().cloned().collect()
    }
}

impl VmControl {
    /// The control of a VM of a chain with `cancel`.
    pub fn new(cancel: CancellationToken, limits: Limits) -> Self {
        VmControl {
            abort: Mutex::new(None),
            instructions: AtomicU64::new(0),
            shared_loading: AtomicBool::new(false),
            cancel,
            limits,
            last_line: Mutex::new(None),
            driver_thread: AtomicUsize::new(0),
            handlers: AtomicUsize::new(0),
            host_bytes: AtomicU64::new(0),
            debug: None,
        }
    }

    /// Attaches the debugger's side of the VM, when a debugger is attached.
    pub fn with_debug(mut self, debug: Option<VmDebug>) -> Self {
        self.debug = debug;
        self
    }

    /// Counts `bytes` of host memory kept for this VM (text appended to a message
    /// list); past the VM's memory ceiling that is the memory limit.
    pub fn charge_host_bytes(&self, bytes: usize) -> mlua::Result<()> {
        let ceiling = self.limits.lua_memory_mib.saturating_mul(1024 * 1024);
        let bytes = bytes as u64;
        let before = self.host_bytes.fetch_add(bytes, Ordering::SeqCst);
        if before.saturating_add(bytes) > ceiling {
            return Err(self.abort(Abort::Error(self.memory_error())));
        }
        Ok(())
    }

    /// Counts `n` instructions run outside the VM (Lua pattern matching) against
    /// the budget that applies now (see `charge`): past it that is the
    /// limit; a cancelled chain stops here too.
    pub fn charge_instructions(&self, n: u64) -> mlua::Result<()> {
        self.charge(n).map(|_| ())
    }

    /// Counts `n` instructions against the budget that applies now: the
    /// debugger's evaluation's own while one runs (`None` then), else the VM's
    /// (how many it used so far). Past either budget, or once the chain is
    /// cancelled, the VM aborts: the error passes through every `pcall`.
    pub(super) fn charge(&self, n: u64) -> mlua::Result<Option<u64>> {
        if self.cancel.is_cancelled() {
            return Err(self.abort(Abort::Error(EngineError::cancelled())));
        }
        if let Some(vm) = self.debug.as_ref().filter(|vm| vm.is_evaluating()) {
            let used = vm.eval_instructions.fetch_add(n, Ordering::Relaxed) + n;
            if used > EVAL_INSTRUCTIONS {
                return Err(self.abort(Abort::Error(EngineError::limit(eval_budget_message()))));
            }
            return Ok(None);
        }
        let budget = self.limits.lua_instructions;
        let used = self.instructions.fetch_add(n, Ordering::Relaxed) + n;
        if used > budget {
            return Err(self.abort(Abort::Error(EngineError::limit(
                messages::instruction_limit(budget),
            ))));
        }
        Ok(Some(used))
    }

    /// Runs `evaluation`, the debugger's Lua in this VM (`evaluate`, a
    /// breakpoint's condition, a logpoint's expression), on a budget of its own:
    /// an abort raised meanwhile (that budget, the memory ceiling, a
    /// cancellation) unwinds the evaluation through every `pcall` as a limit
    /// unwinds a block, and ends with it; the VM's own abort state is as before.
    pub fn evaluation<T>(&self, vm: &VmDebug, evaluation: impl FnOnce() -> T) -> T {
        let aborted_before = self.is_aborted();
        vm.eval_instructions.store(0, Ordering::SeqCst);
        vm.evaluating.store(true, Ordering::SeqCst);
        let result = evaluation();
        vm.evaluating.store(false, Ordering::SeqCst);
        if !aborted_before {
            self.take_abort();
        }
        result
    }

    /// The VM's memory ceiling in bytes.
    pub fn memory_ceiling(&self) -> u64 {
        self.limits.lua_memory_mib.saturating_mul(1024 * 1024)
    }

    /// Records an abort (the first one wins) and gives the error that unwinds Lua.
    pub fn abort(&self, abort: Abort) -> mlua::Error {
        let mut slot = self.abort.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(abort.clone());
        }
        match abort {
            Abort::Jump(_) => mlua::Error::RuntimeError("jump".to_owned()),
            Abort::Error(error) => mlua::Error::external(error),
        }
    }

    /// Raises an engine error value: limits and cancellations abort the VM.
    pub fn raise(&self, error: EngineError) -> mlua::Error {
        if error.kind.is_fatal() {
            self.abort(Abort::Error(error))
        } else {
            mlua::Error::external(error)
        }
    }

    /// True while a jump, a limit or a cancellation unwinds the VM.
    pub fn is_aborted(&self) -> bool {
        self.abort.lock().map(|a| a.is_some()).unwrap_or(true)
    }

    /// The abort unwinding the VM now, if any (it stays recorded).
    pub fn pending_abort(&self) -> Option<Abort> {
        self.abort.lock().ok().and_then(|a| a.clone())
    }

    pub(super) fn take_abort(&self) -> Option<Abort> {
        self.abort.lock().ok().and_then(|mut a| a.take())
    }

    /// The chain's cancel signal.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The memory limit's error value.
    pub fn memory_error(&self) -> EngineError {
        EngineError::limit(messages::memory_limit(self.limits.lua_memory_mib))
    }
}

/// Counts host memory kept for the VM `lua` (see [`VmControl::charge_host_bytes`]).
pub fn charge_host_bytes(lua: &Lua, bytes: usize) -> mlua::Result<()> {
    match lua.app_data_ref::<Arc<VmControl>>() {
        Some(control) => control.charge_host_bytes(bytes),
        None => Ok(()),
    }
}
