//! The Debug Adapter Protocol's messages as this adapter reads and writes them:
//! requests in, responses and events out, each numbered by the adapter's own
//! `seq` (DAP "Base Protocol"). Only the fields the adapter uses are typed.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// A request from the client.
#[derive(Debug, Clone, Deserialize)]
pub struct Request {
    /// The client's sequence number, echoed as the response's `request_seq`.
    pub seq: i64,
    /// The request's name (`initialize`, `launch`, ...).
    pub command: String,
    /// Its arguments (absent: `null`).
    #[serde(default)]
    pub arguments: Value,
}

/// Reads a frame's body as a request: the error says why it is none.
pub fn request_of(body: &[u8]) -> Result<Request, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the message is not JSON: {e}"))?;
    if value.get("type").and_then(Value::as_str) != Some("request") {
        return Err("the message is not a request".to_owned());
    }
    serde_json::from_value(value).map_err(|e| format!("the request is malformed: {e}"))
}

/// The writer of the adapter's messages: numbers them and queues them, in the
/// order they are made (from async code or from the engine's threads alike),
/// for the one task that writes stdout. Cheap to clone.
#[derive(Clone)]
pub struct Outgoing {
    /// The next `seq` and the queue, together so that numbers follow the order.
    queue: Arc<Mutex<(i64, mpsc::UnboundedSender<Vec<u8>>)>>,
}

impl Outgoing {
    /// Messages written through `queue`.
    pub fn new(queue: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        Outgoing {
            queue: Arc::new(Mutex::new((1, queue))),
        }
    }

    /// Numbers `message` and queues it at once.
    pub fn send_now(&self, mut message: Value) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        message["seq"] = json!(queue.0);
        queue.0 += 1;
        if let Ok(bytes) = serde_json::to_vec(&message) {
            // The writer is gone only when the session ends: nothing left to tell.
            let _ = queue.1.send(bytes);
        }
    }

    async fn send(&self, message: Value) {
        self.send_now(message);
    }

    /// The event `name` with `body` (none when null), queued at once (for the
    /// engine's threads).
    pub fn event_now(&self, name: &str, body: Value) {
        let mut event = json!({ "type": "event", "event": name });
        if !body.is_null() {
            event["body"] = body;
        }
        self.send_now(event);
    }

    /// The successful response to `request`, with `body` (none when null).
    pub async fn respond(&self, request: &Request, body: Value) {
        let mut response = json!({
            "type": "response",
            "request_seq": request.seq,
            "command": request.command,
            "success": true,
        });
        if !body.is_null() {
            response["body"] = body;
        }
        self.send(response).await;
    }

    /// The failed response to `request`, with `message` shown to the user.
    pub async fn refuse(&self, request: &Request, message: &str) {
        self.send(json!({
            "type": "response",
            "request_seq": request.seq,
            "command": request.command,
            "success": false,
            "message": message,
            "body": { "error": { "id": 1, "format": message, "showUser": true } },
        }))
        .await;
    }

    /// The event `name` with `body` (none when null).
    pub async fn event(&self, name: &str, body: Value) {
        self.event_now(name, body);
    }
}
