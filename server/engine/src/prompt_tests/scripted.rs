//! A prompt test's Harness tools (`testing.md`): every registered Plugin still
//! activates for real, so the catalog, the slots and each tool's description,
//! parameters, trust and output kind are the Host's own; only the calls are
//! answered from the case's `tools:` script. A call to a tool the script does not
//! list fails the case with `unscripted call to {path}`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use promptforge_syntax::test_file::{Answer, ScriptedTool};
use tokio_util::sync::CancellationToken;

use super::messages;
use crate::harness::{Tool, ToolError, ToolOutput};
use crate::prompt_tests::hooked::CallHook;

/// The answers of one tool path and how many were given.
struct PathScript {
    answers: Vec<Answer>,
    next: usize,
}

/// Every scripted tool of one case, and the unscripted calls met.
pub struct ToolScripts {
    scripts: Mutex<HashMap<String, PathScript>>,
    unscripted: Mutex<Vec<String>>,
    /// Cancelled at the first unscripted call: the case has failed.
    stop: CancellationToken,
}

impl ToolScripts {
    /// The scripts of a case's `tools:`; `stop` is cancelled at an unscripted call.
    pub fn new(tools: &[ScriptedTool], stop: CancellationToken) -> Arc<Self> {
        let scripts = tools
            .iter()
            .map(|tool| {
                let script = PathScript {
                    answers: tool.answers.clone(),
                    next: 0,
                };
                (tool.path.value.clone(), script)
            })
            .collect();
        Arc::new(ToolScripts {
            scripts: Mutex::new(scripts),
            unscripted: Mutex::new(Vec::new()),
            stop,
        })
    }

    /// The next answer for `path` (the last one repeats), None when `path` has no script.
    fn answer(&self, path: &str) -> Option<Answer> {
        let mut scripts = self.scripts.lock().unwrap_or_else(PoisonError::into_inner);
        let script = scripts.get_mut(path)?;
        let at = script.next.min(script.answers.len().saturating_sub(1));
        script.next = script.next.saturating_add(1);
        // A path listed with no answers answers with empty output.
        Some(
            script
                .answers
                .get(at)
                .cloned()
                .unwrap_or(Answer::Output(String::new())),
        )
    }

    /// The tool paths called without a script, in call order, each once.
    pub fn unscripted(&self) -> Vec<String> {
        self.unscripted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn record_unscripted(&self, path: &str) {
        let mut unscripted = self
            .unscripted
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !unscripted.iter().any(|p| p == path) {
            unscripted.push(path.to_owned());
        }
        self.stop.cancel();
    }
}

#[async_trait]
impl CallHook for ToolScripts {
    async fn call(
        &self,
        tool: &Arc<dyn Tool>,
        _arguments: &str,
        _cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let path = tool.id().as_str();
        match self.answer(path) {
            Some(Answer::Output(text)) => Ok(ToolOutput {
                text,
                trust: tool.trust(),
                kind: tool.output_kind(),
            }),
            Some(Answer::Error(message)) => Err(ToolError::new(message)),
            None => {
                self.record_unscripted(path);
                Err(ToolError::new(messages::unscripted_call(path)))
            }
        }
    }
}
