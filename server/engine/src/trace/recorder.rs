//! Records a run's trace while it goes, bounded by `[limits] trace_bytes`.

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::{EventKind, Span, SpanEvent, SpanId, SpanKind, Trace};

/// What the host keeps for any span besides its text, counted against `[limits]
/// trace_bytes` with it.
pub const SPAN_OVERHEAD: u64 = 256;

/// A run's trace in the making. Spans open and end from any chain of the run;
/// past the byte limit, new spans and events are counted as dropped, not kept.
#[derive(Debug)]
pub struct TraceRecorder {
    started: Instant,
    limit: u64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    trace: Trace,
    bytes: u64,
    next: SpanId,
}

/// The size a span or event counts: its JSON text and the overhead.
fn weight<T: serde::Serialize>(value: &T) -> u64 {
    let mut counter = Counter(0);
    let text = serde_json::to_writer(&mut counter, value).map_or(0, |()| counter.0);
    text + SPAN_OVERHEAD
}

/// Counts the bytes written to it, keeping none.
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl TraceRecorder {
    /// A recorder for the run `run_id`, keeping at most `limit` bytes.
    pub fn new(run_id: &str, limit: u64) -> Arc<Self> {
        let start_unix_nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Arc::new(TraceRecorder {
            started: Instant::now(),
            limit,
            state: Mutex::new(State {
                trace: Trace {
                    run_id: run_id.to_owned(),
                    start_unix_nanos,
                    spans: Vec::new(),
                    dropped_spans: 0,
                },
                bytes: 0,
                next: 1,
            }),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// [`TraceRecorder::open`] for a span whose text is at least `at_least`
    /// bytes, built by `kind` only when it may fit: a span that cannot is
    /// dropped at once, at no cost but a count.
    pub fn open_with(
        self: &Arc<Self>,
        parent: Option<SpanId>,
        line: Option<u32>,
        at_least: u64,
        kind: impl FnOnce() -> SpanKind,
    ) -> OpenSpan {
        {
            let mut state = self.state();
            let floor = at_least.saturating_add(SPAN_OVERHEAD);
            if state.bytes.saturating_add(floor) > self.limit {
                state.trace.dropped_spans += 1;
                return OpenSpan {
                    recorder: self.clone(),
                    id: None,
                };
            }
        }
        self.open(parent, line, kind())
    }

    /// Opens a span under `parent`, made by `line`; the span ends when the
    /// returned guard is finished or dropped. Past the limit the span is dropped
    /// (the guard is then inert).
    pub fn open(
        self: &Arc<Self>,
        parent: Option<SpanId>,
        line: Option<u32>,
        kind: SpanKind,
    ) -> OpenSpan {
        let start_nanos = self.now();
        let mut state = self.state();
        let span = Span {
            id: state.next,
            parent,
            start_nanos,
            end_nanos: None,
            line,
            error: None,
            kind,
            events: Vec::new(),
        };
        let size = weight(&span);
        if state.bytes.saturating_add(size) > self.limit {
            state.trace.dropped_spans += 1;
            return OpenSpan {
                recorder: self.clone(),
                id: None,
            };
        }
        state.bytes += size;
        state.next += 1;
        let id = span.id;
        state.trace.spans.push(span);
        OpenSpan {
            recorder: self.clone(),
            id: Some(id),
        }
    }

    /// Adds an event to span `id` (dropped past the limit or for a dropped span).
    pub fn event(&self, id: Option<SpanId>, kind: EventKind) {
        let Some(id) = id else { return };
        let event = SpanEvent {
            at_nanos: self.now(),
            kind,
        };
        let size = weight(&event);
        let mut state = self.state();
        if state.bytes.saturating_add(size) > self.limit {
            return;
        }
        state.bytes += size;
        if let Some(span) = find(&mut state.trace.spans, id) {
            span.events.push(event);
        }
    }

    fn end(&self, id: SpanId, error: Option<String>, update: impl FnOnce(&mut SpanKind)) {
        let end = self.now();
        let mut state = self.state();
        let State { trace, bytes, .. } = &mut *state;
        let Some(span) = find(&mut trace.spans, id) else {
            return;
        };
        if span.end_nanos.is_some() {
            return;
        }
        let before = weight(&span.kind);
        update(&mut span.kind);
        span.end_nanos = Some(end);
        span.error = error;
        let grown = weight(&span.kind).saturating_sub(before)
            + span.error.as_ref().map_or(0, |e| e.len() as u64);
        *bytes = bytes.saturating_add(grown);
    }

    /// The trace so far (every span still open shows no end).
    pub fn snapshot(&self) -> Trace {
        self.state().trace.clone()
    }

    /// The bytes the trace counts so far.
    pub fn bytes(&self) -> u64 {
        self.state().bytes
    }
}

/// Span `id` of `spans`: the kept spans are numbered from 1 in the order they
/// are kept, so it is at `id - 1`, found at once however many spans there are.
fn find(spans: &mut [Span], id: SpanId) -> Option<&mut Span> {
    let at = usize::try_from(id).ok()?.checked_sub(1)?;
    spans.get_mut(at).filter(|span| span.id == id)
}

/// A span that is open: finish it with what it ended with, or drop it to end it
/// as it is.
#[derive(Debug)]
pub struct OpenSpan {
    recorder: Arc<TraceRecorder>,
    id: Option<SpanId>,
}

impl OpenSpan {
    /// The span's id (None when it was dropped for the limit).
    pub fn id(&self) -> Option<SpanId> {
        self.id
    }

    /// Adds an event to the span.
    pub fn event(&self, kind: EventKind) {
        self.recorder.event(self.id, kind);
    }

    /// Ends the span with `error` (None: it succeeded), after `update` wrote what
    /// it ended with.
    pub fn finish(mut self, error: Option<String>, update: impl FnOnce(&mut SpanKind)) {
        if let Some(id) = self.id.take() {
            self.recorder.end(id, error, update);
        }
    }
}

impl Drop for OpenSpan {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.recorder.end(id, None, |_| {});
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(kind: &str) -> SpanKind {
        SpanKind::Chain {
            kind: kind.to_owned(),
        }
    }

    #[test]
    fn spans_nest_end_and_keep_their_order() {
        let recorder = TraceRecorder::new("run-1", u64::MAX);
        let run = recorder.open(None, None, chain("walk"));
        let inner = recorder.open(run.id(), Some(4), chain("call"));
        inner.event(EventKind::Log {
            line: "hello".into(),
        });
        inner.finish(Some("boom".into()), |_| {});
        drop(run);
        let trace = recorder.snapshot();
        assert_eq!(trace.spans.len(), 2);
        let (outer, inner) = (&trace.spans[0], &trace.spans[1]);
        assert_eq!((outer.id, outer.parent), (1, None));
        assert_eq!((inner.id, inner.parent, inner.line), (2, Some(1), Some(4)));
        assert_eq!(inner.error.as_deref(), Some("boom"));
        assert!(inner.end_nanos.is_some() && outer.end_nanos >= inner.end_nanos);
        assert_eq!(inner.events.len(), 1);
        assert_eq!(trace.children(1).count(), 1);
    }

    #[test]
    fn past_the_limit_spans_are_counted_as_dropped() {
        let recorder = TraceRecorder::new("run-1", 3 * SPAN_OVERHEAD);
        let kept = recorder.open(None, None, chain("walk"));
        let second = recorder.open(kept.id(), None, chain("call"));
        let third = recorder.open(kept.id(), None, chain("call"));
        assert!(kept.id().is_some() && second.id().is_some());
        assert_eq!(third.id(), None);
        third.event(EventKind::Log { line: "x".into() });
        let trace = recorder.snapshot();
        assert_eq!(trace.spans.len(), 2);
        assert_eq!(trace.dropped_spans, 1);
        assert!(recorder.bytes() <= 3 * SPAN_OVERHEAD);
    }
}
