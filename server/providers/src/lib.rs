//! The HTTP model providers (`host.md` §2): `openai` (chat completions) and
//! `anthropic` (the Messages API), both streamed over SSE, with retries, timeouts,
//! cancellation and one-line error messages that never contain the API key. Each is
//! a `promptforge_engine::models::ModelProvider` built from the engine's
//! `ProviderSettings`, as a third party's provider would be; [`register`] adds their
//! factories to a Host's `Extensions`.
//!
//! Error messages read `model "{host model}" failed: {cause}`, or
//! `model "{host model}" failed after {n} attempts: {cause}` when the call was retried;
//! the causes are listed in the `failure` module.

pub mod anthropic;
mod failure;
pub mod openai;
mod retry;
mod sse;

use std::sync::Arc;

use promptforge_engine::host::{Extensions, ProviderKind};
use promptforge_engine::models::ModelProvider;

/// Registers the `openai` and `anthropic` factories.
pub fn register(extensions: &mut Extensions) {
    extensions
        .register_provider(ProviderKind::Openai, |settings| {
            Arc::new(openai::OpenAiProvider::new(settings)) as Arc<dyn ModelProvider>
        })
        .register_provider(ProviderKind::Anthropic, |settings| {
            Arc::new(anthropic::AnthropicProvider::new(settings)) as Arc<dyn ModelProvider>
        });
}
