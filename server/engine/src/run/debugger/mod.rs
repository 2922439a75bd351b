//! A debugger attached to a run (the debugger issue): the breakpoints, the
//! chains as threads, and the pause of a chain that stops until the debugger
//! resumes it (with a step or without) or the run is cancelled. While a chain is
//! paused the front end asks it questions ([`Query`]) through its mailbox and the
//! paused chain answers them on its own thread, where its VM lives.
//!
//! The engine knows blocks and their lines; the adapter maps them to the prompt
//! file's lines and speaks the protocol. A run without a debugger never reaches
//! this module.

pub mod breakpoints;
mod threads;
pub mod vocabulary;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use breakpoints::LineBreakpoints;
pub use breakpoints::{
    function_name_problem, ExceptionFilters, HitCondition, LineBreakpoint, FUNCTION_NAMES,
};
use threads::{Order, PendingStep, Threads};
pub use vocabulary::{
    Answer, BlockLine, ChainKind, DebugListener, Frame, FramePlace, Query, RunValue, ScopeInfo,
    SectionView, Shown, StepKind, Stop, StopReason, Variable,
};

/// The answer to a question whose answering panicked.
const INTERNAL_ERROR: &str = "internal error while answering; the chain stays paused";

/// How often a paused chain looks at the run's cancel signal.
const CANCEL_CHECK: Duration = Duration::from_millis(10);

/// The debugger of one run. Shared by every VM of the run.
pub struct Debugger {
    lines: RwLock<LineBreakpoints>,
    functions: RwLock<Vec<String>>,
    any_functions: AtomicBool,
    uncaught: AtomicBool,
    raised: AtomicBool,
    threads: Mutex<Threads>,
    /// True while any line breakpoint is set or any step, pause or entry stop
    /// is pending: VMs watch their lines then.
    lines_wanted: AtomicBool,
    /// True while any step, pause or entry stop is pending.
    attention: AtomicBool,
    /// The block lines that hold a breakpoint, as bits (the last bit stands
    /// for every line past the others): the line hook's first, lock-free look.
    line_bits: LineBits,
    stop_on_entry: AtomicBool,
    listener: Arc<dyn DebugListener>,
}

impl std::fmt::Debug for Debugger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Debugger").finish_non_exhaustive()
    }
}

/// A chain's registration as a thread: ends it when dropped.
#[derive(Debug)]
pub struct DebugThread {
    debugger: Arc<Debugger>,
    id: i64,
}

impl DebugThread {
    /// The thread's id.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The run's debugger.
    pub fn debugger(&self) -> &Arc<Debugger> {
        &self.debugger
    }
}

impl Drop for DebugThread {
    fn drop(&mut self) {
        self.debugger.end_thread(self.id);
    }
}

impl Debugger {
    /// A debugger telling `listener`, with no breakpoints.
    pub fn new(listener: Arc<dyn DebugListener>) -> Self {
        Debugger {
            lines: RwLock::new(LineBreakpoints::default()),
            functions: RwLock::new(Vec::new()),
            any_functions: AtomicBool::new(false),
            uncaught: AtomicBool::new(false),
            raised: AtomicBool::new(false),
            threads: Mutex::new(Threads::default()),
            lines_wanted: AtomicBool::new(false),
            attention: AtomicBool::new(false),
            line_bits: LineBits::default(),
            stop_on_entry: AtomicBool::new(false),
            listener,
        }
    }

    fn threads(&self) -> MutexGuard<'_, Threads> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Recomputes the flags the hooks read without a lock.
    fn refresh(&self, threads: &Threads) {
        let attention = threads.any_pending();
        self.attention.store(attention, Ordering::SeqCst);
        let breakpoints = !self
            .lines
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty();
        self.lines_wanted
            .store(attention || breakpoints, Ordering::SeqCst);
    }

    // ---- the front end's side ----

    /// Replaces the line breakpoints. Every VM sees the change within a few
    /// thousand instructions, and at once when it is created or resumed.
    pub fn set_line_breakpoints(&self, breakpoints: impl IntoIterator<Item = LineBreakpoint>) {
        let breakpoints = LineBreakpoints::new(breakpoints);
        self.line_bits.set(breakpoints.lines());
        *self.lines.write().unwrap_or_else(PoisonError::into_inner) = breakpoints;
        let threads = self.threads();
        self.refresh(&threads);
    }

    /// Replaces the function breakpoints (names of [`FUNCTION_NAMES`] or
    /// `tool:ALIAS`).
    pub fn set_function_breakpoints(&self, names: Vec<String>) {
        self.any_functions
            .store(!names.is_empty(), Ordering::SeqCst);
        *self
            .functions
            .write()
            .unwrap_or_else(PoisonError::into_inner) = names;
    }

    /// Replaces the exception filters.
    pub fn set_exception_filters(&self, filters: ExceptionFilters) {
        self.uncaught.store(filters.uncaught, Ordering::SeqCst);
        self.raised.store(filters.raised, Ordering::SeqCst);
    }

    /// Makes the walk stop at the first line it runs.
    pub fn stop_on_entry(&self) {
        self.stop_on_entry.store(true, Ordering::SeqCst);
    }

    /// The live chains: id and name, in the order they started.
    pub fn thread_list(&self) -> Vec<(i64, String)> {
        self.threads()
            .entries
            .iter()
            .map(|(id, entry)| (*id, entry.name()))
            .collect()
    }

    /// Asks the chain `thread` and the chains it started to stop at their next
    /// line (or within a few thousand instructions); false for an unknown thread.
    pub fn pause(&self, thread: i64) -> bool {
        let mut threads = self.threads();
        if !threads.entries.contains_key(&thread) {
            return false;
        }
        for id in threads.with_descendants(thread) {
            if let Some(entry) = threads.entries.get_mut(&id) {
                if entry.mailbox.is_none() {
                    entry.wanted = Some(StopReason::Pause);
                }
            }
        }
        self.refresh(&threads);
        true
    }

    /// True while the chain `thread` is paused (only [`Debugger::resume`] and
    /// the run's cancel end that).
    pub fn is_paused(&self, thread: i64) -> bool {
        self.threads()
            .entries
            .get(&thread)
            .is_some_and(|entry| entry.mailbox.is_some())
    }

    /// Resumes the paused chain `thread`, with a step or without; false when it
    /// is not paused.
    pub fn resume(&self, thread: i64, step: Option<StepKind>) -> bool {
        let threads = self.threads();
        threads
            .entries
            .get(&thread)
            .and_then(|entry| entry.mailbox.as_ref())
            .is_some_and(|mailbox| mailbox.send(Order::Resume(step)).is_ok())
    }

    /// Asks the paused chain `thread` a question; None when it is not paused.
    /// The answer comes once the chain has answered the questions before it.
    pub fn ask(&self, thread: i64, query: Query) -> Option<oneshot::Receiver<Answer>> {
        let threads = self.threads();
        let mailbox = threads.entries.get(&thread)?.mailbox.as_ref()?;
        let (answer, answered) = oneshot::channel();
        mailbox.send(Order::Query(query, answer)).ok()?;
        Some(answered)
    }

    // ---- the engine's side ----

    /// Registers a chain as a thread, started by `parent` (its thread and its
    /// stack depth at the start) and running `section` (its heading as written).
    pub fn start_thread(
        self: &Arc<Self>,
        parent: Option<(i64, usize)>,
        kind: ChainKind,
        section: String,
    ) -> DebugThread {
        let walk = kind == ChainKind::Walk;
        let id = {
            let mut threads = self.threads();
            let id = threads.start(parent, kind, section);
            if walk && self.stop_on_entry.swap(false, Ordering::SeqCst) {
                if let Some(entry) = threads.entries.get_mut(&id) {
                    entry.wanted = Some(StopReason::Entry);
                }
            }
            self.refresh(&threads);
            id
        };
        self.listener.thread(id, true);
        DebugThread {
            debugger: self.clone(),
            id,
        }
    }

    fn end_thread(&self, id: i64) {
        {
            let mut threads = self.threads();
            threads.end(id);
            self.refresh(&threads);
        }
        self.listener.thread(id, false);
    }

    /// The chain `thread` now runs the section headed `section` (as written).
    pub fn enter_section(&self, thread: i64, section: String) {
        if let Some(entry) = self.threads().entries.get_mut(&thread) {
            entry.section = section;
        }
    }

    /// True while some VM may have to watch its lines (see the field).
    pub fn lines_wanted(&self) -> bool {
        self.lines_wanted.load(Ordering::Relaxed)
    }

    /// True when a VM whose code is `blocks` (its section's blocks and the
    /// shared library's) must watch its lines: a step or a pause is pending, or
    /// a breakpoint is in one of them. A breakpoint elsewhere costs it nothing.
    pub fn wants_lines(&self, blocks: &[usize]) -> bool {
        self.lines_wanted()
            && (self.attention()
                || self
                    .lines
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .in_any(blocks))
    }

    /// True while any step, pause or entry stop is pending.
    pub fn attention(&self) -> bool {
        self.attention.load(Ordering::Relaxed)
    }

    /// The stop wanted of `thread` at its next line (a pause, the entry).
    pub fn wanted(&self, thread: i64) -> Option<StopReason> {
        if !self.attention() {
            return None;
        }
        self.threads().entries.get(&thread)?.wanted
    }

    /// The step pending on `thread`: its kind and the depth it started at.
    pub fn step(&self, thread: i64) -> Option<(StepKind, usize)> {
        if !self.attention() {
            return None;
        }
        let step = self.threads().entries.get(&thread)?.step?;
        Some((step.kind, step.depth))
    }

    /// False when no breakpoint is on line `line` of any block (a lock-free
    /// look; true may still find none at the block's line).
    pub fn may_break_at(&self, line: u32) -> bool {
        self.line_bits.has(line)
    }

    /// The line breakpoint at `place`, if any.
    pub fn line_breakpoint(&self, place: BlockLine) -> Option<LineBreakpoint> {
        self.lines
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .at(place)
    }

    /// Counts a hit of the breakpoint at `place` and gives the count so far.
    pub fn count_hit(&self, place: BlockLine) -> u64 {
        self.lines
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .count_hit(place)
    }

    /// True when a function breakpoint names `name`.
    pub fn function_breakpoint(&self, name: &str) -> bool {
        self.any_functions.load(Ordering::Relaxed)
            && self
                .functions
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(|n| n == name)
    }

    /// The exception filters now.
    pub fn exception_filters(&self) -> ExceptionFilters {
        ExceptionFilters {
            uncaught: self.uncaught.load(Ordering::Relaxed),
            raised: self.raised.load(Ordering::Relaxed),
        }
    }

    /// A logpoint's message.
    pub fn output(&self, text: &str) {
        self.listener.output(text);
    }

    /// Pauses the chain `thread` (at stack depth `depth`): tells the listener,
    /// then answers the front end's questions with `serve` on this thread until
    /// it is resumed (true; a step asked then is pending from `depth`) or
    /// `cancel` fires (false). On a multi-thread runtime the worker's other tasks
    /// move to another thread meanwhile, so the other chains and the front end
    /// go on.
    pub fn stop(
        &self,
        thread: i64,
        depth: usize,
        stop: Stop,
        serve: &mut dyn FnMut(Query) -> Answer,
        cancel: &CancellationToken,
    ) -> bool {
        let (mailbox, orders) = mpsc::channel();
        {
            let mut threads = self.threads();
            // A step shared by several chains ends at the first of them to stop:
            // another one that saw it pending goes on.
            let step_ended = threads
                .entries
                .get(&thread)
                .is_some_and(|entry| entry.step.is_none());
            if stop.reason == StopReason::Step && step_ended {
                return true;
            }
            let ended = threads.entries.get_mut(&thread).and_then(|entry| {
                entry.wanted = None;
                entry.mailbox = Some(mailbox);
                entry.step.take().map(|step: PendingStep| step.token)
            });
            if let Some(token) = ended {
                threads.end_step(token);
            }
            self.refresh(&threads);
        }
        self.listener.stopped(thread, &stop);
        let wait = || loop {
            match orders.recv_timeout(CANCEL_CHECK) {
                Ok(Order::Query(query, answer)) => {
                    let answered = catch_unwind(AssertUnwindSafe(|| serve(query)))
                        .unwrap_or_else(|_| Answer::Failed(INTERNAL_ERROR.to_owned()));
                    let _ = answer.send(answered);
                }
                Ok(Order::Resume(step)) => return Some(step),
                Err(mpsc::RecvTimeoutError::Timeout) if !cancel.is_cancelled() => {}
                Err(_) => return None,
            }
        };
        let resumed = blocking(wait);
        let mut threads = self.threads();
        let token = threads.token();
        if let Some(entry) = threads.entries.get_mut(&thread) {
            entry.mailbox = None;
            if let Some(Some(kind)) = resumed {
                entry.step = Some(PendingStep { token, kind, depth });
            }
        }
        self.refresh(&threads);
        resumed.is_some()
    }
}

/// A set of line numbers as bits, read without a lock: lines past the last
/// bit share it.
struct LineBits([std::sync::atomic::AtomicU64; 64]);

impl Default for LineBits {
    fn default() -> Self {
        LineBits(std::array::from_fn(|_| {
            std::sync::atomic::AtomicU64::new(0)
        }))
    }
}

impl LineBits {
    const LAST: u32 = 64 * 64 - 1;

    fn slot(line: u32) -> (usize, u64) {
        let line = line.min(Self::LAST);
        ((line / 64) as usize, 1 << (line % 64))
    }

    fn set(&self, lines: impl IntoIterator<Item = u32>) {
        let mut words = [0u64; 64];
        for line in lines {
            let (word, bit) = Self::slot(line);
            if let Some(word) = words.get_mut(word) {
                *word |= bit;
            }
        }
        for (slot, word) in self.0.iter().zip(words) {
            slot.store(word, Ordering::SeqCst);
        }
    }

    fn has(&self, line: u32) -> bool {
        let (word, bit) = Self::slot(line);
        self.0
            .get(word)
            .is_some_and(|w| w.load(Ordering::Relaxed) & bit != 0)
    }
}

/// Runs `wait`, which blocks this thread: on a multi-thread runtime the
/// worker's other tasks move to another thread meanwhile.
fn blocking<T>(wait: impl FnOnce() -> T) -> T {
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_thread {
        tokio::task::block_in_place(wait)
    } else {
        wait()
    }
}
