//! What a run and a section hold about tools (Tools chapter): the prompt-wide
//! `tools.always` list, the run-wide call counts and tasks, and each section's
//! scope, counts and local tools. Plain state; `run::tools` works on it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use super::tasks::TaskRegistry;

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
    pub tasks: TaskRegistry,
    /// Script tool calls made so far (their call ids).
    script_calls: AtomicU64,
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

    /// The id of a new script tool call: `call-1`, `call-2`, ... over the run.
    pub fn next_call_id(&self) -> String {
        let n = self.script_calls.fetch_add(1, Ordering::SeqCst) + 1;
        format!("call-{n}")
    }

    /// Tool calls per alias over the whole run.
    pub fn run_counts(&self) -> BTreeMap<String, u64> {
        self.calls
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

/// A local tool as the model sees it; its handler lives in the section's VM.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSpec {
    /// The alias.
    pub alias: String,
    /// The description.
    pub description: String,
    /// The JSON Schema object built from the parameter table.
    pub schema: Json,
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
