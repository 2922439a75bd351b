//! A run's trace as OpenTelemetry on the command line (issue 27): `run --trace
//! FILE` writes OTLP/JSON whose rounds hold the exact bodies the model server
//! received; `run --otlp URL` and `[trace] otlp_endpoint` post OTLP/HTTP
//! protobuf; a failed export is one line and does not fail the run; a project's
//! endpoint is not used until the project is trusted; `--otlp` wins over it.

use std::path::Path;
use std::process::Command;

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_otlp::proto::collector::trace::v1::ExportTraceServiceRequest;
use promptforge_tests::{binary, isolate, Run, Scratch};
use prost::Message;
use serde_json::Value as Json;

/// Two model rounds in one section.
const TWO_ROUNDS: &str = "---\nname: two\ndescription: d\npromptforge: 0\nmodels:\n  writer: {}\n---\n\n# Two\n\n## Ask\n\n```lua\nlocal a = writer:infer('first ' .. args)\nreturn a .. ' / ' .. writer:infer('second')\n```\n";

/// One round of the built-in echo model.
const ECHO: &str = "---\nname: e\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# E\n\n```lua\nreturn w:infer('hi')\n```\n";

/// A streamed OpenAI-compatible reply of `text`.
fn replying(text: &str) -> Reply {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let content = format!("{{\"role\":\"assistant\",\"content\":{text:?}}}");
    Reply::sse(&format!(
        "{}{}data: [DONE]\n\n",
        chunk(&content, "null"),
        chunk("{}", "\"stop\"")
    ))
}

fn run_with(dir: &Path, args: &[&str]) -> Run {
    let mut command = Command::new(binary());
    isolate(&mut command).current_dir(dir).args(args);
    let output = command.output().expect("promptforge starts");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

/// A folder with the two-round prompt and a model `m` served by `model`.
fn project(label: &str, model: &Server, extra: &str) -> Scratch {
    let scratch = Scratch::new(label);
    scratch.write(
        "promptforge.toml",
        format!(
            "default_model = \"m\"\n\n[model.m]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n{extra}",
            model.url()
        ),
    );
    scratch.write("two.md", TWO_ROUNDS);
    scratch
}

fn attribute<'a>(span: &'a Json, key: &str) -> &'a Json {
    let attributes = span["attributes"].as_array().expect("attributes");
    let found = attributes.iter().find(|a| a["key"] == key);
    &found.unwrap_or_else(|| panic!("{} has no {key}", span["name"]))["value"]
}

#[test]
fn a_trace_file_holds_each_rounds_exact_request_body() {
    let model = Server::serve_blocking(Answers::InOrder(vec![replying("one"), replying("two")]));
    let scratch = project("otlp-file", &model, "");
    std::fs::create_dir(scratch.path().join("out")).unwrap();
    let run = run_with(
        scratch.path(),
        &["run", "two.md", "--trace", "out/trace.json", "go"],
    );
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "one / two\n"),
        "{run:?}"
    );
    let text = std::fs::read_to_string(scratch.path().join("out/trace.json")).unwrap();
    let trace: Json = serde_json::from_str(&text).unwrap();
    let resource = &trace["resourceSpans"][0];
    assert_eq!(
        attribute(&resource["resource"], "service.name")["stringValue"],
        "promptforge"
    );
    let spans = resource["scopeSpans"][0]["spans"].as_array().unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent Two",
            "H1 pass",
            "section Ask",
            "chat gpt-test",
            "chat gpt-test"
        ]
    );
    let section = &spans[2]["spanId"];
    assert!(spans[3..].iter().all(|s| &s["parentSpanId"] == section));
    assert_eq!(spans[1]["parentSpanId"], spans[0]["spanId"]);
    assert!(spans.iter().all(|s| s["traceId"] == spans[0]["traceId"]));
    let received = model.requests();
    assert_eq!(received.len(), 2);
    for (span, request) in spans[3..].iter().zip(&received) {
        let body = attribute(span, "promptforge.request.body")["stringValue"]
            .as_str()
            .unwrap();
        let body: Json = serde_json::from_str(body).unwrap();
        assert_eq!(body, request.json(), "the body the server received");
        assert_eq!(
            attribute(span, "gen_ai.operation.name")["stringValue"],
            "chat"
        );
        assert_eq!(
            attribute(span, "gen_ai.provider.name")["stringValue"],
            "openai"
        );
        assert_eq!(
            attribute(span, "gen_ai.request.model")["stringValue"],
            "gpt-test"
        );
        assert_eq!(
            attribute(span, "promptforge.request.url")["stringValue"],
            format!("{}/v1/chat/completions", model.url())
        );
    }
}

#[test]
fn an_otlp_export_posts_the_trace_as_protobuf() {
    let model = Server::serve_blocking(Answers::InOrder(vec![replying("one"), replying("two")]));
    let collector = Server::serve_blocking(Answers::InOrder(vec![Reply::body(
        200,
        "application/x-protobuf",
        "",
    )]));
    let scratch = project("otlp-export", &model, "");
    let run = run_with(
        scratch.path(),
        &["run", "two.md", "--otlp", &collector.url(), "go"],
    );
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
    let posted = collector.requests();
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].path, "/v1/traces");
    assert_eq!(
        posted[0].header("content-type"),
        Some("application/x-protobuf")
    );
    let request = ExportTraceServiceRequest::decode(posted[0].body.as_slice()).unwrap();
    let spans = &request.resource_spans[0].scope_spans[0].spans;
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent Two",
            "H1 pass",
            "section Ask",
            "chat gpt-test",
            "chat gpt-test"
        ]
    );
    assert_eq!(spans[3].parent_span_id, spans[2].span_id);
    assert!(spans[0].parent_span_id.is_empty());
}

#[test]
fn a_failed_export_is_one_line_and_the_run_still_succeeds() {
    let model = Server::serve_blocking(Answers::InOrder(vec![replying("one"), replying("two")]));
    let scratch = project("otlp-refused", &model, "");
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refusing = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let run = run_with(
        scratch.path(),
        &["run", "two.md", "--otlp", &refusing, "go"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "one / two\n");
    assert_eq!(
        run.stderr,
        format!("promptforge: cannot export the trace to {refusing}/v1/traces: cannot connect\n")
    );
}

#[test]
fn a_projects_endpoint_waits_for_trust_and_the_command_line_wins() {
    let collector = Server::serve_blocking(Answers::InOrder(vec![Reply::body(
        200,
        "application/x-protobuf",
        "",
    )]));
    let other = Server::serve_blocking(Answers::InOrder(vec![Reply::body(
        200,
        "application/x-protobuf",
        "",
    )]));
    let scratch = Scratch::new("otlp-trust");
    scratch.write(
        "promptforge.toml",
        format!("[trace]\notlp_endpoint = \"{}\"\n", collector.url()),
    );
    scratch.write("echo.md", ECHO);
    let untrusted = run_with(scratch.path(), &["run", "echo.md"]);
    assert_eq!(untrusted.code, Some(2), "{untrusted:?}");
    assert!(
        untrusted.stderr.contains("trace.otlp_endpoint would send every run's trace to a server it names, and this configuration is not trusted"),
        "{untrusted:?}"
    );
    assert_eq!(
        collector.accepted(),
        0,
        "the project's endpoint was not used"
    );
    let review = run_with(scratch.path(), &["trust", "."]);
    assert_eq!(review.code, Some(0), "{review:?}");
    assert!(
        review.stdout.contains(&format!(
            "  line 2: trace.otlp_endpoint: send every run's trace (prompts, replies, tool output) to {:?}\n",
            collector.url()
        )),
        "{review:?}"
    );
    let trusted = run_with(scratch.path(), &["run", "echo.md"]);
    assert_eq!(
        (trusted.code, trusted.stdout.as_str()),
        (Some(0), "hi\n"),
        "{trusted:?}"
    );
    assert_eq!(collector.requests().len(), 1);
    let overridden = run_with(
        scratch.path(),
        &["--trust", "run", "echo.md", "--otlp", &other.url()],
    );
    assert_eq!(overridden.code, Some(0), "{overridden:?}");
    assert_eq!(other.requests().len(), 1, "--otlp wins");
    assert_eq!(collector.requests().len(), 1);
}

#[test]
fn a_trace_file_that_cannot_be_written_fails_the_command_after_the_result() {
    let scratch = Scratch::new("otlp-unwritable");
    scratch.write("echo.md", ECHO);
    let run = run_with(
        scratch.path(),
        &["run", "echo.md", "--trace", "missing/t.json"],
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "hi\n");
    let last = run.stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "promptforge: missing/t.json: cannot write the trace: no such file or folder"
    );
}
