//! The mapping of a trace to OTLP: nesting, names, GenAI attributes, ids,
//! times, error status, events, the OTLP/JSON text, and the export over HTTP.

use std::collections::BTreeMap;

use promptforge_engine::testing::http::{refusing_url, Reply as HttpReply, Server};
use promptforge_engine::trace::{
    EventKind, Reply, Round, Span, SpanEvent, SpanKind, ToolCallSpan, Trace, Usage, WireRequest,
};
use promptforge_otlp::proto::collector::trace::v1::ExportTraceServiceRequest;
use promptforge_otlp::proto::common::v1::{any_value, KeyValue};
use promptforge_otlp::proto::trace::v1::Span as OtlpSpan;
use promptforge_otlp::{export_request, send, span_id, to_json, trace_id};
use prost::Message;
use serde_json::{json, Value as Json};

const RUN: &str = "run-0123456789abcdef";
const START: u64 = 1_700_000_000_000_000_000;

fn span(id: u64, parent: Option<u64>, start: u64, end: Option<u64>, kind: SpanKind) -> Span {
    Span {
        id,
        parent,
        start_nanos: start,
        end_nanos: end,
        line: None,
        error: None,
        kind,
        events: Vec::new(),
    }
}

fn sample() -> Trace {
    let request = json!({
        "model": "gpt-x",
        "messages": [{ "role": "user", "content": "What is Rust?" }],
        "tools": [{ "name": "fetch", "description": "Fetch a page", "parameters": { "type": "object" } }],
        "temperature": 0.5,
    });
    let round = Round {
        label: "w".into(),
        host_model: "openai/gpt-x".into(),
        provider: "openai".into(),
        model: "gpt-x".into(),
        index: 1,
        request,
        wire: Some(WireRequest {
            url: "http://127.0.0.1:9/v1/chat/completions".into(),
            body: json!({ "model": "gpt-x", "messages": [] }),
        }),
        reply: Some(Reply {
            content: String::new(),
            tool_calls: vec![
                json!({ "id": "c1", "name": "fetch", "arguments": "{\"url\":\"u\"}" }),
            ],
            finish_reason: Some("tool_calls".into()),
        }),
        usage: Some(Usage {
            input_tokens: 12,
            output_tokens: 3,
            estimated: false,
        }),
    };
    let call = ToolCallSpan {
        alias: "fetch".into(),
        tool: Some("acme/web/fetch".into()),
        call_id: "c1".into(),
        caller: "model".into(),
        arguments: "{\"url\":\"u\"}".into(),
        output: Some("<h1>Rust</h1>".into()),
        trust: Some("untrusted".into()),
    };
    let mut section = span(
        2,
        Some(1),
        10,
        Some(900),
        SpanKind::Section {
            heading: "S".into(),
            outcome: Some("error".into()),
        },
    );
    section.line = Some(14);
    section.error = Some("boom".into());
    section.events.push(SpanEvent {
        at_nanos: 20,
        kind: EventKind::Log {
            line: "asking".into(),
        },
    });
    Trace {
        run_id: RUN.into(),
        start_unix_nanos: START,
        spans: vec![
            span(
                1,
                None,
                0,
                Some(1000),
                SpanKind::Run {
                    title: "Title".into(),
                    result: None,
                },
            ),
            section,
            span(3, Some(2), 30, Some(500), SpanKind::Round(Box::new(round))),
            span(
                4,
                Some(2),
                500,
                Some(600),
                SpanKind::ToolCall(Box::new(call)),
            ),
            span(
                5,
                Some(2),
                600,
                None,
                SpanKind::Chain {
                    kind: "call".into(),
                },
            ),
        ],
        dropped_spans: 0,
    }
}

fn spans(request: &ExportTraceServiceRequest) -> &[OtlpSpan] {
    &request.resource_spans[0].scope_spans[0].spans
}

fn attributes(span: &OtlpSpan) -> BTreeMap<String, any_value::Value> {
    span.attributes
        .iter()
        .map(|KeyValue { key, value }| (key.clone(), value.clone().unwrap().value.unwrap()))
        .collect()
}

fn text(span: &OtlpSpan, key: &str) -> String {
    match attributes(span).get(key) {
        Some(any_value::Value::StringValue(text)) => text.clone(),
        other => panic!("{key} of {} is {other:?}", span.name),
    }
}

fn int(span: &OtlpSpan, key: &str) -> i64 {
    match attributes(span).get(key) {
        Some(any_value::Value::IntValue(n)) => *n,
        other => panic!("{key} of {} is {other:?}", span.name),
    }
}

#[test]
fn spans_nest_as_the_run_did_with_derived_ids_and_times() {
    let request = export_request(&sample(), "hello.prompt.md");
    let resource = request.resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(resource.attributes.len(), 2);
    assert_eq!(resource.attributes[0].key, "service.name");
    let spans = spans(&request);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent Title",
            "section S",
            "chat gpt-x",
            "execute_tool fetch",
            "call"
        ]
    );
    let trace = trace_id(RUN).to_vec();
    assert!(spans.iter().all(|s| s.trace_id == trace));
    for (span, (id, parent)) in spans.iter().zip([
        (1, None),
        (2, Some(1)),
        (3, Some(2)),
        (4, Some(2)),
        (5, Some(2)),
    ]) {
        assert_eq!(span.span_id, span_id(RUN, id).to_vec());
        let parent = parent.map(|p| span_id(RUN, p).to_vec()).unwrap_or_default();
        assert_eq!(span.parent_span_id, parent, "{}", span.name);
    }
    assert_eq!(spans[2].start_time_unix_nano, START + 30);
    assert_eq!(spans[2].end_time_unix_nano, START + 500);
    // The chain never ended: it ends with the trace and says so.
    assert_eq!(spans[4].end_time_unix_nano, START + 1000);
    assert!(attributes(&spans[4]).contains_key("promptforge.unfinished"));
    assert_eq!(spans[2].kind, 3, "a round is a CLIENT span");
    assert_eq!(spans[3].kind, 1, "a tool call is INTERNAL");
}

#[test]
fn rounds_and_tool_calls_carry_the_genai_attributes() {
    let request = export_request(&sample(), "hello.prompt.md");
    let spans = spans(&request);
    let (run, round, call) = (&spans[0], &spans[2], &spans[3]);
    assert_eq!(text(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(text(run, "gen_ai.agent.name"), "Title");
    assert_eq!(int(run, "gen_ai.usage.input_tokens"), 12);
    assert_eq!(text(round, "gen_ai.operation.name"), "chat");
    assert_eq!(text(round, "gen_ai.provider.name"), "openai");
    assert_eq!(text(round, "gen_ai.request.model"), "gpt-x");
    assert_eq!(int(round, "gen_ai.usage.input_tokens"), 12);
    assert_eq!(int(round, "gen_ai.usage.output_tokens"), 3);
    assert_eq!(
        attributes(round)["gen_ai.request.temperature"],
        any_value::Value::DoubleValue(0.5)
    );
    match &attributes(round)["gen_ai.response.finish_reasons"] {
        any_value::Value::ArrayValue(array) => assert_eq!(
            array.values[0].value,
            Some(any_value::Value::StringValue("tool_calls".into()))
        ),
        other => panic!("finish reasons are {other:?}"),
    }
    let input: Json = serde_json::from_str(&text(round, "gen_ai.input.messages")).unwrap();
    assert_eq!(
        input,
        json!([{ "role": "user", "parts": [{ "type": "text", "content": "What is Rust?" }] }])
    );
    let output: Json = serde_json::from_str(&text(round, "gen_ai.output.messages")).unwrap();
    assert_eq!(output[0]["parts"][0]["name"], "fetch");
    let tools: Json = serde_json::from_str(&text(round, "gen_ai.tool.definitions")).unwrap();
    assert_eq!(tools[0]["name"], "fetch");
    assert_eq!(text(round, "promptforge.label"), "w");
    assert_eq!(text(round, "promptforge.host_model"), "openai/gpt-x");
    assert_eq!(
        text(round, "promptforge.request.url"),
        "http://127.0.0.1:9/v1/chat/completions"
    );
    let body: Json = serde_json::from_str(&text(round, "promptforge.request.body")).unwrap();
    assert_eq!(body, json!({ "model": "gpt-x", "messages": [] }));
    assert_eq!(text(call, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(text(call, "gen_ai.tool.name"), "fetch");
    assert_eq!(text(call, "gen_ai.tool.call.id"), "c1");
    assert_eq!(text(call, "gen_ai.tool.call.arguments"), "{\"url\":\"u\"}");
    assert_eq!(text(call, "gen_ai.tool.call.result"), "<h1>Rust</h1>");
    assert_eq!(text(call, "promptforge.tool"), "acme/web/fetch");
}

#[test]
fn errors_are_an_error_status_and_events_keep_their_time() {
    let request = export_request(&sample(), "hello.prompt.md");
    let section = &spans(&request)[1];
    let status = section.status.as_ref().expect("a failed span has a status");
    assert_eq!((status.code, status.message.as_str()), (2, "boom"));
    assert!(spans(&request)[0].status.is_none());
    assert_eq!(int(section, "promptforge.line"), 14);
    assert_eq!(text(section, "promptforge.section.outcome"), "error");
    assert_eq!(section.events.len(), 1);
    assert_eq!(section.events[0].name, "promptforge.log");
    assert_eq!(section.events[0].time_unix_nano, START + 20);
    assert_eq!(section.events[0].attributes[0].key, "line");
}

#[test]
fn the_json_text_is_otlp_json() {
    let request = export_request(&sample(), "hello.prompt.md");
    let value: Json = serde_json::from_str(&to_json(&request)).unwrap();
    let span = &value["resourceSpans"][0]["scopeSpans"][0]["spans"][2];
    assert_eq!(
        span["traceId"],
        "0123456789abcdef".to_owned() + &hex(&trace_id(RUN)[8..])
    );
    assert_eq!(span["spanId"], hex(&span_id(RUN, 3)));
    assert_eq!(span["parentSpanId"], hex(&span_id(RUN, 2)));
    assert_eq!(span["kind"], 3, "enums are integers");
    assert_eq!(span["startTimeUnixNano"], (START + 30).to_string());
    let usage = span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "gen_ai.usage.input_tokens")
        .unwrap();
    assert_eq!(usage["value"], json!({ "intValue": "12" }));
    assert_eq!(
        value["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"],
        "promptforge"
    );
    // It reads back as the same request.
    let back: ExportTraceServiceRequest = serde_json::from_value(value).unwrap();
    assert_eq!(back, request);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn an_export_posts_protobuf_to_the_traces_path() {
    let server = Server::start(vec![HttpReply::body(200, "application/x-protobuf", "")]).await;
    let request = export_request(&sample(), "hello.prompt.md");
    send(&server.url(), &request).await.expect("exported");
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/v1/traces")
    );
    assert_eq!(
        seen[0].header("content-type"),
        Some("application/x-protobuf")
    );
    let decoded = ExportTraceServiceRequest::decode(seen[0].body.as_slice()).unwrap();
    assert_eq!(decoded, request);
}

#[tokio::test]
async fn a_failed_export_is_one_line_without_credentials() {
    let server = Server::start(vec![HttpReply::json(415, "{}")]).await;
    let request = export_request(&sample(), "p");
    let url = server.url().replace("http://", "http://user:secret@") + "/?key=k";
    let error = send(&url, &request).await.unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "cannot export the trace to {}/v1/traces: the collector answered 415 Unsupported Media Type",
            server.url()
        )
    );
    let refusing = refusing_url().await;
    let error = send(&refusing, &request).await.unwrap_err().to_string();
    assert_eq!(
        error,
        format!("cannot export the trace to {refusing}/v1/traces: cannot connect")
    );
}
