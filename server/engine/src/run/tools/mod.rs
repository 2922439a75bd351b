//! The Tools chapter's run-time half: the run-wide `tools.always` list, each
//! section's scope, call counts and local tools, script and model tool calls, and
//! the Engine's task tools (`language.md` §8). The Lua table is `run::api::tools`.

pub mod calls;
pub mod dispatch;
pub mod local;
pub mod schema;
pub mod scope;
pub mod tasks;

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

pub use local::LocalSpec;

/// The four names of the tools the Engine itself offers the model. They take
/// precedence over any alias of the same name: a model call to one goes to the
/// Engine's tool, and a script `tools.call` to one fails with `unbound_tool`.
pub const ENGINE_TOOLS: [&str; 4] = ["task", "task_cancel", "task_status", "await_tasks"];

/// True for one of [`ENGINE_TOOLS`].
pub fn is_engine_tool(name: &str) -> bool {
    ENGINE_TOOLS.contains(&name)
}

/// The prompt-wide `tools.always` list: aliases in the order first recorded, and the
/// run-wide description overrides.
#[derive(Debug, Default, Clone)]
pub struct AlwaysList {
    /// The aliases, each once, in the order first recorded.
    pub aliases: Vec<String>,
    /// `tools.always(alias, description)` overrides.
    pub overrides: HashMap<String, String>,
}

/// What every section, chain and arm of a run shares about tools.
#[derive(Debug, Default)]
pub struct RunTools {
    always: Mutex<AlwaysList>,
    calls: Mutex<BTreeMap<String, u64>>,
    /// The tasks the model started (`language.md` §8).
    pub tasks: tasks::TaskRegistry,
}

impl RunTools {
    /// A copy of the `tools.always` list.
    pub fn always(&self) -> AlwaysList {
        self.always
            .lock()
            .map(|a| a.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Records `alias` once; a description replaces the run-wide override, and no
    /// description keeps the current one.
    pub fn record_always(&self, alias: &str, description: Option<String>) {
        let mut always = self.always.lock().unwrap_or_else(|p| p.into_inner());
        if !always.aliases.iter().any(|a| a == alias) {
            always.aliases.push(alias.to_owned());
        }
        if let Some(description) = description {
            always.overrides.insert(alias.to_owned(), description);
        }
    }

    /// Counts one call of `alias` for the whole run.
    pub fn count_run(&self, alias: &str) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        *calls.entry(alias.to_owned()).or_insert(0) += 1;
    }

    /// Tool calls per alias over the whole run.
    pub fn run_counts(&self) -> BTreeMap<String, u64> {
        self.calls
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

/// What one section holds about tools: its scope, its counts, its local tools.
#[derive(Debug, Default)]
pub struct SectionTools {
    /// The `tools.add` aliases, each once, in the order first added.
    pub added: Vec<String>,
    /// The `tools.add(alias, description)` overrides.
    pub overrides: HashMap<String, String>,
    /// The `tools.allow_tasks` list, when one is set.
    pub allow_tasks: Option<Vec<String>>,
    /// `tools.calls`: None until the section's first tool call.
    pub counts: Option<BTreeMap<String, u64>>,
    /// The local tools, in registration order (their handlers live in the VM).
    pub locals: Vec<LocalSpec>,
    /// Fires when the section ends: its running tasks are cancelled.
    pub task_scope: CancellationToken,
    /// The ids of the tasks this section started, in order.
    pub started: Vec<String>,
}

impl SectionTools {
    /// The local tool registered under `alias`.
    pub fn local(&self, alias: &str) -> Option<&LocalSpec> {
        self.locals.iter().find(|l| l.alias == alias)
    }
}
