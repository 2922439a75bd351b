//! A run's listener ([`RunEvents`]) for the editor: every event goes, in order,
//! on the channel the run's forwarder reads (one `promptforge/runEvent` each), and
//! the run's status (its section, model round and tools in flight) is kept as the
//! message its work-done progress reports.
//!
//! Log lines are not sent one by one: they wait together and go as one `log`
//! event whose text joins them with newlines (the editors split a log event's
//! text into lines already), when [`LOG_FLUSH`] has passed, when
//! [`LOG_BATCH_BYTES`] wait, before any other event (so the order holds) and at
//! the end. A run that logs without pause makes a few notifications a second.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use promptforge_engine::RunEvents;
use tokio::sync::{mpsc, watch};
use tower_lsp::Client;

use crate::run::protocol::{RunEvent, RunEventNotification, RunEventParams};

/// How often the log lines that wait are sent.
pub const LOG_FLUSH: Duration = Duration::from_millis(200);

/// The most log text one `log` event carries: more waiting is sent at once.
pub const LOG_BATCH_BYTES: usize = 1 << 20;

/// The log lines waiting to be sent, joined by newlines.
#[derive(Debug, Default)]
struct PendingLog {
    text: String,
    any: bool,
}

impl PendingLog {
    /// Adds a line; the whole text when it reached [`LOG_BATCH_BYTES`].
    fn push(&mut self, line: &str) -> Option<RunEvent> {
        if self.any {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.any = true;
        (self.text.len() >= LOG_BATCH_BYTES)
            .then(|| self.take())
            .flatten()
    }

    /// The lines waiting, as one event, if any.
    fn take(&mut self) -> Option<RunEvent> {
        if !std::mem::take(&mut self.any) {
            return None;
        }
        Some(RunEvent::Log {
            text: std::mem::take(&mut self.text),
        })
    }
}

/// What the status shows of the run so far.
#[derive(Debug, Default)]
struct Status {
    section: Option<String>,
    round: Option<u64>,
    /// The tools in flight: call id -> (alias, start), in start order.
    in_flight: Vec<(String, String, Instant)>,
}

impl Status {
    /// The progress message: `section: Loop · model round: 2 · tool: fetch`.
    fn message(&self) -> String {
        let mut parts = Vec::new();
        if let Some(section) = &self.section {
            let shown = if section.is_empty() {
                "H1 pass"
            } else {
                section
            };
            parts.push(format!("section: {shown}"));
        }
        if let Some(round) = self.round {
            parts.push(format!("model round: {round}"));
        }
        if !self.in_flight.is_empty() {
            let aliases: Vec<&str> = self.in_flight.iter().map(|(_, a, _)| a.as_str()).collect();
            parts.push(format!("tool: {}", aliases.join(", ")));
        }
        parts.join(" · ")
    }
}

/// The editor's listener of one run.
pub struct LspEvents {
    /// The channel to the forwarder, and the log lines not yet on it (one lock:
    /// the lines go on the channel before any later event).
    sender: Mutex<(Option<mpsc::UnboundedSender<RunEvent>>, PendingLog)>,
    status: Mutex<Status>,
    message: watch::Sender<String>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whole milliseconds, saturating.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl LspEvents {
    /// A listener, the receiver of its events and the receiver of its status.
    pub fn new() -> (
        Arc<Self>,
        mpsc::UnboundedReceiver<RunEvent>,
        watch::Receiver<String>,
    ) {
        let (sender, events) = mpsc::unbounded_channel();
        let (message, status) = watch::channel(String::new());
        let listener = LspEvents {
            sender: Mutex::new((Some(sender), PendingLog::default())),
            status: Mutex::new(Status::default()),
            message,
        };
        (Arc::new(listener), events, status)
    }

    /// Sends an event after the log lines waiting (nothing once closed).
    pub fn send(&self, event: RunEvent) {
        let mut guard = lock(&self.sender);
        let (sender, pending) = &mut *guard;
        if let Some(sender) = sender.as_ref() {
            if let Some(log) = pending.take() {
                let _ = sender.send(log);
            }
            let _ = sender.send(event);
        }
    }

    /// Adds a log line to those waiting (sent at once when they are many).
    fn log_line(&self, line: &str) {
        let mut guard = lock(&self.sender);
        let (sender, pending) = &mut *guard;
        if let Some(sender) = sender.as_ref() {
            if let Some(log) = pending.push(line) {
                let _ = sender.send(log);
            }
        }
    }

    /// Sends the log lines waiting, as one event.
    pub fn flush_log(&self) {
        let mut guard = lock(&self.sender);
        let (sender, pending) = &mut *guard;
        if let (Some(sender), Some(log)) = (sender.as_ref(), pending.take()) {
            let _ = sender.send(log);
        }
    }

    /// Sends the log lines waiting and the last event, and closes the channel:
    /// events reported later (by a task of the run still ending) are dropped.
    pub fn finish(&self, event: RunEvent) {
        let mut guard = lock(&self.sender);
        let (sender, pending) = &mut *guard;
        if let Some(sender) = sender.take() {
            if let Some(log) = pending.take() {
                let _ = sender.send(log);
            }
            let _ = sender.send(event);
        }
    }

    /// Sets a status message of its own (a test run's `2/5 cases`).
    pub fn set_message(&self, message: String) {
        self.message.send_replace(message);
    }

    fn update(&self, change: impl FnOnce(&mut Status)) {
        let message = {
            let mut status = lock(&self.status);
            change(&mut status);
            status.message()
        };
        self.message.send_replace(message);
    }
}

impl RunEvents for LspEvents {
    fn log(&self, line: &str) {
        self.log_line(line);
    }

    fn notice(&self, text: &str) {
        // The command line prints notices as `note: ` lines; so does the run's log.
        self.log_line(&format!("note: {text}"));
    }

    fn section(&self, heading: &str) {
        self.update(|s| s.section = Some(heading.to_owned()));
        self.send(RunEvent::Section {
            heading: heading.to_owned(),
        });
    }

    fn model_round(&self, label: &str, round: u64) {
        self.update(|s| s.round = Some(round));
        self.send(RunEvent::ModelRound {
            label: label.to_owned(),
            round,
        });
    }

    fn tool_call(&self, alias: &str, path: Option<&str>, call_id: &str) {
        let now = Instant::now();
        self.update(|s| {
            s.in_flight
                .push((call_id.to_owned(), alias.to_owned(), now));
        });
        self.send(RunEvent::ToolCall {
            alias: alias.to_owned(),
            path: path.map(str::to_owned),
            call_id: call_id.to_owned(),
        });
    }

    fn tool_result(&self, alias: &str, call_id: &str, ok: bool) {
        let mut started = None;
        self.update(|s| {
            if let Some(at) = s.in_flight.iter().position(|(id, _, _)| id == call_id) {
                started = Some(s.in_flight.remove(at).2);
            }
        });
        let duration = started.map_or(Duration::ZERO, |at| at.elapsed());
        self.send(RunEvent::ToolResult {
            alias: alias.to_owned(),
            call_id: call_id.to_owned(),
            ok,
            duration_ms: millis(duration),
        });
    }
}

/// Sends each event of `events` as a `promptforge/runEvent` of `run_id`, in order,
/// until the channel closes; every [`LOG_FLUSH`] the log lines `listener` keeps
/// waiting join them.
pub async fn forward(
    client: Client,
    run_id: String,
    listener: Arc<LspEvents>,
    mut events: mpsc::UnboundedReceiver<RunEvent>,
) {
    let mut flush = tokio::time::interval(LOG_FLUSH);
    flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = flush.tick() => {
                listener.flush_log();
                continue;
            }
        };
        let Some(event) = event else {
            break;
        };
        let params = RunEventParams {
            run_id: run_id.clone(),
            event,
        };
        client
            .send_notification::<RunEventNotification>(params)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_names_the_section_the_round_and_the_tools_in_flight() {
        let (events, mut received, status) = LspEvents::new();
        events.section("");
        assert_eq!(status.borrow().as_str(), "section: H1 pass");
        events.section("Loop");
        events.model_round("writer", 2);
        events.tool_call("fetch", Some("promptforge/web/fetch"), "c1");
        assert_eq!(
            status.borrow().as_str(),
            "section: Loop · model round: 2 · tool: fetch"
        );
        events.tool_result("fetch", "c1", true);
        assert_eq!(status.borrow().as_str(), "section: Loop · model round: 2");
        events.finish(RunEvent::Finished {
            result: None,
            duration_ms: 0,
            trace_id: None,
        });
        events.log("dropped");
        let mut kinds = Vec::new();
        while let Ok(event) = received.try_recv() {
            kinds.push(event.is_last());
        }
        assert_eq!(kinds, [false, false, false, false, false, true]);
    }

    #[test]
    fn log_lines_wait_together_and_go_before_any_later_event() {
        let (events, mut received, _status) = LspEvents::new();
        events.log("a");
        events.notice("b");
        events.log("");
        assert!(received.try_recv().is_err(), "nothing goes line by line");
        events.section("Go");
        events.log("c");
        events.flush_log();
        events.log("d");
        events.finish(RunEvent::Finished {
            result: None,
            duration_ms: 0,
            trace_id: None,
        });
        let mut all = Vec::new();
        while let Ok(event) = received.try_recv() {
            all.push(event);
        }
        let log = |text: &str| RunEvent::Log { text: text.into() };
        assert_eq!(
            all,
            [
                log("a\nnote: b\n"),
                RunEvent::Section {
                    heading: "Go".into()
                },
                log("c"),
                log("d"),
                RunEvent::Finished {
                    result: None,
                    duration_ms: 0,
                    trace_id: None,
                }
            ]
        );
    }

    #[test]
    fn log_lines_go_at_once_when_their_text_is_long() {
        let (events, mut received, _status) = LspEvents::new();
        let line = "x".repeat(1000);
        for _ in 0..LOG_BATCH_BYTES / 1001 {
            events.log(&line);
        }
        assert!(received.try_recv().is_err());
        events.log(&line);
        let Ok(RunEvent::Log { text }) = received.try_recv() else {
            panic!("the lines went as one event");
        };
        assert_eq!(text.len(), (LOG_BATCH_BYTES / 1001 + 1) * 1001 - 1);
        assert!(received.try_recv().is_err());
    }
}
