//! The trace of a run: what it did, as a tree of spans, with the exact model
//! requests and replies and every tool call's arguments and output. The engine
//! records it while the run goes ([`TraceRecorder`]); front ends render it (the
//! CLI writes it as OpenTelemetry, the language server keeps the last ones for
//! the editor). A trace never holds a credential: a round's request is its body
//! and an address without user, password or query.

mod recorder;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

pub use recorder::{OpenSpan, TraceRecorder, SPAN_OVERHEAD};

/// A span's id within its trace: 1, 2, ... in the order spans opened.
pub type SpanId = u64;

/// The trace of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    /// The run's id (`run-` and 16 hex digits), the same as the run's.
    pub run_id: String,
    /// When the run started, in nanoseconds since the Unix epoch.
    pub start_unix_nanos: u64,
    /// The spans, in the order they opened; the first is the run.
    pub spans: Vec<Span>,
    /// Spans that were not recorded because the trace reached `[limits]
    /// trace_bytes` (0 for a whole trace).
    pub dropped_spans: u64,
}

impl Trace {
    /// The span with `id`.
    pub fn span(&self, id: SpanId) -> Option<&Span> {
        self.spans.iter().find(|span| span.id == id)
    }

    /// The spans directly under `id`, in the order they opened.
    pub fn children(&self, id: SpanId) -> impl Iterator<Item = &Span> {
        self.spans
            .iter()
            .filter(move |span| span.parent == Some(id))
    }

    /// The model rounds, in the order they started.
    pub fn rounds(&self) -> impl Iterator<Item = (&Span, &Round)> {
        self.spans.iter().filter_map(|span| match &span.kind {
            SpanKind::Round(round) => Some((span, &**round)),
            _ => None,
        })
    }

    /// The tool calls, in the order they started.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&Span, &ToolCallSpan)> {
        self.spans.iter().filter_map(|span| match &span.kind {
            SpanKind::ToolCall(call) => Some((span, &**call)),
            _ => None,
        })
    }

    /// The tokens of every round: reported ones, and estimates where a round
    /// reported none (the total is then an estimate).
    pub fn total_tokens(&self) -> Option<Usage> {
        Usage::sum(self.rounds().filter_map(|(_, round)| round.usage.as_ref()))
    }
}

/// One span: a stage of the run with its start, end and what it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// Its id.
    pub id: SpanId,
    /// The span it happened in (None for the run).
    pub parent: Option<SpanId>,
    /// Nanoseconds from the run's start to the span's.
    pub start_nanos: u64,
    /// Nanoseconds from the run's start to the span's end (None: it never
    /// ended, as a span cut short by the run's end).
    pub end_nanos: Option<u64>,
    /// The 1-based line of the prompt that made it (a heading, a Lua call), when
    /// known.
    pub line: Option<u32>,
    /// The failure that ended it, if any (one line, as the run reports it).
    pub error: Option<String>,
    /// What it is.
    pub kind: SpanKind,
    /// What happened inside it that is not a span: log lines, jumps, answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<SpanEvent>,
}

impl Span {
    /// The span's name as a trace viewer shows it.
    pub fn name(&self) -> String {
        match &self.kind {
            SpanKind::Run { .. } => "run".to_owned(),
            SpanKind::Section { heading, .. } if heading.is_empty() => "H1 pass".to_owned(),
            SpanKind::Section { heading, .. } => format!("section {heading}"),
            SpanKind::Chain { kind } => kind.clone(),
            SpanKind::Round(round) => format!("chat {}", round.label),
            SpanKind::ToolCall(call) => format!("execute_tool {}", call.alias),
        }
    }

    /// How long it took, when it ended.
    pub fn duration_nanos(&self) -> Option<u64> {
        self.end_nanos
            .map(|end| end.saturating_sub(self.start_nanos))
    }
}

/// What a span is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SpanKind {
    /// The whole run.
    Run {
        /// The prompt's title (its H1), or `""`.
        title: String,
        /// The result, when the run gave one.
        result: Option<String>,
    },
    /// A section's run (the H1 pass has an empty heading).
    Section {
        /// The heading text.
        heading: String,
        /// How it ended: `result`, `done`, `jump` or `error` (None while open).
        outcome: Option<String>,
    },
    /// A chain started by a section: `call`, `fanout arm N` or `task ID`.
    Chain {
        /// Which chain.
        kind: String,
    },
    /// A model round.
    Round(Box<Round>),
    /// A tool call.
    ToolCall(Box<ToolCallSpan>),
}

/// Something that happened inside a span at a moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpanEvent {
    /// Nanoseconds from the run's start.
    pub at_nanos: u64,
    /// What happened.
    pub kind: EventKind,
}

/// The kinds of [`SpanEvent`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum EventKind {
    /// A line of the run log.
    Log {
        /// The line.
        line: String,
    },
    /// A Host notice.
    Notice {
        /// Its text.
        text: String,
    },
    /// A jump to a section.
    Jump {
        /// The target's heading.
        target: String,
    },
    /// `input.ask`: the question and the answer.
    Ask {
        /// The question.
        question: String,
        /// The answer (None when asking failed).
        answer: Option<String>,
    },
}

/// One model round: the request as sent and the reply as received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Round {
    /// The prompt's label.
    pub label: String,
    /// The Host model it resolves to.
    pub host_model: String,
    /// The provider's kind (`openai`, `anthropic`, `echo`, `script`, ...).
    pub provider: String,
    /// The provider's model name.
    pub model: String,
    /// The run's round count, this one included.
    pub index: u64,
    /// The request in the engine's terms: `messages`, `tools` (name,
    /// description, parameters), `temperature`, `max_tokens`.
    pub request: Json,
    /// The request exactly as the provider sent it, when it speaks HTTP.
    pub wire: Option<WireRequest>,
    /// The reply, when one came.
    pub reply: Option<Reply>,
    /// The tokens: the provider's report, or an estimate.
    pub usage: Option<Usage>,
}

/// A request as a provider puts it on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireRequest {
    /// The address, without user, password, query or fragment.
    pub url: String,
    /// The JSON body.
    pub body: Json,
}

/// A model's reply as the trace keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    /// The text.
    pub content: String,
    /// The tool calls: id, name and the arguments as the model wrote them.
    pub tool_calls: Vec<Json>,
    /// Why the model stopped, as the provider said it (`stop`, `tool_calls`,
    /// `end_turn`, ...), when it said.
    pub finish_reason: Option<String>,
}

/// Token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tokens of the request.
    pub input_tokens: u64,
    /// Tokens of the reply.
    pub output_tokens: u64,
    /// True when counted here with a tokenizer, not reported by the provider.
    pub estimated: bool,
}

impl Usage {
    /// The sum of some counts (an estimate when any is), None for none.
    pub fn sum<'a>(usages: impl IntoIterator<Item = &'a Usage>) -> Option<Usage> {
        usages
            .into_iter()
            .fold(None, |total: Option<Usage>, usage| {
                let total = total.unwrap_or_default();
                Some(Usage {
                    input_tokens: total.input_tokens + usage.input_tokens,
                    output_tokens: total.output_tokens + usage.output_tokens,
                    estimated: total.estimated || usage.estimated,
                })
            })
    }
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallSpan {
    /// The alias called (or an Engine tool's name).
    pub alias: String,
    /// The tool path of a bound tool (None for a local or an Engine tool).
    pub tool: Option<String>,
    /// The call's id (the model's, or `call-N` for a script's call).
    pub call_id: String,
    /// Who called: `model` or `script`.
    pub caller: String,
    /// The arguments as JSON text.
    pub arguments: String,
    /// The output as the tool produced it (before the untrusted envelope).
    pub output: Option<String>,
    /// `trusted` or `untrusted`, with an output.
    pub trust: Option<String>,
}

/// A request's address with no credentials: user, password, query and fragment
/// removed (a key may ride in any of them); text that is not a URL becomes `""`.
pub fn address_without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return String::new();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = match rest.find('/') {
        Some(slash) => rest.split_at(slash),
        None => (rest, ""),
    };
    let host = authority.rsplit('@').next().unwrap_or_default();
    format!("{scheme}://{host}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_lose_their_credentials() {
        assert_eq!(
            address_without_credentials("https://user:key@api.example.com/v1/chat?key=s#x"),
            "https://api.example.com/v1/chat"
        );
        assert_eq!(
            address_without_credentials("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080"
        );
        assert_eq!(address_without_credentials("not a url"), "");
    }

    #[test]
    fn usage_sums_and_marks_estimates() {
        let reported = Usage {
            input_tokens: 10,
            output_tokens: 2,
            estimated: false,
        };
        let estimated = Usage {
            input_tokens: 5,
            output_tokens: 1,
            estimated: true,
        };
        assert_eq!(Usage::sum([&reported]), Some(reported));
        assert_eq!(
            Usage::sum([&reported, &estimated]),
            Some(Usage {
                input_tokens: 15,
                output_tokens: 3,
                estimated: true
            })
        );
        assert_eq!(Usage::sum([]), None);
    }
}
