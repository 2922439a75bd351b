//! The run's tasks (`language.md` §8): each task's state and cancel signals, by
//! number. Plain state; the Engine's task tools (`run::tools::tasks`) start and
//! watch them, the walk cancels a section's tasks when it ends.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Where a task is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    /// Still running.
    Running,
    /// Finished, with the chain's result (None: no result).
    Done(Option<String>),
    /// Failed with a run error's message.
    Failed(String),
    /// Cancelled (by `task_cancel`, or because its section ended).
    Cancelled,
}

impl TaskState {
    /// The `task_status` form: `running`, `done: {result}` (an empty result when the
    /// chain had none), `failed: {message}` or `cancelled`.
    pub fn status(&self) -> String {
        match self {
            TaskState::Running => "running".to_owned(),
            TaskState::Done(result) => format!("done: {}", result.as_deref().unwrap_or("")),
            TaskState::Failed(message) => format!("failed: {message}"),
            TaskState::Cancelled => "cancelled".to_owned(),
        }
    }
}

/// One task: its state and its two signals.
#[derive(Debug, Clone)]
pub struct TaskEntry {
    /// Where the task is.
    pub state: Arc<Mutex<TaskState>>,
    /// Stops the task's chain.
    pub cancel: CancellationToken,
    /// Fires once the task has its end state.
    pub finished: CancellationToken,
}

impl TaskEntry {
    /// The task's state now.
    pub fn state(&self) -> TaskState {
        self.state
            .lock()
            .map(|s| s.clone())
            .unwrap_or(TaskState::Cancelled)
    }
}

/// Sets a task's end state unless it already has one.
pub fn finish(state: &Mutex<TaskState>, end: TaskState) {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    if *state == TaskState::Running {
        *state = end;
    }
}

/// The run's tasks, by number (`t1` is 1).
#[derive(Debug, Default)]
pub struct TaskRegistry {
    next: AtomicU64,
    tasks: Mutex<BTreeMap<u64, TaskEntry>>,
}

impl TaskRegistry {
    /// Adds a task and gives its id (`t1`, `t2`, ...).
    pub fn add(&self, entry: TaskEntry) -> String {
        let number = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        if let Ok(mut tasks) = self.tasks.lock() {
            tasks.insert(number, entry);
        }
        format!("t{number}")
    }

    /// The task `id`, when it exists.
    pub fn get(&self, id: &str) -> Option<TaskEntry> {
        let number: u64 = id.strip_prefix('t')?.parse().ok()?;
        self.tasks.lock().ok()?.get(&number).cloned()
    }

    /// The `task_status` form of task `id`, when it exists.
    pub fn status(&self, id: &str) -> Option<String> {
        self.get(id).map(|t| t.state().status())
    }

    /// Marks task `id` cancelled, unless it already ended.
    pub fn mark_cancelled(&self, id: &str) {
        if let Some(task) = self.get(id) {
            finish(&task.state, TaskState::Cancelled);
        }
    }
}
