//! `promptforge/web/fetch` end to end: a prompt declares `promptforge/web`, binds
//! `fetch` and calls it from Lua against a loopback server, on a Host whose `[web]`
//! allows private addresses; the page comes back in the untrusted envelope.

#[path = "support/http.rs"]
mod http;
mod run_common;

use std::path::Path;

use http::{Reply, Server};
use promptforge_engine::host::Config;
use promptforge_engine::Host;
use run_common::*;

fn page_fetcher() -> String {
    prompt(
        "plugins:\n  - promptforge/web\ntools:\n  fetch: promptforge/web/fetch\n",
        &format!(
            "## Fetch\n\n{}",
            lua("return tools.call('fetch', { url = args })")
        ),
    )
}

fn host(allow_private: bool) -> Host {
    let text = format!("[web]\nallow_private_addresses = {allow_private}\n");
    let config = Config::parse(&text, Path::new("promptforge.toml")).unwrap();
    Host::with_env(config, &|_| None).unwrap()
}

#[test]
fn a_prompt_fetches_a_page_as_untrusted_markdown() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Server::start(vec![Reply::body(
        200,
        "text/html",
        "<html><body><h2>Release notes</h2><p>All <b>green</b>.</p></body></html>",
    )]));
    let outcome = run_on(&page_fetcher(), host(true), &server.url(), Some(3));
    let text = result(&outcome).unwrap();
    assert!(text.contains("<untrusted_input_"), "{text}");
    assert!(
        text.contains("## Release notes\n\nAll **green**."),
        "{text}"
    );
    assert_eq!(runtime.block_on(async { server.requests().len() }), 1);
}

#[test]
fn a_refused_fetch_fails_the_call_with_its_short_text() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Server::start(vec![Reply::body(200, "text/plain", "x")]));
    let outcome = run_on(&page_fetcher(), host(false), &server.url(), Some(3));
    assert_eq!(
        error(&outcome),
        (
            "Tool".to_owned(),
            "tool call failure: fetch refused: the address 127.0.0.1 is a loopback address"
                .to_owned()
        )
    );
    assert_eq!(server.accepted(), 0);
}
