//! Models: the provider trait and its implementations, conversations.

pub mod provider;

pub use provider::{ChatMessage, ModelError, ModelProvider, ModelReply, ModelRequest, Role, ToolCall, ToolSpec};
