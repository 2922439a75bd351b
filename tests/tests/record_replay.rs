//! Recording a live run as a test (`testing.md`, `promptforge run --record`): a
//! run against a real OpenAI-compatible server and a real web site on loopback is
//! recorded, both servers are stopped, and `promptforge test` replays the case
//! offline and passes; the same case on a prompt changed to call another Harness
//! tool fails with the unscripted-call message.

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_tests::{run_in, Scratch};
use serde_json::json;

const PROMPT: &str = "---
name: summarize
description: Reads one page, then answers
promptforge: 0
plugins:
  - promptforge/web
tools:
  fetch: promptforge/web/fetch
models:
  writer: {}
---

# Summarize

```lua
models.default('writer')
```

## Answer

```lua
tools.add('fetch')
local msgs = messages.new()
  :system('Read the page, then answer in one line.')
  :user(args)
local reply = models.loop(msgs)
log('answered in ' .. #msgs .. ' records')
return reply
```
";

/// One streamed `chat.completion.chunk` event.
fn chunk(delta: serde_json::Value, finish: serde_json::Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-r1", "object": "chat.completion.chunk", "created": 1764412345,
        "model": "m", "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    format!("data: {chunk}\n\n")
}

/// A streamed reply, as OpenAI-compatible servers send it: `deltas`, the finish
/// reason, `[DONE]`.
fn streamed(deltas: &[serde_json::Value], finish: &str) -> Reply {
    let mut body: String = deltas
        .iter()
        .map(|d| chunk(d.clone(), serde_json::Value::Null))
        .collect();
    body += &chunk(json!({}), json!(finish));
    body += "data: [DONE]\n\n";
    Reply::sse(&body)
}

#[test]
fn a_recorded_live_run_replays_offline_and_a_changed_prompt_fails_with_the_unscripted_call() {
    let site = Server::serve_blocking(Answers::by_path([(
        "/rust",
        Reply::body(
            200,
            "text/html; charset=utf-8",
            "<html><body><h1>Rust</h1><p>A language empowering everyone.</p></body></html>",
        ),
    )]));
    let page = format!("{}/rust", site.url());
    let arguments = json!({ "url": page }).to_string();
    let model = Server::serve_blocking(Answers::InOrder(vec![
        streamed(
            &[
                json!({ "role": "assistant", "content": null, "tool_calls": [{
                "index": 0, "id": "call_1", "type": "function",
                "function": { "name": "fetch", "arguments": arguments },
            }] }),
            ],
            "tool_calls",
        ),
        streamed(
            &[
                json!({ "role": "assistant", "content": "Rust empowers everyone." }),
                json!({ "content": "\nSee the page." }),
            ],
            "stop",
        ),
    ]));
    let scratch = Scratch::new("record-replay");
    scratch.write("summarize.md", PROMPT);
    scratch.write(
        "promptforge.toml",
        format!(
            "default_model = \"local\"\n\n[model.local]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\n[web]\nallow_private_addresses = true\nsearch_endpoint = \"http://127.0.0.1:9/search\"\n",
            model.url()
        ),
    );
    let live = run_in(
        scratch.path(),
        &[
            "run",
            // The folder's configuration lets fetch reach the loopback site.
            "--trust",
            "--seed",
            "5",
            "summarize.md",
            "What is Rust?",
            "--record",
            "summarize.test.yaml",
            "--trace",
            "trace.json",
        ],
    );
    assert_eq!(live.code, Some(0), "{}", live.stderr);
    // The recording wrapper keeps the exact request in the trace.
    let trace = std::fs::read_to_string(scratch.path().join("trace.json")).unwrap();
    assert_eq!(
        trace.matches("promptforge.request.body").count(),
        2,
        "both rounds' wire requests are traced"
    );
    assert_eq!(live.stdout, "Rust empowers everyone.\nSee the page.\n");
    assert!(
        live.stderr
            .contains("recorded case \"What is Rust?\" in summarize.test.yaml"),
        "{}",
        live.stderr
    );
    assert_eq!(
        model.requests().len(),
        2,
        "the live run asked the real model twice"
    );
    assert_eq!(site.requests().len(), 1, "and fetched the real page once");
    drop(model);
    drop(site);

    let recorded = std::fs::read_to_string(scratch.path().join("summarize.test.yaml")).unwrap();
    let (file, problems) = promptforge_syntax::test_file::parse(&recorded);
    assert!(problems.is_empty(), "{problems:?}\n{recorded}");
    let case = &file.cases[0];
    assert_eq!(case.seed, Some(5));
    assert_eq!(case.args, "What is Rust?");
    assert_eq!(case.model.as_ref().map(Vec::len), Some(2), "{recorded}");
    assert_eq!(case.tools[0].path.value, "promptforge/web/fetch");
    assert!(
        recorded.contains("result: |-\n        Rust empowers everyone.\n        See the page.\n"),
        "{recorded}"
    );

    let replay = run_in(scratch.path(), &["test", "--trust", "summarize.test.yaml"]);
    assert_eq!(replay.code, Some(0), "{}{}", replay.stdout, replay.stderr);
    assert!(
        replay.stdout.ends_with("1 passed, 0 failed\n"),
        "{}",
        replay.stdout
    );

    scratch.write(
        "summarize.md",
        PROMPT
            .replace(
                "  fetch: promptforge/web/fetch\n",
                "  fetch: promptforge/web/fetch\n  search: promptforge/web/search\n",
            )
            .replace(
                "tools.add('fetch')\n",
                "tools.add('fetch')\ntools.call('search', { query = args })\n",
            ),
    );
    let changed = run_in(scratch.path(), &["test", "--trust", "summarize.test.yaml"]);
    assert_eq!(changed.code, Some(1), "{}", changed.stdout);
    assert!(
        changed
            .stdout
            .contains("unscripted call to promptforge/web/search"),
        "{}",
        changed.stdout
    );
    assert!(
        changed.stdout.ends_with("0 passed, 1 failed\n"),
        "{}",
        changed.stdout
    );
}
