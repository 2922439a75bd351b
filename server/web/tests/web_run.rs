//! `promptforge/web/fetch` end to end: a prompt declares `promptforge/web`, binds
//! `fetch` and calls it from Lua against a loopback server, on a Host whose `[web]`
//! allows private addresses; the page comes back in the untrusted envelope.

mod web_common;

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_engine::testing::*;
use web_common::web_config_host;

#[test]
fn a_prompt_fetches_a_page_as_untrusted_markdown() {
    let server = Server::serve_blocking(Answers::InOrder(vec![Reply::body(
        200,
        "text/html",
        "<html><body><h2>Release notes</h2><p>All <b>green</b>.</p></body></html>",
    )]));
    let outcome = run_on(
        &page_fetcher(),
        web_config_host(true),
        &server.url(),
        Some(3),
    );
    let text = result(&outcome).unwrap();
    assert!(text.contains("<untrusted_input_"), "{text}");
    assert!(
        text.contains("## Release notes\n\nAll **green**."),
        "{text}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_refused_fetch_fails_the_call_with_its_short_text() {
    let server =
        Server::serve_blocking(Answers::InOrder(vec![Reply::body(200, "text/plain", "x")]));
    let outcome = run_on(
        &page_fetcher(),
        web_config_host(false),
        &server.url(),
        Some(3),
    );
    assert_eq!(
        error(&outcome),
        (
            "Tool".to_owned(),
            "tool call failure: fetch refused: the address 127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)"
                .to_owned()
        )
    );
    assert_eq!(server.accepted(), 0);
}
