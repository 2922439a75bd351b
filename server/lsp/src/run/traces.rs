//! The traces of the session's last prompt runs and failed test cases, for
//! `promptforge/trace`: at most [`MAX_TRACES`] of them and [`MAX_TRACE_BYTES`]
//! in all, the oldest going first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use promptforge_engine::trace::Trace;

/// How many traces the session keeps.
pub const MAX_TRACES: usize = 20;

/// How many bytes of traces (as JSON) the session keeps; a trace alone over it is
/// not kept.
pub const MAX_TRACE_BYTES: usize = 64 * 1024 * 1024;

/// The message of `promptforge/trace` for a run whose trace is not kept.
pub fn no_trace(run_id: &str) -> String {
    format!(
        "no trace of {run_id}: the server keeps the traces of the last {MAX_TRACES} prompt runs and failed test cases of this session"
    )
}

/// One trace kept: its run, its JSON text (what the request answers) and size.
struct Kept {
    run_id: String,
    json: Arc<str>,
}

/// The traces kept, oldest first.
#[derive(Default)]
pub struct Traces {
    kept: Mutex<VecDeque<Kept>>,
}

impl Traces {
    /// Keeps the trace of the editor's run `run_id`, dropping the oldest ones
    /// past the limits; false when it is too large to keep.
    pub fn keep(&self, run_id: &str, trace: &Trace) -> bool {
        let Ok(json) = serde_json::to_string(trace) else {
            return false;
        };
        if json.len() > MAX_TRACE_BYTES {
            return false;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.push_back(Kept {
            run_id: run_id.to_owned(),
            json: json.into(),
        });
        let mut bytes: usize = kept.iter().map(|k| k.json.len()).sum();
        while kept.len() > MAX_TRACES || bytes > MAX_TRACE_BYTES {
            match kept.pop_front() {
                Some(old) => bytes -= old.json.len(),
                None => break,
            }
        }
        true
    }

    /// The JSON text of the trace of run `run_id`, when it is kept.
    pub fn get(&self, run_id: &str) -> Option<Arc<str>> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.iter()
            .find(|k| k.run_id == run_id)
            .map(|k| k.json.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(id: &str) -> Trace {
        Trace {
            run_id: id.to_owned(),
            start_unix_nanos: 0,
            spans: Vec::new(),
            dropped_spans: 0,
        }
    }

    #[test]
    fn the_oldest_traces_go_first() {
        let traces = Traces::default();
        for n in 1..=MAX_TRACES + 2 {
            assert!(traces.keep(&format!("run-{n}"), &trace(&format!("t{n}"))));
        }
        assert!(traces.get("run-1").is_none());
        assert!(traces.get("run-2").is_none());
        let last = traces.get(&format!("run-{}", MAX_TRACES + 2)).unwrap();
        assert!(last.contains("\"runId\":\"t22\""));
        assert!(traces.get("run-3").is_some());
    }
}
