//! What a model provider is built from: one configured `[model.NAME]` with its key
//! read, handed to the factory registered for its provider kind (`host.md` §2).

use std::time::Duration;

/// The settings of one HTTP Host model, the same for every provider: each reads
/// its own default base URL and sends the key its own way (`Authorization: Bearer`
/// for `openai`, `x-api-key` for `anthropic`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSettings {
    /// The API's base URL (`openai`: with its `/v1`, e.g. `http://127.0.0.1:8080/v1`;
    /// `anthropic`: without it); the provider's public endpoint when unset.
    pub base_url: Option<String>,
    /// The provider's model name, used when a request names none.
    pub model: String,
    /// The API key; never written in a message.
    pub api_key: Option<String>,
    /// The longest wait for the reply's head or for its next streamed chunk.
    pub timeout: Duration,
    /// Retries after the first attempt (transport errors, timeouts, 429, 5xx, and
    /// Anthropic's overload).
    pub retries: u32,
    /// The Host model's name in the configuration, used in error messages.
    pub host_model: String,
}
