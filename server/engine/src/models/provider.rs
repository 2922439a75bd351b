//! The one trait every model provider implements (`host.md` §2), and the data of one round.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Instructions.
    System,
    /// The user (or the prompt speaking for it).
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// The role's name in conversation records (`system`, `user`, `assistant`, `tool`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The model's call id.
    pub id: String,
    /// The name called: an alias (or an Engine tool name).
    pub name: String,
    /// The raw JSON text of the arguments, as the model wrote it.
    pub arguments: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// The text (possibly empty for an assistant message with calls).
    pub content: String,
    /// The calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
    /// The alias of a tool message.
    pub name: Option<String>,
}

impl ChatMessage {
    /// A message with a role and text only.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

/// A tool offered to the model in a round.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model sees: the alias.
    pub name: String,
    /// The description the model sees.
    pub description: String,
    /// The JSON Schema object of the arguments.
    pub parameters: serde_json::Value,
}

/// One round's request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The provider's model name (from the Host configuration).
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// The tools offered; empty means the round goes out with no tool list at all.
    pub tools: Vec<ToolSpec>,
    /// `temperature` of the label, when set.
    pub temperature: Option<f64>,
    /// `max_tokens` of the label, when set.
    pub max_tokens: Option<u64>,
}

impl ModelRequest {
    /// The model name to send: the request's, or `fallback` when the request names none.
    pub fn model_or<'a>(&'a self, fallback: &'a str) -> &'a str {
        if self.model.is_empty() {
            fallback
        } else {
            &self.model
        }
    }
}

/// One round's reply: text, or tool calls (with possibly some text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelReply {
    /// The reply text (`""` when the model only called tools).
    pub content: String,
    /// The calls, in the order the model issued them; empty for a final text reply.
    pub tool_calls: Vec<ToolCall>,
}

/// A model call that failed after the provider's retries: one line naming the Host
/// model and the cause, never a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// The one-line message.
    pub message: String,
    /// True when the call stopped because the run was cancelled.
    pub cancelled: bool,
    /// True when the message already names the Host model (a provider's own
    /// failure after its retries); else the run names it.
    pub names_model: bool,
}

impl ModelError {
    /// A failure with a message.
    pub fn new(message: impl Into<String>) -> Self {
        ModelError {
            message: message.into(),
            cancelled: false,
            names_model: false,
        }
    }

    /// A failure whose message already names the Host model.
    pub fn naming_model(message: impl Into<String>) -> Self {
        ModelError {
            names_model: true,
            ..ModelError::new(message)
        }
    }

    /// The failure of a call stopped by cancellation.
    pub fn cancelled() -> Self {
        ModelError {
            message: crate::messages::CANCELLED.to_owned(),
            cancelled: true,
            names_model: false,
        }
    }
}

/// A model provider: `openai`, `anthropic`, `echo`, `script`, ... Adding one touches no other module.
#[async_trait]
pub trait ModelProvider: Send + Sync {
    /// The provider's kind as written in the configuration (`openai`, `echo`, ...).
    fn kind(&self) -> &str;

    /// Runs one round. Retries (transport errors, 429, 5xx, with backoff) and timeouts
    /// are the provider's; when `cancel` fires, returns [`ModelError::cancelled`] at once.
    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError>;
}
