//! A registered Plugin whose tools' calls go through a hook: the Plugin still
//! activates for real and every tool keeps its id, description, parameters,
//! trust and output kind; only what a call does is the hook's (a prompt test
//! answers from its script, a recorded run calls the real tool and keeps the
//! answer).

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::harness::{
    Activation, ActivationError, OutputKind, Plugin, Tool, ToolError, ToolId, ToolOutput, Trust,
};

/// What a hooked tool's call does.
#[async_trait]
pub trait CallHook: Send + Sync {
    /// Answers a call of `tool` (the real tool) on `arguments`.
    async fn call(
        &self,
        tool: &Arc<dyn Tool>,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError>;
}

/// A Plugin whose tools' calls go through `hook`.
pub struct HookedPlugin {
    inner: Arc<dyn Plugin>,
    hook: Arc<dyn CallHook>,
}

impl HookedPlugin {
    /// Wraps `inner`.
    pub fn wrap(inner: Arc<dyn Plugin>, hook: Arc<dyn CallHook>) -> Arc<dyn Plugin> {
        Arc::new(HookedPlugin { inner, hook })
    }
}

#[async_trait]
impl Plugin for HookedPlugin {
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
                Arc::new(HookedTool {
                    inner,
                    hook: self.hook.clone(),
                }) as Arc<dyn Tool>
            })
            .collect())
    }
}

/// A real tool's catalog entry whose calls go through a hook.
struct HookedTool {
    inner: Arc<dyn Tool>,
    hook: Arc<dyn CallHook>,
}

#[async_trait]
impl Tool for HookedTool {
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
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        self.hook.call(&self.inner, arguments, cancel).await
    }
}
