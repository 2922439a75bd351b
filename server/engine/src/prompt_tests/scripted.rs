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

use crate::harness::{
    Activation, ActivationError, OutputKind, Plugin, Tool, ToolError, ToolId, ToolOutput, Trust,
};
use crate::messages;

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

/// A registered Plugin whose tools answer from the case's scripts.
pub struct ScriptedPlugin {
    inner: Arc<dyn Plugin>,
    scripts: Arc<ToolScripts>,
}

impl ScriptedPlugin {
    /// Wraps `inner`.
    pub fn wrap(inner: Arc<dyn Plugin>, scripts: Arc<ToolScripts>) -> Arc<dyn Plugin> {
        Arc::new(ScriptedPlugin { inner, scripts })
    }
}

#[async_trait]
impl Plugin for ScriptedPlugin {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn conflicts(&self) -> Vec<String> {
        self.inner.conflicts()
    }

    async fn activate(
        &self,
        activation: Activation,
    ) -> Result<Vec<Arc<dyn Tool>>, ActivationError> {
        let tools = self.inner.activate(activation).await?;
        Ok(tools
            .into_iter()
            .map(|inner| {
                Arc::new(AnsweredTool {
                    inner,
                    scripts: self.scripts.clone(),
                }) as Arc<dyn Tool>
            })
            .collect())
    }
}

/// A real tool's catalog entry whose calls answer from a script.
struct AnsweredTool {
    inner: Arc<dyn Tool>,
    scripts: Arc<ToolScripts>,
}

#[async_trait]
impl Tool for AnsweredTool {
    fn id(&self) -> &ToolId {
        self.inner.id()
    }

    fn wire_name(&self) -> &str {
        self.inner.wire_name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn parameters(&self) -> &serde_json::Value {
        self.inner.parameters()
    }

    fn trust(&self) -> Trust {
        self.inner.trust()
    }

    fn output_kind(&self) -> OutputKind {
        self.inner.output_kind()
    }

    async fn call(
        &self,
        _arguments: &str,
        _cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let path = self.inner.id().as_str();
        match self.scripts.answer(path) {
            Some(Answer::Output(text)) => Ok(ToolOutput {
                text,
                trust: self.inner.trust(),
                kind: self.inner.output_kind(),
            }),
            Some(Answer::Error(message)) => Err(ToolError::new(message)),
            None => {
                self.scripts.record_unscripted(path);
                Err(ToolError::new(messages::unscripted_call(path)))
            }
        }
    }
}
