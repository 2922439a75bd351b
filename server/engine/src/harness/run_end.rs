//! The end of a run, for what its Plugins started: a Plugin registers what must
//! be undone for the run (an MCP server's process group killed) with
//! [`RunEnd::on_end`] when it activates, and it is done when the run ends, however
//! it ends: finished, failed, refused by prepare after some Plugins activated,
//! cancelled, or its future dropped ([`crate::prepare`] and [`crate::run::run`]
//! hold an [`EndGuard`]). Not when the last reference to a tool goes: a task of
//! the run, or a runtime shut down in the background as a process exits, may hold
//! one long after the run, or until the process is gone.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Something to do at the end of a run.
type Action = Box<dyn FnOnce() + Send>;

/// The end of one run; its clones share it.
#[derive(Clone, Default)]
pub struct RunEnd(Arc<Mutex<Ending>>);

#[derive(Default)]
struct Ending {
    ended: bool,
    actions: Vec<Action>,
}

impl RunEnd {
    fn ending(&self) -> MutexGuard<'_, Ending> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Does `action` when the run ends, or at once when it has ended.
    pub fn on_end(&self, action: impl FnOnce() + Send + 'static) {
        let mut ending = self.ending();
        if ending.ended {
            drop(ending);
            action();
        } else {
            ending.actions.push(Box::new(action));
        }
    }

    /// Ends the run: does every action registered, the latest first; each once.
    pub fn end(&self) {
        let actions = {
            let mut ending = self.ending();
            ending.ended = true;
            std::mem::take(&mut ending.actions)
        };
        for action in actions.into_iter().rev() {
            action();
        }
    }

    /// True once the run has ended.
    pub fn has_ended(&self) -> bool {
        self.ending().ended
    }

    /// A guard that ends the run when it is dropped.
    pub fn guard(&self) -> EndGuard {
        EndGuard(Some(self.clone()))
    }
}

impl std::fmt::Debug for RunEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ending = self.ending();
        f.debug_struct("RunEnd")
            .field("ended", &ending.ended)
            .field("actions", &ending.actions.len())
            .finish()
    }
}

/// Ends a run when dropped, unless disarmed.
#[derive(Debug)]
pub struct EndGuard(Option<RunEnd>);

impl EndGuard {
    /// Drops the guard without ending the run (another guard ends it).
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(end) = self.0.take() {
            end.end();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run end, and the log its actions write to.
    fn logged() -> (RunEnd, Arc<Mutex<Vec<&'static str>>>) {
        (RunEnd::default(), Arc::default())
    }

    fn push(log: &Arc<Mutex<Vec<&'static str>>>, line: &'static str) -> impl FnOnce() + Send {
        let log = log.clone();
        move || log.lock().unwrap().push(line)
    }

    #[test]
    fn actions_are_done_once_at_the_end_latest_first() {
        let (end, log) = logged();
        end.on_end(push(&log, "first"));
        end.clone().on_end(push(&log, "second"));
        assert!(log.lock().unwrap().is_empty());
        end.end();
        end.end();
        assert_eq!(*log.lock().unwrap(), ["second", "first"]);
        // Registered after the end: done at once.
        end.on_end(push(&log, "late"));
        assert_eq!(*log.lock().unwrap(), ["second", "first", "late"]);
        assert!(end.has_ended());
    }

    #[test]
    fn a_guard_ends_the_run_when_dropped_unless_disarmed() {
        let (end, log) = logged();
        end.on_end(push(&log, "killed"));
        end.guard().disarm();
        assert!(!end.has_ended());
        drop(end.guard());
        assert_eq!(*log.lock().unwrap(), ["killed"]);
    }
}
