//! The order of a run's first messages: the `executeCommand` response carrying a
//! `runId` reaches the client before anything of that run (its events, its
//! progress, its `promptforge/ask`), so a client always knows the id it reads.
//!
//! tower-lsp writes a handler's response and the server's own notifications on
//! two streams it merges, in no fixed order; the framing layer's relay
//! ([`crate::relay`]) sees every body in output order, so it opens the
//! gate of a run once the response naming it is queued for the client.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;

/// How long a run waits for its response to be written before it starts anyway.
pub const GATE_TIMEOUT: Duration = Duration::from_secs(2);

/// The runs waiting for their response to be written.
#[derive(Debug, Default)]
pub struct ResponseGates {
    waiting: Mutex<HashMap<String, oneshot::Sender<()>>>,
    /// How many are waiting: the relay looks into bodies only while some are.
    count: AtomicUsize,
}

/// One run's gate: [`Gate::opened`] completes once its response was queued.
#[derive(Debug)]
pub struct Gate {
    opened: oneshot::Receiver<()>,
    gates: Gates,
    run_id: String,
}

impl Gate {
    /// Waits until the response was queued for the client, at most [`GATE_TIMEOUT`].
    pub async fn opened(self) {
        if tokio::time::timeout(GATE_TIMEOUT, self.opened)
            .await
            .is_err()
        {
            self.gates.open(&self.run_id);
        }
    }
}

impl ResponseGates {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<()>>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A gate for the run `run_id`.
    pub fn gate(self: &Arc<Self>, run_id: &str) -> Gate {
        let (open, opened) = oneshot::channel();
        let mut waiting = self.lock();
        waiting.insert(run_id.to_owned(), open);
        self.count.store(waiting.len(), Ordering::SeqCst);
        Gate {
            opened,
            gates: Arc::clone(self),
            run_id: run_id.to_owned(),
        }
    }

    /// The run whose gate `body` (a message written to the client) opens: a
    /// response whose result is `{"runId": ...}` for a waiting run.
    pub fn opened_by(&self, body: &[u8]) -> Option<String> {
        if self.count.load(Ordering::SeqCst) == 0 || !contains(body, b"\"runId\"") {
            return None;
        }
        let message: serde_json::Value = serde_json::from_slice(body).ok()?;
        if message.get("id").is_none() || message.get("method").is_some() {
            return None;
        }
        let run_id = message.get("result")?.get("runId")?.as_str()?;
        self.lock().contains_key(run_id).then(|| run_id.to_owned())
    }

    /// Opens the gate of `run_id` (its response is queued).
    pub fn open(&self, run_id: &str) {
        let mut waiting = self.lock();
        if let Some(open) = waiting.remove(run_id) {
            let _ = open.send(());
        }
        self.count.store(waiting.len(), Ordering::SeqCst);
    }
}

/// True when `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Shared gates.
pub type Gates = Arc<ResponseGates>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_response_naming_a_waiting_run_opens_it() {
        let gates = Arc::new(ResponseGates::default());
        assert_eq!(
            gates.opened_by(br#"{"id":1,"result":{"runId":"run-1"}}"#),
            None
        );
        let _gate = gates.gate("run-1");
        assert_eq!(
            gates.opened_by(
                br#"{"jsonrpc":"2.0","method":"promptforge/runEvent","params":{"runId":"run-1"}}"#
            ),
            None
        );
        assert_eq!(
            gates.opened_by(br#"{"id":1,"result":{"runId":"run-2"}}"#),
            None
        );
        assert_eq!(
            gates.opened_by(br#"{"jsonrpc":"2.0","id":1,"result":{"runId":"run-1"}}"#),
            Some("run-1".to_owned())
        );
        gates.open("run-1");
        assert_eq!(
            gates.opened_by(br#"{"id":1,"result":{"runId":"run-1"}}"#),
            None
        );
    }
}
