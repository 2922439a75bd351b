//! The `Tool` trait (seed 002's, with the Tools chapter's output kinds) and tool ids.

use std::fmt;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

/// A tool path, `namespace/plugin/name`, kept exactly as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolId(String);

impl ToolId {
    /// A tool id from its path (the Harness checks it sits under its Plugin's id).
    pub fn new(path: impl Into<String>) -> Self {
        ToolId(path.into())
    }

    /// The whole path.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The Plugin id: the path without its last segment.
    pub fn plugin_id(&self) -> &str {
        self.0.rsplit_once('/').map_or("", |(plugin, _)| plugin)
    }

    /// The short name: the last segment.
    pub fn short_name(&self) -> &str {
        self.0
            .rsplit_once('/')
            .map_or(self.0.as_str(), |(_, name)| name)
    }

    /// True when the path is `plugin` plus one non-empty name segment, compared by
    /// whole segments.
    pub fn is_under(&self, plugin: &str) -> bool {
        match self
            .0
            .strip_prefix(plugin)
            .and_then(|rest| rest.strip_prefix('/'))
        {
            Some(name) => !name.is_empty() && !name.contains('/'),
            None => false,
        }
    }
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who may trust a tool's output: the tool decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Arrives exactly as produced.
    Trusted,
    /// Arrives in the untrusted envelope.
    Untrusted,
}

impl Trust {
    /// `trusted` or `untrusted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Untrusted => "untrusted",
        }
    }
}

/// How a script call receives a tool's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// A string.
    Plain,
    /// JSON text, decoded into a Lua table.
    Structured,
}

/// A tool's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text (JSON text for a structured tool).
    pub text: String,
    /// Trusted or untrusted.
    pub trust: Trust,
    /// Plain or structured.
    pub kind: OutputKind,
}

impl ToolOutput {
    /// Plain output with a trust marking.
    pub fn plain(text: impl Into<String>, trust: Trust) -> Self {
        ToolOutput {
            text: text.into(),
            trust,
            kind: OutputKind::Plain,
        }
    }
}

/// A tool's own failure: a short, model-safe message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// The failure text.
    pub message: String,
}

impl ToolError {
    /// A failure with its text.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }
}

/// A tool a Plugin contributes to the Harness.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The tool path.
    fn id(&self) -> &ToolId;
    /// The name on the wire: the path's last segment.
    fn wire_name(&self) -> &str {
        self.id().short_name()
    }
    /// The catalog description the model reads.
    fn description(&self) -> &str;
    /// The JSON Schema object of the arguments.
    fn parameters(&self) -> &serde_json::Value;
    /// How the tool marks its output, for the catalog listing (`promptforge catalog`,
    /// hovers); each call's [`ToolOutput`] carries the marking that counts. Any
    /// marking other than trusted counts as untrusted, so that is the default.
    fn trust(&self) -> Trust {
        Trust::Untrusted
    }
    /// The tool's output kind, for the catalog listing; each call's output says
    /// what a script receives.
    fn output_kind(&self) -> OutputKind {
        OutputKind::Plain
    }
    /// Runs the tool on JSON `arguments`; returns at once when `cancel` fires.
    async fn call(
        &self,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_split_by_whole_segments() {
        let id = ToolId::new("promptforge/web/fetch");
        assert_eq!(id.plugin_id(), "promptforge/web");
        assert_eq!(id.short_name(), "fetch");
        assert!(id.is_under("promptforge/web"));
        assert!(!id.is_under("promptforge/we"));
        assert!(!ToolId::new("promptforge/web2/fetch").is_under("promptforge/web"));
        assert!(!ToolId::new("promptforge/other/fetch").is_under("promptforge/web"));
        assert!(!ToolId::new("promptforge/web/a/b").is_under("promptforge/web"));
        assert!(!ToolId::new("promptforge/web/").is_under("promptforge/web"));
    }
}
