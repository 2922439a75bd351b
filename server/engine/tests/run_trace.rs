//! The trace of a run (issue 27): spans nest as the run did, a round holds the
//! request as the model received it and its reply, a tool call its arguments and
//! output, a log line is an event of its section; off costs nothing; the trace is
//! bounded by `[limits] trace_bytes`.

use std::sync::Arc;

use promptforge_engine::host::Limits;
use promptforge_engine::run::identity::RunIdentity;
use promptforge_engine::testing::*;
use promptforge_engine::trace::{EventKind, SpanKind, Trace};
use promptforge_engine::{RunOptions, Store};
use serde_json::json;

const TURNS: &str = "- calls:\n    - fetch: { url: \"https://www.rust-lang.org\" }\n- text: Rust is a systems language.\n";

fn traced(host: promptforge_engine::Host, text: &str) -> (promptforge_engine::Outcome, Trace) {
    let options = RunOptions {
        seed: Some(1),
        trace: true,
        ..Default::default()
    };
    let outcome = run_with(text, host, Arc::new(Store::in_memory()), options);
    let trace = outcome.trace.clone().expect("a trace was asked for");
    (outcome, trace)
}

fn fetch_prompt() -> String {
    let code = "log('asking')\nlocal msgs = messages.new():system('Be brief.'):user('What is Rust?')\nlocal reply = models.loop(msgs)\nreturn reply";
    let body = format!("## S\n\n{}", lua(&format!("tools.add('fetch')\n{code}")));
    prompt(&web_frontmatter(&[("fetch", "acme/web/fetch")]), &body)
}

#[test]
fn a_traced_tool_loop_shows_rounds_calls_and_the_exact_requests() {
    let tool = TestTool::new("acme/web/fetch")
        .untrusted()
        .output("<h1>Rust</h1>");
    let h = TestHost::new(TURNS, "acme/web", vec![tool]);
    let requests = h.requests.clone();
    let (outcome, trace) = traced(h.host, &fetch_prompt());
    assert_eq!(
        result(&outcome).as_deref(),
        Some("Rust is a systems language.")
    );
    assert_eq!(trace.run_id, RunIdentity::new(Some(1)).unwrap().run_id);

    let names: Vec<(String, Option<u64>)> =
        trace.spans.iter().map(|s| (s.name(), s.parent)).collect();
    assert_eq!(
        names,
        [
            ("run".to_owned(), None),
            ("H1 pass".to_owned(), Some(1)),
            ("section S".to_owned(), Some(1)),
            ("chat w".to_owned(), Some(3)),
            ("execute_tool fetch".to_owned(), Some(3)),
            ("chat w".to_owned(), Some(3)),
        ]
    );
    assert!(trace
        .spans
        .iter()
        .all(|s| s.end_nanos.is_some() && s.error.is_none()));
    let section = &trace.spans[2];
    assert_eq!(section.line, Some(14), "the heading's line");
    assert_eq!(
        section.events.iter().map(|e| &e.kind).collect::<Vec<_>>(),
        [&EventKind::Log {
            line: "asking".into()
        }]
    );
    match &trace.spans[0].kind {
        SpanKind::Run { title, result } => {
            assert_eq!(title, "Title");
            assert_eq!(result.as_deref(), Some("Rust is a systems language."));
        }
        other => panic!("the first span is the run, not {other:?}"),
    }

    // Each round's request is what the model received, and its reply what it said.
    let received = requests.lock().unwrap();
    let rounds: Vec<_> = trace.rounds().collect();
    assert_eq!(rounds.len(), 2);
    for ((span, round), request) in rounds.iter().zip(received.iter()) {
        assert_eq!(round.request, request.as_json());
        assert_eq!(span.line, Some(20), "the models.loop call's line");
        assert_eq!(
            (round.label.as_str(), round.provider.as_str()),
            ("w", "script")
        );
        assert!(
            round.wire.is_none(),
            "the scripted model sends nothing on a wire"
        );
    }
    assert_eq!(rounds[0].1.index, 1);
    assert_eq!(rounds[1].1.index, 2);
    assert_eq!(
        rounds[0].1.request["tools"][0]["name"],
        json!("fetch"),
        "the tools offered, with their names"
    );
    let first_reply = rounds[0].1.reply.as_ref().expect("a reply");
    assert_eq!(
        first_reply.tool_calls,
        [
            json!({"id": "call_1_1", "name": "fetch", "arguments": "{\"url\":\"https://www.rust-lang.org\"}"})
        ]
    );
    assert_eq!(
        rounds[1].1.reply.as_ref().map(|r| r.content.as_str()),
        Some("Rust is a systems language.")
    );

    let calls: Vec<_> = trace.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    let (call_span, call) = calls[0];
    assert_eq!(
        call_span.line,
        Some(20),
        "a model's call is on its models.loop's line"
    );
    assert_eq!(call.alias, "fetch");
    assert_eq!(call.tool.as_deref(), Some("acme/web/fetch"));
    assert_eq!(
        (call.call_id.as_str(), call.caller.as_str()),
        ("call_1_1", "model")
    );
    assert_eq!(call.arguments, r#"{"url":"https://www.rust-lang.org"}"#);
    assert_eq!(call.output.as_deref(), Some("<h1>Rust</h1>"));
    assert_eq!(call.trust.as_deref(), Some("untrusted"));
}

#[test]
fn script_calls_chains_failures_and_jumps_are_traced() {
    let tool = TestTool::new("acme/web/fetch").fails("unreachable");
    let h = TestHost::new("[]", "acme/web", vec![tool]);
    let code = "local ok = pcall(tools.call, 'fetch', { url = 'x' })\ncall('## B')\njump('## C')";
    let body = format!(
        "## A\n\n{}## B\n\n{}## C\n\n{}",
        lua(code),
        lua("log('in B')\nreturn 'b'"),
        lua("error('stop here')")
    );
    let text = prompt(&web_frontmatter(&[("fetch", "acme/web/fetch")]), &body);
    let (outcome, trace) = traced(h.host, &text);
    let error = outcome.error.as_ref().expect("C fails the run");
    assert!(error.message.contains("stop here"), "{error:?}");
    let names: Vec<String> = trace.spans.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "run",
            "H1 pass",
            "section A",
            "execute_tool fetch",
            "call",
            "section B",
            "section C"
        ]
    );
    let (call_span, call) = trace.tool_calls().next().unwrap();
    assert_eq!(call.caller, "script");
    assert_eq!(
        call_span.line,
        Some(17),
        "a script's call is on its own line"
    );
    assert_eq!(call_span.error.as_deref(), Some("unreachable"));
    let chain = &trace.spans[4];
    assert_eq!(
        trace.spans[5].parent,
        Some(chain.id),
        "B runs in the call chain"
    );
    let a = &trace.spans[2];
    assert_eq!(
        a.events.last().map(|e| &e.kind),
        Some(&EventKind::Jump { target: "C".into() })
    );
    let c = &trace.spans[6];
    assert!(c.error.as_deref().is_some_and(|e| e.contains("stop here")));
    assert!(trace.spans[0].error.is_some(), "the run failed");
}

#[test]
fn an_untraced_run_has_no_trace() {
    let outcome = run(&section("return 'x'"), "");
    assert_eq!(outcome.trace, None);
}

#[test]
fn a_trace_past_its_limit_drops_spans_and_the_run_goes_on() {
    let host = limited(Limits {
        trace_bytes: 1200,
        ..Limits::default()
    });
    let mut body = String::new();
    for i in 0..20 {
        body.push_str(&format!("## S{i}\n\n{}", lua("log('x')")));
    }
    let (outcome, trace) = traced(host, &prompt("", &body));
    assert_eq!(outcome.error, None);
    assert!(trace.dropped_spans > 0);
    assert!(trace.spans.len() < 22);
    assert_eq!(trace.spans.len() as u64 + trace.dropped_spans, 22);
}

#[test]
fn an_answer_to_input_ask_is_an_event_of_its_section() {
    let mut host = promptforge_engine::Host::offline();
    let answers = promptforge_engine::input::ScriptedInput::new(["Ada".to_owned()]);
    host.set_input(Some(Arc::new(answers)));
    let (outcome, trace) = traced(host, &section("return input.ask('name?')"));
    assert_eq!(result(&outcome).as_deref(), Some("Ada"));
    let section = trace
        .spans
        .iter()
        .find(|s| s.name() == "section Main")
        .unwrap();
    assert_eq!(
        section.events.iter().map(|e| &e.kind).collect::<Vec<_>>(),
        [&EventKind::Ask {
            question: "name?".into(),
            answer: Some("Ada".into())
        }]
    );
}

#[test]
fn a_round_without_reported_usage_gets_an_estimate() {
    let h = TestHost::new("- text: hello world\n", "acme/web", Vec::new());
    let text = prompt(
        "models:\n  w: {}\n",
        &section_body("return models.infer('hello world')"),
    );
    let (_, trace) = traced(h.host, &text);
    let (_, round) = trace.rounds().next().expect("a round");
    let usage = round.usage.expect("an estimate");
    assert!(usage.estimated);
    // "hello world" is 2 tokens, with 3 for the message and 3 for the reply.
    assert_eq!((usage.input_tokens, usage.output_tokens), (8, 2));
    assert_eq!(trace.total_tokens(), Some(usage));
}
