//! A configurable test tool and a Plugin with fixed tools, conflicts and
//! activation outcome.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::harness::{
    Activation, ActivationError, OutputKind, Plugin, Tool, ToolError, ToolId, ToolOutput, Trust,
};

/// A configurable tool: fixed output (or a sequence, the last repeating), trust,
/// kind, failure, delay, and a log of the arguments it received.
pub struct TestTool {
    id: ToolId,
    wire_name: Option<String>,
    description: String,
    parameters: serde_json::Value,
    outputs: Vec<Result<String, String>>,
    output_trust: Trust,
    declared_trust: Trust,
    kind: OutputKind,
    delay: Option<Duration>,
    ignores_cancel: bool,
    calls: AtomicUsize,
    logged: bool,
    /// The JSON arguments of every call, in order.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl TestTool {
    /// A trusted plain tool at `path` answering `output:{arguments}`; as a catalog
    /// entry it keeps the [`Tool`] defaults (declared untrusted, plain).
    pub fn new(path: &str) -> Self {
        TestTool {
            id: ToolId::new(path),
            wire_name: None,
            description: format!("catalog {path}"),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
            outputs: Vec::new(),
            output_trust: Trust::Trusted,
            declared_trust: Trust::Untrusted,
            kind: OutputKind::Plain,
            delay: None,
            ignores_cancel: false,
            calls: AtomicUsize::new(0),
            logged: true,
            log: Arc::new(Mutex::new(Vec::new())),
        }
    }
    /// Answers `text` (every call).
    pub fn output(mut self, text: &str) -> Self {
        self.outputs = vec![Ok(text.to_owned())];
        self
    }
    /// Answers in order; the last repeats.
    pub fn outputs(mut self, outputs: Vec<Result<&str, &str>>) -> Self {
        self.outputs = outputs
            .into_iter()
            .map(|o| o.map(str::to_owned).map_err(str::to_owned))
            .collect();
        self
    }
    /// Fails with `message` (every call).
    pub fn fails(mut self, message: &str) -> Self {
        self.outputs = vec![Err(message.to_owned())];
        self
    }
    /// Marks output untrusted.
    pub fn untrusted(mut self) -> Self {
        self.output_trust = Trust::Untrusted;
        self
    }
    /// Marks output structured.
    pub fn structured(mut self) -> Self {
        self.kind = OutputKind::Structured;
        self
    }
    /// The trust the tool declares in the catalog ([`Tool::trust`]).
    pub fn declares(mut self, trust: Trust) -> Self {
        self.declared_trust = trust;
        self
    }
    /// The name offered to the model, instead of the path's last segment.
    pub fn wire_name(mut self, name: &str) -> Self {
        self.wire_name = Some(name.to_owned());
        self
    }
    /// The parameter schema.
    pub fn schema(mut self, schema: serde_json::Value) -> Self {
        self.parameters = schema;
        self
    }
    /// The catalog description.
    pub fn description(mut self, text: &str) -> Self {
        self.description = text.to_owned();
        self
    }
    /// Waits before answering; the wait ends early on cancel unless `ignore_cancel`.
    pub fn delay(mut self, delay: Duration, ignore_cancel: bool) -> Self {
        self.delay = Some(delay);
        self.ignores_cancel = ignore_cancel;
        self
    }
    /// Keeps no log of the arguments (for benchmarks, where it would only grow).
    pub fn unlogged(mut self) -> Self {
        self.logged = false;
        self
    }
    /// The log shared with the test.
    pub fn log(&self) -> Arc<Mutex<Vec<String>>> {
        self.log.clone()
    }
    /// The tool as a catalog entry.
    pub fn shared(self) -> Arc<dyn Tool> {
        Arc::new(self)
    }
}

#[async_trait]
impl Tool for TestTool {
    fn id(&self) -> &ToolId {
        &self.id
    }
    fn wire_name(&self) -> &str {
        self.wire_name
            .as_deref()
            .unwrap_or_else(|| self.id.short_name())
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &serde_json::Value {
        &self.parameters
    }
    fn trust(&self) -> Trust {
        self.declared_trust
    }
    async fn call(
        &self,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        if self.logged {
            self.log.lock().unwrap().push(arguments.to_owned());
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(delay) = self.delay {
            if self.ignores_cancel {
                tokio::time::sleep(delay).await;
            } else {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = cancel.cancelled() => return Err(ToolError::new("stopped")),
                }
            }
        }
        let outcome = if self.outputs.is_empty() {
            Ok(format!("output:{arguments}"))
        } else {
            self.outputs[(n - 1).min(self.outputs.len() - 1)].clone()
        };
        match outcome {
            Ok(text) => Ok(ToolOutput {
                text,
                trust: self.output_trust,
                kind: self.kind,
            }),
            Err(message) => Err(ToolError::new(message)),
        }
    }
}

/// A Plugin with fixed tools, conflicts and activation outcome: each activation
/// answers the same tools, or fails with `failure`.
pub struct FixedPlugin {
    /// The Plugin id.
    pub id: String,
    /// The tools every activation contributes.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The Plugin ids it cannot be activated with.
    pub conflicts: Vec<String>,
    /// When set, activation fails with this reason.
    pub failure: Option<String>,
}

impl FixedPlugin {
    /// A Plugin `id` with a default [`TestTool`] at each of `paths`.
    pub fn new(id: &str, paths: &[&str]) -> Self {
        FixedPlugin::with_tools(id, paths.iter().map(|p| TestTool::new(p)).collect())
    }

    /// A Plugin `id` contributing `tools`.
    pub fn with_tools(id: &str, tools: Vec<TestTool>) -> Self {
        FixedPlugin {
            id: id.to_owned(),
            tools: tools.into_iter().map(TestTool::shared).collect(),
            conflicts: Vec::new(),
            failure: None,
        }
    }
}

#[async_trait]
impl Plugin for FixedPlugin {
    fn id(&self) -> &str {
        &self.id
    }
    fn conflicts(&self) -> Vec<String> {
        self.conflicts.clone()
    }
    async fn activate(
        &self,
        _activation: Activation,
    ) -> Result<Vec<Arc<dyn Tool>>, ActivationError> {
        if let Some(reason) = &self.failure {
            return Err(ActivationError::new(reason.clone()));
        }
        Ok(self.tools.clone())
    }
}
