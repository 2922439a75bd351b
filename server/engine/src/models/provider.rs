//! The one trait every model provider implements (`host.md` §2), and the data of one round.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::trace::{Reply, Usage, WireRequest};

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

impl ToolCall {
    /// The call as a trace shows it: `id`, `name`, `arguments` (the text).
    pub fn as_json(&self) -> serde_json::Value {
        serde_json::json!({ "id": self.id, "name": self.name, "arguments": self.arguments })
    }
}

impl ChatMessage {
    /// The message as a trace shows it: `role`, `content`, and `toolCalls`,
    /// `toolCallId`, `name` when it has them.
    pub fn as_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        out.insert("role".into(), self.role.as_str().into());
        out.insert("content".into(), self.content.clone().into());
        if !self.tool_calls.is_empty() {
            let calls = self.tool_calls.iter().map(ToolCall::as_json).collect();
            out.insert("toolCalls".into(), serde_json::Value::Array(calls));
        }
        if let Some(id) = &self.tool_call_id {
            out.insert("toolCallId".into(), id.clone().into());
        }
        if let Some(name) = &self.name {
            out.insert("name".into(), name.clone().into());
        }
        serde_json::Value::Object(out)
    }
}

impl ModelRequest {
    /// The request as a trace shows it, whatever the provider: `model`,
    /// `messages`, `tools` (name, description, parameters), and `temperature`
    /// and `maxTokens` when set.
    pub fn as_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        out.insert("model".into(), self.model.clone().into());
        let messages = self.messages.iter().map(ChatMessage::as_json).collect();
        out.insert("messages".into(), serde_json::Value::Array(messages));
        let tools = self.tools.iter().map(|tool| {
            serde_json::json!({
                "name": tool.name, "description": tool.description, "parameters": tool.parameters,
            })
        });
        out.insert("tools".into(), serde_json::Value::Array(tools.collect()));
        if let Some(temperature) = self.temperature {
            out.insert("temperature".into(), temperature.into());
        }
        if let Some(max_tokens) = self.max_tokens {
            out.insert("maxTokens".into(), max_tokens.into());
        }
        serde_json::Value::Object(out)
    }

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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelReply {
    /// The reply text (`""` when the model only called tools).
    pub content: String,
    /// The calls, in the order the model issued them; empty for a final text reply.
    pub tool_calls: Vec<ToolCall>,
    /// The tokens the provider reported for the round, when it reported them.
    pub usage: Option<Usage>,
    /// Why the model stopped, as the provider said it, when it said.
    pub finish_reason: Option<String>,
    /// True when the reply is an answer a cache kept from an earlier run
    /// (`promptforge test --cache`), not the model's answer now.
    pub kept: bool,
}

impl ModelReply {
    /// The reply as a trace keeps it.
    pub fn as_trace(&self) -> Reply {
        Reply {
            content: self.content.clone(),
            tool_calls: self.tool_calls.iter().map(ToolCall::as_json).collect(),
            finish_reason: self.finish_reason.clone(),
        }
    }

    /// A reply of text and calls, with no usage or finish reason.
    pub fn new(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        ModelReply {
            content: content.into(),
            tool_calls,
            ..ModelReply::default()
        }
    }
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

    /// The request as [`ModelProvider::complete`] would put it on the wire, for
    /// the run's trace: its address without credentials and its body. None for a
    /// provider that sends nothing over a network (the default).
    fn wire_request(&self, _request: &ModelRequest) -> Option<WireRequest> {
        None
    }
}
