//! Models: the provider trait and its implementations, conversations.

pub mod echo;
pub mod provider;
pub mod providers;
pub mod script;
pub mod withheld;

pub use provider::{
    ChatMessage, ModelError, ModelProvider, ModelReply, ModelRequest, Role, ToolCall, ToolSpec,
};
