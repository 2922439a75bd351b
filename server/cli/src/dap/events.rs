//! What the run's debugger tells the client, as DAP events: `stopped` (with the
//! reason, and an exception's kind and message), `thread` when a chain starts or
//! ends, and `output` for a logpoint. The last stop of each paused thread is
//! kept for `exceptionInfo` and for requests that name no thread.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use promptforge_engine::run::{DebugListener, Stop, StopReason};
use serde_json::json;

use crate::dap::protocol::Outgoing;

/// The adapter's listener on the run's debugger.
pub struct Events {
    out: Outgoing,
    /// The stop of each paused thread.
    stops: Mutex<BTreeMap<i64, Stop>>,
}

impl Events {
    /// Events written through `out`.
    pub fn new(out: Outgoing) -> Self {
        Events {
            out,
            stops: Mutex::new(BTreeMap::new()),
        }
    }

    /// The stop of `thread`, while it is paused.
    pub fn stop_of(&self, thread: i64) -> Option<Stop> {
        self.stops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&thread)
            .cloned()
    }

    /// The first paused thread, if any.
    pub fn first_paused(&self) -> Option<i64> {
        self.stops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .next()
            .copied()
    }

    /// Forgets the stop of `thread` (it was resumed).
    pub fn resumed(&self, thread: i64) {
        self.stops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&thread);
    }
}

impl DebugListener for Events {
    fn stopped(&self, thread: i64, stop: &Stop) {
        self.stops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(thread, stop.clone());
        let mut body = json!({
            "reason": stop.reason.as_str(),
            "threadId": thread,
            "allThreadsStopped": false,
        });
        if let (StopReason::Exception, Some((kind, message))) = (stop.reason, &stop.exception) {
            body["description"] = json!(format!("Paused on a {kind} error"));
            body["text"] = json!(message);
        }
        self.out.event_now("stopped", body);
    }

    fn thread(&self, thread: i64, started: bool) {
        if !started {
            self.resumed(thread);
        }
        let reason = if started { "started" } else { "exited" };
        self.out
            .event_now("thread", json!({ "reason": reason, "threadId": thread }));
    }

    fn output(&self, text: &str) {
        self.out
            .event_now("output", json!({ "category": "console", "output": text }));
    }
}
