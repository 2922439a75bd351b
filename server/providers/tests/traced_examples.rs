//! Issue 27: the trace of an example's run on real HTTP providers. The
//! research-brief example runs with its researcher on a loopback
//! OpenAI-compatible server and its writer on a loopback Anthropic server; each
//! round's request in the trace is, after JSON normalisation, the body the
//! server received, in order, and its address is the server's without
//! credentials; the usage is what the servers reported.

// Only some of each wire's helpers are used here.
#[allow(dead_code)]
#[path = "support/anthropic_wire.rs"]
mod anthropic_wire;
#[allow(dead_code)]
#[path = "support/openai_wire.rs"]
mod openai_wire;

use std::path::Path;
use std::sync::Arc;

use promptforge_engine::host::{Config, Extensions};
use promptforge_engine::testing::http::{Reply, Server};
use promptforge_engine::{run_text, Host, NoEvents, RunOptions, Store};
use serde_json::{json, Value};

fn example(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::read_to_string(root.join(path)).expect("the example")
}

/// The researcher's two rounds: a search call, then its notes.
fn researcher_rounds() -> Vec<Reply> {
    let call = openai_wire::call_delta(0, Some("call_S1"), Some("search"), "{\"query\":\"Lua\"}");
    let calls = openai_wire::chunk(call, Value::Null)
        + &openai_wire::chunk(json!({}), json!("tool_calls"))
        + &openai_wire::closing();
    let notes = openai_wire::chunk(json!({ "content": "Lua is small (lua.org)." }), Value::Null)
        + &openai_wire::chunk(json!({}), json!("stop"))
        + &openai_wire::closing();
    vec![Reply::sse(&calls), Reply::sse(&notes)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_round_s_traced_request_is_the_body_its_server_received() {
    let openai = Server::start(researcher_rounds()).await;
    let anthropic = Server::start(vec![Reply::sse(&anthropic_wire::text_stream())]).await;
    let config = format!(
        "[model.researcher]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-4o-mini\"\napi_key_env = \"PF_KEY\"\nretries = 0\n\n[model.writer]\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-sonnet-4\"\napi_key_env = \"PF_KEY\"\nretries = 0\n\n[web]\nsearch_endpoint = \"http://127.0.0.1:9/search\"\n",
        openai.url(),
        anthropic.url()
    );
    let config = Config::parse(&config, Path::new("promptforge.toml")).expect("the configuration");
    let mut extensions = Extensions::new();
    promptforge_providers::register(&mut extensions);
    // The example declares `promptforge/web`, as the shipped Host registers it.
    promptforge_web::register(&mut extensions);
    let env = |name: &str| (name == "PF_KEY").then(|| "sk-secret-key-1234".to_owned());
    let host = Host::with_extensions(config, &env, &extensions).expect("a Host");
    let options = RunOptions {
        args: "What is Lua?".into(),
        seed: Some(5),
        trace: true,
        ..RunOptions::default()
    };
    // The example's labels name no Host model (they run on `echo`); here each
    // names the Host model of its server.
    let text = example("tools/research-brief.md")
        .replacen(
            "  researcher:\n",
            "  researcher:\n    model: researcher\n",
            1,
        )
        .replacen("  writer:\n", "  writer:\n    model: writer\n", 1);
    let store = Arc::new(Store::in_memory());
    let outcome = run_text(&text, Arc::new(host), store, options, Arc::new(NoEvents)).await;
    assert_eq!(outcome.error, None);
    let trace = outcome.trace.expect("a trace");

    let rounds: Vec<_> = trace.rounds().map(|(_, round)| round).collect();
    let providers: Vec<&str> = rounds.iter().map(|r| r.provider.as_str()).collect();
    assert_eq!(providers, ["openai", "openai", "anthropic"]);
    let sent_openai: Vec<Value> = openai.requests().iter().map(|r| r.json()).collect();
    let sent_anthropic: Vec<Value> = anthropic.requests().iter().map(|r| r.json()).collect();
    let wire: Vec<&Value> = rounds
        .iter()
        .map(|r| {
            &r.wire
                .as_ref()
                .expect("an HTTP provider's round has its wire request")
                .body
        })
        .collect();
    assert_eq!(wire[..2], sent_openai.iter().collect::<Vec<_>>()[..]);
    assert_eq!(wire[2..], sent_anthropic.iter().collect::<Vec<_>>()[..]);
    assert_eq!(
        rounds[0].wire.as_ref().map(|w| w.url.clone()),
        Some(format!("{}/v1/chat/completions", openai.url()))
    );
    assert_eq!(
        rounds[2].wire.as_ref().map(|w| w.url.clone()),
        Some(format!("{}/v1/messages", anthropic.url()))
    );
    // The second request carries the search call and its (failed) result.
    assert_eq!(
        sent_openai[1]["messages"][2]["tool_calls"][0]["function"]["name"],
        "search"
    );
    let usage: Vec<_> = rounds
        .iter()
        .map(|r| {
            r.usage
                .map(|u| (u.input_tokens, u.output_tokens, u.estimated))
        })
        .collect();
    assert_eq!(
        usage,
        [
            Some((31, 12, false)),
            Some((31, 12, false)),
            Some((472, 89, false))
        ]
    );
    let serialized = serde_json::to_string(&trace).expect("JSON");
    assert!(
        !serialized.contains("sk-secret-key-1234"),
        "no key in a trace"
    );
    let search = trace
        .tool_calls()
        .find(|(_, c)| c.alias == "search")
        .expect("the search call");
    assert_eq!(search.1.arguments, "{\"query\":\"Lua\"}");
    assert!(search.0.error.is_some(), "the search endpoint is down");
}
