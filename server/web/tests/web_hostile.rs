//! `promptforge/web/fetch` against hostile pages served from 127.0.0.1: elements
//! nested 10,000 and 100,000 deep once overflowed the stack in the HTML-to-Markdown
//! conversion and aborted the whole process. Every fetch here runs on a tokio worker
//! thread with the default 2 MiB stack; the page comes back flattened, with a note.

mod web_common;

use promptforge_engine::harness::{Tool, ToolOutput, Trust};
use promptforge_engine::testing::http::{Reply, Server};
use promptforge_engine::testing::*;
use promptforge_web::content::MAX_DEPTH;
use promptforge_web::messages;
use promptforge_web::{AddressPolicy, FetchSettings, FetchTool};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use web_common::web_config_host;

/// A tokio worker's stack, as `fetch` gets it in the CLI and the language server.
const WORKER_STACK: usize = 2 * 1024 * 1024;

/// A runtime whose workers have [`WORKER_STACK`].
fn runtime() -> tokio::runtime::Runtime {
    runtime_builder()
        .thread_stack_size(WORKER_STACK)
        .build()
        .expect("a runtime")
}

/// A page of `open` repeated `depth` times around a text.
fn nested(open: &str, depth: usize) -> String {
    format!(
        "<!doctype html><html><body><h1>Hostile</h1>{}bottom text</body></html>",
        open.repeat(depth)
    )
}

/// Serves `pages` in turn and fetches each on a worker thread.
fn fetch_all(settings: FetchSettings, pages: Vec<String>) -> Vec<ToolOutput> {
    let runtime = runtime();
    let count = pages.len();
    let replies = pages
        .iter()
        .map(|page| Reply::body(200, "text/html; charset=utf-8", page))
        .collect();
    let server = runtime.block_on(Server::start(replies));
    let tool = std::sync::Arc::new(FetchTool::new(settings));
    (0..count)
        .map(|_| {
            let tool = tool.clone();
            let arguments = json!({ "url": server.url() }).to_string();
            let work = runtime.spawn(async move {
                tool.call(&arguments, &CancellationToken::new())
                    .await
                    .expect("the fetch succeeds")
            });
            runtime.block_on(work).expect("the worker did not panic")
        })
        .collect()
}

fn loopback() -> FetchSettings {
    FetchSettings {
        policy: AddressPolicy::allow_all(),
        ..FetchSettings::default()
    }
}

fn note() -> String {
    messages::fetch_deep_note(MAX_DEPTH)
}

#[test]
fn deeply_nested_pages_come_back_flattened_with_a_note() {
    let mut pages = Vec::new();
    let mut names = Vec::new();
    for open in ["<b>", "<div>", "<ul><li>", "<table><tr><td>"] {
        for depth in [10_000, 100_000] {
            pages.push(nested(open, depth));
            names.push(format!("{open} x {depth}"));
        }
    }
    for (output, name) in fetch_all(loopback(), pages).iter().zip(&names) {
        assert_eq!(output.trust, Trust::Untrusted, "{name}");
        assert!(output.text.starts_with("# Hostile\n\n"), "{name}");
        assert!(output.text.contains("bottom text"), "{name}");
        assert!(output.text.ends_with(&format!("\n\n{}", note())), "{name}");
    }
}

#[test]
fn a_normal_page_has_no_note() {
    let page = format!(
        "<html><body>{}<h2>Deep enough</h2><ul><li>a<ul><li>b</li></ul></li></ul>{}</body></html>",
        "<div>".repeat(100),
        "</div>".repeat(100)
    );
    let outputs = fetch_all(loopback(), vec![page]);
    assert_eq!(outputs[0].text, "## Deep enough\n\n*   a\n    *   b");
}

#[test]
fn a_deep_page_cut_at_the_size_limit_carries_both_notes() {
    let settings = FetchSettings {
        max_bytes: 60_000,
        ..loopback()
    };
    let outputs = fetch_all(settings, vec![nested("<b>", 100_000)]);
    let text = &outputs[0].text;
    assert!(
        text.ends_with(&format!(
            "\n\n{}\n\n{}",
            note(),
            messages::fetch_cut_note(60_000)
        )),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
}

#[test]
fn a_prompt_fetching_a_hostile_page_runs_to_its_end() {
    let host = web_config_host(true);
    let runtime = runtime();
    let server = runtime.block_on(Server::start(vec![Reply::body(
        200,
        "text/html",
        &nested("<b>", 10_000),
    )]));
    let outcome = run_on(&page_fetcher(), host, &server.url(), Some(3));
    let text = result(&outcome).unwrap();
    assert!(text.contains("<untrusted_input_"), "{text}");
    assert!(text.contains("bottom text"), "{text}");
    assert!(text.contains(&note()), "{text}");
}
