//! Models: the provider trait and its implementations, conversations.

pub mod echo;
pub mod estimate;
pub mod provider;
pub mod script;
pub mod settings;
pub mod withheld;

pub use provider::{
    ChatMessage, ModelError, ModelProvider, ModelReply, ModelRequest, Role, ToolCall, ToolSpec,
};
pub use settings::ProviderSettings;
