//! A debugger attached to a run (the debugger issue): the breakpoints, and the
//! pause of a chain that reaches one until the debugger resumes it or the run is
//! cancelled. The engine knows blocks and their lines; the adapter maps them to
//! the prompt file's lines and speaks the protocol.

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// A place in a prompt's Lua: the block (its index in `Document::lua_blocks`)
/// and the 1-based line in the block's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockLine {
    /// The block's index in `Document::lua_blocks`.
    pub block: usize,
    /// The 1-based line in the block's code.
    pub line: u32,
}

/// Where a chain stopped: its Lua frames, innermost first, and the heading of
/// the section it runs (`""` for the H1 pass).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The Lua frames in the prompt's blocks, innermost first.
    pub frames: Vec<BlockLine>,
    /// The heading of the section the chain runs.
    pub section: String,
}

/// What the debugger's front end hears.
pub trait DebugListener: Send + Sync {
    /// A chain stopped at a breakpoint.
    fn stopped(&self, stop: Stop);
}

/// How often a paused chain looks at the run's cancel signal.
const CANCEL_CHECK: Duration = Duration::from_millis(10);

/// The debugger of one run. Shared by every VM of the run.
pub struct Debugger {
    breakpoints: RwLock<HashSet<BlockLine>>,
    listener: Arc<dyn DebugListener>,
    /// Counts the resumes; a paused chain waits for it to change.
    resumes: Mutex<u64>,
    resumed: Condvar,
}

impl std::fmt::Debug for Debugger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Debugger").finish_non_exhaustive()
    }
}

impl Debugger {
    /// A debugger telling `listener`, with no breakpoints.
    pub fn new(listener: Arc<dyn DebugListener>) -> Self {
        Debugger {
            breakpoints: RwLock::new(HashSet::new()),
            listener,
            resumes: Mutex::new(0),
            resumed: Condvar::new(),
        }
    }

    /// Replaces the breakpoints. A VM created after a change sees it; so does a
    /// running VM that had breakpoints when it was created.
    pub fn set_breakpoints(&self, places: impl IntoIterator<Item = BlockLine>) {
        let mut breakpoints = self
            .breakpoints
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *breakpoints = places.into_iter().collect();
    }

    /// True when any breakpoint is set (a VM then watches its lines).
    pub fn has_breakpoints(&self) -> bool {
        !self
            .breakpoints
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// True when `place` holds a breakpoint.
    pub fn is_breakpoint(&self, place: BlockLine) -> bool {
        self.breakpoints
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&place)
    }

    /// Resumes every paused chain.
    pub fn resume(&self) {
        let mut resumes = self.resumes.lock().unwrap_or_else(PoisonError::into_inner);
        *resumes = resumes.wrapping_add(1);
        self.resumed.notify_all();
    }

    /// Pauses the calling chain at `stop`: tells the listener, then blocks this
    /// thread until [`Debugger::resume`] (true) or `cancel` fires (false). On a
    /// multi-thread runtime the worker's other tasks move to another thread
    /// meanwhile, so the other chains and the front end go on.
    pub fn pause(&self, stop: Stop, cancel: &CancellationToken) -> bool {
        let start = *self.resumes.lock().unwrap_or_else(PoisonError::into_inner);
        self.listener.stopped(stop);
        let wait = || {
            let mut resumes = self.resumes.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if *resumes != start {
                    return true;
                }
                if cancel.is_cancelled() {
                    return false;
                }
                resumes = match self.resumed.wait_timeout(resumes, CANCEL_CHECK) {
                    Ok((guard, _)) => guard,
                    Err(poisoned) => poisoned.into_inner().0,
                };
            }
        };
        let multi_thread = tokio::runtime::Handle::try_current().is_ok_and(|handle| {
            handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        });
        if multi_thread {
            tokio::task::block_in_place(wait)
        } else {
            wait()
        }
    }
}
