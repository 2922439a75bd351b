//! The HTTP model providers (`host.md` §2): `openai` (chat completions) and
//! `anthropic` (the Messages API), both streamed over SSE, with retries, timeouts,
//! cancellation and one-line error messages that never contain the API key.
//!
//! Error messages read `model "{host model}" failed: {cause}`, or
//! `model "{host model}" failed after {n} attempts: {cause}` when the call was retried;
//! the causes are listed in the `failure` module.

pub mod anthropic;
mod failure;
pub mod openai;
mod retry;
mod sse;
