//! The text of a panic caught in a task: what the server logs instead of dying.

use promptforge_transport::payload_text;

/// The text of a task's panic (or of its cancellation).
pub(crate) fn panic_text(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(payload) => payload_text(payload.as_ref()),
        Err(error) => error.to_string(),
    }
}
