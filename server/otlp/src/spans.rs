//! One trace span as one OTLP span: its name, kind and attributes per the GenAI
//! semantic conventions, its events, its status.

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, ArrayValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::span::{Event, SpanKind as OtlpKind};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{Span as OtlpSpan, Status};
use promptforge_engine::trace::{EventKind, Round, Span, SpanEvent, SpanKind, ToolCallSpan, Trace};
use serde_json::Value as Json;

use crate::{genai, ids};

/// A string attribute.
pub(crate) fn string(key: &str, value: impl Into<String>) -> KeyValue {
    attribute(key, any_value::Value::StringValue(value.into()))
}

fn int(key: &str, value: u64) -> KeyValue {
    attribute(
        key,
        any_value::Value::IntValue(i64::try_from(value).unwrap_or(i64::MAX)),
    )
}

fn boolean(key: &str, value: bool) -> KeyValue {
    attribute(key, any_value::Value::BoolValue(value))
}

fn json_text(key: &str, value: &Json) -> KeyValue {
    string(key, value.to_string())
}

fn attribute(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(value) }),
    }
}

/// Every span of the trace, in the order they opened. A span that never ended
/// ends when the trace's last span did and says so (`promptforge.unfinished`).
pub fn spans(trace: &Trace, prompt: &str) -> Vec<OtlpSpan> {
    let last = trace
        .spans
        .iter()
        .map(|span| span.end_nanos.unwrap_or(span.start_nanos))
        .max()
        .unwrap_or(0);
    let trace_id = ids::trace_id(&trace.run_id).to_vec();
    trace
        .spans
        .iter()
        .map(|span| {
            let (name, kind, mut attributes) = describe(trace, span, prompt);
            if let Some(line) = span.line {
                attributes.push(int("promptforge.line", u64::from(line)));
            }
            if span.end_nanos.is_none() {
                attributes.push(boolean("promptforge.unfinished", true));
            }
            OtlpSpan {
                trace_id: trace_id.clone(),
                span_id: ids::span_id(&trace.run_id, span.id).to_vec(),
                parent_span_id: span
                    .parent
                    .map(|parent| ids::span_id(&trace.run_id, parent).to_vec())
                    .unwrap_or_default(),
                name,
                kind: kind as i32,
                start_time_unix_nano: trace.start_unix_nanos + span.start_nanos,
                end_time_unix_nano: trace.start_unix_nanos + span.end_nanos.unwrap_or(last),
                attributes,
                events: span
                    .events
                    .iter()
                    .map(|event| self::event(trace, event))
                    .collect(),
                status: span.error.as_ref().map(|message| Status {
                    message: message.clone(),
                    code: StatusCode::Error as i32,
                }),
                ..Default::default()
            }
        })
        .collect()
}

/// The span's name, kind and attributes.
fn describe(trace: &Trace, span: &Span, prompt: &str) -> (String, OtlpKind, Vec<KeyValue>) {
    match &span.kind {
        SpanKind::Run { title, result } => {
            let agent = if title.is_empty() { prompt } else { title };
            let mut attributes = vec![
                string("gen_ai.operation.name", "invoke_agent"),
                string("gen_ai.agent.name", agent),
                string("promptforge.run_id", trace.run_id.clone()),
            ];
            if let Some(result) = result {
                attributes.push(string("promptforge.result", result.clone()));
            }
            if let Some(usage) = trace.total_tokens() {
                attributes.push(int("gen_ai.usage.input_tokens", usage.input_tokens));
                attributes.push(int("gen_ai.usage.output_tokens", usage.output_tokens));
                attributes.push(boolean("promptforge.usage.estimated", usage.estimated));
            }
            if trace.dropped_spans > 0 {
                attributes.push(int("promptforge.dropped_spans", trace.dropped_spans));
            }
            (
                format!("invoke_agent {agent}"),
                OtlpKind::Internal,
                attributes,
            )
        }
        SpanKind::Section { heading, outcome } => {
            let mut attributes = vec![string("promptforge.section", heading.clone())];
            if let Some(outcome) = outcome {
                attributes.push(string("promptforge.section.outcome", outcome.clone()));
            }
            (span.name(), OtlpKind::Internal, attributes)
        }
        SpanKind::Chain { kind } => (
            span.name(),
            OtlpKind::Internal,
            vec![string("promptforge.chain", kind.clone())],
        ),
        SpanKind::Round(round) => {
            let name = if round.model.is_empty() {
                "chat".to_owned()
            } else {
                format!("chat {}", round.model)
            };
            (name, OtlpKind::Client, round_attributes(round))
        }
        SpanKind::ToolCall(call) => (span.name(), OtlpKind::Internal, tool_call_attributes(call)),
    }
}

/// A model round: `chat` per the conventions' inference span, with the
/// messages, and the exact wire request under `promptforge.request.*`.
fn round_attributes(round: &Round) -> Vec<KeyValue> {
    let mut attributes = vec![
        string("gen_ai.operation.name", "chat"),
        string("gen_ai.provider.name", round.provider.clone()),
        string("gen_ai.request.model", round.model.clone()),
    ];
    if let Some(temperature) = round.request.get("temperature").and_then(Json::as_f64) {
        attributes.push(attribute(
            "gen_ai.request.temperature",
            any_value::Value::DoubleValue(temperature),
        ));
    }
    if let Some(max_tokens) = round.request.get("maxTokens").and_then(Json::as_u64) {
        attributes.push(int("gen_ai.request.max_tokens", max_tokens));
    }
    attributes.push(json_text(
        "gen_ai.input.messages",
        &genai::input_messages(&round.request),
    ));
    if let Some(definitions) = genai::tool_definitions(&round.request) {
        attributes.push(json_text("gen_ai.tool.definitions", &definitions));
    }
    if let Some(reply) = &round.reply {
        if let Some(reason) = &reply.finish_reason {
            let reasons = ArrayValue {
                values: vec![AnyValue {
                    value: Some(any_value::Value::StringValue(reason.clone())),
                }],
            };
            attributes.push(attribute(
                "gen_ai.response.finish_reasons",
                any_value::Value::ArrayValue(reasons),
            ));
        }
        attributes.push(json_text(
            "gen_ai.output.messages",
            &genai::output_messages(reply),
        ));
    }
    if let Some(usage) = &round.usage {
        attributes.push(int("gen_ai.usage.input_tokens", usage.input_tokens));
        attributes.push(int("gen_ai.usage.output_tokens", usage.output_tokens));
        attributes.push(boolean("promptforge.usage.estimated", usage.estimated));
    }
    attributes.push(string("promptforge.label", round.label.clone()));
    attributes.push(string("promptforge.host_model", round.host_model.clone()));
    attributes.push(int("promptforge.round", round.index));
    if let Some(wire) = &round.wire {
        attributes.push(string("promptforge.request.url", wire.url.clone()));
        attributes.push(json_text("promptforge.request.body", &wire.body));
    }
    attributes
}

/// A tool call: `execute_tool` per the conventions, with its arguments and
/// result.
fn tool_call_attributes(call: &ToolCallSpan) -> Vec<KeyValue> {
    let mut attributes = vec![
        string("gen_ai.operation.name", "execute_tool"),
        string("gen_ai.tool.name", call.alias.clone()),
        string("gen_ai.tool.call.id", call.call_id.clone()),
        string("gen_ai.tool.call.arguments", call.arguments.clone()),
    ];
    if let Some(output) = &call.output {
        attributes.push(string("gen_ai.tool.call.result", output.clone()));
    }
    if let Some(tool) = &call.tool {
        attributes.push(string("promptforge.tool", tool.clone()));
    }
    attributes.push(string("promptforge.tool.caller", call.caller.clone()));
    if let Some(trust) = &call.trust {
        attributes.push(string("promptforge.tool.trust", trust.clone()));
    }
    attributes
}

/// A span event: `promptforge.log`, `promptforge.notice`, `promptforge.jump`
/// or `promptforge.ask`, with what happened as attributes.
fn event(trace: &Trace, event: &SpanEvent) -> Event {
    let (name, attributes) = match &event.kind {
        EventKind::Log { line } => ("promptforge.log", vec![string("line", line.clone())]),
        EventKind::Notice { text } => ("promptforge.notice", vec![string("text", text.clone())]),
        EventKind::Jump { target } => ("promptforge.jump", vec![string("target", target.clone())]),
        EventKind::Ask { question, answer } => {
            let mut attributes = vec![string("question", question.clone())];
            if let Some(answer) = answer {
                attributes.push(string("answer", answer.clone()));
            }
            ("promptforge.ask", attributes)
        }
    };
    Event {
        time_unix_nano: trace.start_unix_nanos + event.at_nanos,
        name: name.to_owned(),
        attributes,
        dropped_attributes_count: 0,
    }
}
