//! The messages of running inside the editor (`editor.md` §2) that LSP does not
//! define: the `promptforge/runEvent` notification and its events, the
//! `promptforge/ask` request, and the commands' names.

use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::notification::Notification;
use tower_lsp::lsp_types::request::Request;
use tower_lsp::lsp_types::Range;

/// The command that runs a prompt: `{uri, args?, seed?}` -> `{runId}`.
pub const RUN: &str = "promptforge.run";

/// The command that runs a prompt's tests: `{uri, case?}` -> `{runId}`.
pub const TEST: &str = "promptforge.test";

/// The command that cancels a run: `{runId}` -> null.
pub const CANCEL: &str = "promptforge.cancel";

/// The command of the `Run with arguments…` lens, which the editors implement
/// (they ask for the text, then send [`RUN`]); the server does not advertise it.
pub const RUN_WITH_ARGUMENTS: &str = "promptforge.runWithArguments";

/// The command of the `Debug` lens, which the editors implement (they start
/// their debugger on the prompt with `promptforge dap`); the server does not
/// advertise it.
pub const DEBUG: &str = "promptforge.debug";

/// The commands the server runs (its `executeCommandProvider`).
pub const COMMANDS: [&str; 3] = [RUN, TEST, CANCEL];

/// One event of a run, as `event` of a `promptforge/runEvent` (`type` names it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RunEvent {
    /// Lines of the run log: one, or several sent together (see
    /// [`crate::run::events`]).
    Log {
        /// The lines, joined by newlines.
        text: String,
    },
    /// A section starts (`""` for the H1 pass).
    Section {
        /// Its heading.
        heading: String,
    },
    /// A model round starts.
    ModelRound {
        /// The model label.
        label: String,
        /// The run's rounds so far, this one included.
        round: u64,
    },
    /// A tool call starts.
    ToolCall {
        /// The alias called.
        alias: String,
        /// The tool path of a bound tool.
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// The call's id, which its `toolResult` repeats.
        call_id: String,
    },
    /// A tool call ended.
    ToolResult {
        /// The alias called.
        alias: String,
        /// The call's id.
        call_id: String,
        /// False when the tool failed or the call was cut short.
        ok: bool,
        /// How long the call took.
        duration_ms: u64,
    },
    /// A test case ended.
    CaseFinished {
        /// The case's name.
        name: String,
        /// True when every expectation held.
        ok: bool,
        /// Each failure as `promptforge test` renders it.
        failures: Vec<String>,
        /// How long the case ran.
        duration_ms: u64,
        /// Each failure's parts, in the order of `failures`.
        details: Vec<FailureDetail>,
        /// The `runId` under which `promptforge/trace` gives a failed case's
        /// trace (`run-3.2`: the run's second case), when the server kept it.
        #[serde(skip_serializing_if = "Option::is_none")]
        trace_run_id: Option<String>,
        /// The prompt that trace's lines are in (with `traceRunId`).
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_uri: Option<String>,
    },
    /// The run ended with a result (null: no result); the last event.
    Finished {
        /// The result; for tests `N passed, N failed`.
        result: Option<String>,
        /// How long the run took.
        duration_ms: u64,
        /// The id of the run's trace (the engine's run id, which
        /// `promptforge/trace` also gives), when the server kept one.
        #[serde(skip_serializing_if = "Option::is_none")]
        trace_id: Option<String>,
    },
    /// The run failed; the last event.
    Failed {
        /// The run error's kind (`Lua`, `Tool`, `Cancelled`, ...) or the code of
        /// the document's first problem (`Frontmatter`, ...).
        kind: String,
        /// The message.
        message: String,
        /// Where in the document, when the place is known.
        #[serde(skip_serializing_if = "Option::is_none")]
        range: Option<Range>,
        /// The id of the run's trace, when the server kept one.
        #[serde(skip_serializing_if = "Option::is_none")]
        trace_id: Option<String>,
    },
}

impl RunEvent {
    /// The event with the id of the run's trace, when it is a last event.
    pub fn with_trace_id(mut self, id: String) -> Self {
        if let RunEvent::Finished { trace_id, .. } | RunEvent::Failed { trace_id, .. } = &mut self {
            *trace_id = Some(id);
        }
        self
    }

    /// True for the events that end a run.
    pub fn is_last(&self) -> bool {
        matches!(self, RunEvent::Finished { .. } | RunEvent::Failed { .. })
    }
}

/// One failed expectation of a case, in parts (the engine's
/// `prompt_tests::Failure`), for an editor to place and diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureDetail {
    /// What failed, as written in the test file (`expect.result`, `tools`, ...).
    pub what: String,
    /// The one-line verdict.
    pub message: String,
    /// Where in the test file the failed expectation is written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// The expected text (or its marker, `(no result)`), when the failure compares texts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The actual text (or its marker).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// True when the texts should be equal; false when the expected one is a
    /// part, a pattern or a marker.
    pub exact: bool,
}

/// The params of `promptforge/runEvent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEventParams {
    /// The run.
    pub run_id: String,
    /// What happened.
    pub event: RunEvent,
}

/// The notification `promptforge/runEvent`.
#[derive(Debug)]
pub enum RunEventNotification {}

impl Notification for RunEventNotification {
    type Params = RunEventParams;
    const METHOD: &'static str = "promptforge/runEvent";
}

/// The request for a run's trace: `{runId}` (the id the run command gave) ->
/// the trace (`promptforge_engine::trace::Trace` as JSON), or an error when the
/// server keeps no trace of that run.
pub const TRACE: &str = "promptforge/trace";

/// The params of `promptforge/trace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceParams {
    /// The run, as the run command answered (`run-1`, ...).
    pub run_id: String,
}

/// The params of `promptforge/ask`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskParams {
    /// The run asking.
    pub run_id: String,
    /// The question `input.ask` was given.
    pub question: String,
}

/// The answer to `promptforge/ask`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskAnswer {
    /// The operator's answer.
    pub answer: String,
}

/// The request `promptforge/ask`: `{runId, question}` -> `{answer}` or null.
#[derive(Debug)]
pub enum AskRequest {}

impl Request for AskRequest {
    type Params = AskParams;
    type Result = Option<AskAnswer>;
    const METHOD: &'static str = "promptforge/ask";
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_carry_their_type_and_camel_case_fields() {
        let event = RunEvent::ToolResult {
            alias: "fetch".into(),
            call_id: "call-1".into(),
            ok: true,
            duration_ms: 3,
        };
        assert_eq!(
            serde_json::to_value(&event).ok(),
            Some(
                json!({"type": "toolResult", "alias": "fetch", "callId": "call-1", "ok": true, "durationMs": 3})
            )
        );
        let finished = RunEvent::Finished {
            result: None,
            duration_ms: 1,
            trace_id: None,
        };
        assert_eq!(
            serde_json::to_value(&finished).ok(),
            Some(json!({"type": "finished", "result": null, "durationMs": 1}))
        );
        let failed = RunEvent::Failed {
            kind: "Lua".into(),
            message: "boom".into(),
            range: None,
            trace_id: None,
        };
        assert_eq!(
            serde_json::to_value(&failed).ok(),
            Some(json!({"type": "failed", "kind": "Lua", "message": "boom"}))
        );
    }
}
