//! `promptforge/web/fetch` against real HTTP servers on 127.0.0.1, with private
//! addresses allowed: HTML to Markdown, charsets, redirects, the size and time
//! limits, cancellation and the short failure texts.

use std::time::{Duration, Instant};

use promptforge_engine::harness::{Tool, ToolError, ToolOutput, Trust};
use promptforge_engine::testing::http::{refusing_url, Reply, Server};
use promptforge_web::{AddressPolicy, FetchSettings, FetchTool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn tool() -> FetchTool {
    FetchTool::new(FetchSettings {
        policy: AddressPolicy::allow_all(),
        ..FetchSettings::default()
    })
}

async fn fetch_with(tool: &FetchTool, url: &str) -> Result<ToolOutput, ToolError> {
    let arguments = json!({ "url": url }).to_string();
    tool.call(&arguments, &CancellationToken::new()).await
}

async fn fetch(url: &str) -> Result<ToolOutput, ToolError> {
    fetch_with(&tool(), url).await
}

#[tokio::test]
async fn html_becomes_untrusted_markdown() {
    let page = "<!doctype html><html><head><title>Forge</title><style>p{}</style></head>\
        <body><h1>Prompt Forge</h1><p>Write <em>prompts</em> as <a href=\"/docs\">documents</a>.</p>\
        <ul><li>one</li><li>two</li></ul><script>track()</script></body></html>";
    let server = Server::start(vec![Reply::body(200, "text/html; charset=utf-8", page)]).await;
    let output = fetch(&format!("{}/page", server.url())).await.unwrap();
    assert_eq!(output.trust, Trust::Untrusted);
    assert_eq!(
        output.text,
        format!(
            "# Prompt Forge\n\nWrite *prompts* as [documents]({}/docs).\n\n*   one\n*   two",
            server.url()
        )
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path, "/page");
    assert!(requests[0]
        .header("user-agent")
        .unwrap()
        .starts_with("promptforge/"));
}

#[tokio::test]
async fn a_windows_1252_page_is_decoded_from_the_header() {
    let body = b"<html><body><p>Caf\xe9 cr\xe8me \x80 5</p></body></html>";
    let server = Server::start(vec![Reply::bytes(
        200,
        "text/html; charset=windows-1252",
        body,
    )])
    .await;
    assert_eq!(fetch(&server.url()).await.unwrap().text, "Café crème € 5");
}

#[tokio::test]
async fn a_latin1_page_is_decoded_from_its_meta_charset() {
    let body = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"></head><body><p>Gr\xfc\xdfe</p></body></html>";
    let server = Server::start(vec![Reply::bytes(200, "text/html", body)]).await;
    assert_eq!(fetch(&server.url()).await.unwrap().text, "Grüße");
}

#[tokio::test]
async fn a_utf8_meta_charset_page_is_decoded() {
    let body = "<html><head><meta charset=\"utf-8\"></head><body><p>日本語 — ✓</p></body></html>";
    let server = Server::start(vec![Reply::body(200, "text/html", body)]).await;
    assert_eq!(fetch(&server.url()).await.unwrap().text, "日本語 — ✓");
}

#[tokio::test]
async fn text_and_json_pass_as_they_are() {
    let server = Server::start(vec![
        Reply::body(200, "text/plain; charset=utf-8", "line <one>\nline two\n"),
        Reply::json(200, "{\"a\": [1, 2]}"),
    ])
    .await;
    assert_eq!(
        fetch(&server.url()).await.unwrap().text,
        "line <one>\nline two\n"
    );
    assert_eq!(fetch(&server.url()).await.unwrap().text, "{\"a\": [1, 2]}");
}

#[tokio::test]
async fn other_media_types_fail_shortly() {
    let server = Server::start(vec![Reply::bytes(200, "image/png", b"\x89PNG\r\n")]).await;
    assert_eq!(
        fetch(&server.url()).await.unwrap_err().message,
        "fetch failed: unsupported content type image/png"
    );
}

#[tokio::test]
async fn five_redirects_are_followed() {
    // Relative locations and every redirect status.
    let server = Server::start(vec![
        Reply::redirect(301, "/two"),
        Reply::redirect(302, "three"),
        Reply::redirect(303, "/four"),
        Reply::redirect(307, "/five"),
        Reply::redirect(308, "/six"),
        Reply::body(200, "text/plain", "arrived"),
    ])
    .await;
    let output = fetch(&format!("{}/one", server.url())).await.unwrap();
    assert_eq!(output.text, "arrived");
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/one", "/two", "/three", "/four", "/five", "/six"]);
}

#[tokio::test]
async fn a_sixth_redirect_is_refused() {
    let server = Server::start(
        (0..7)
            .map(|i| Reply::redirect(302, &format!("/r{i}")))
            .collect(),
    )
    .await;
    assert_eq!(
        fetch(&server.url()).await.unwrap_err().message,
        "fetch refused: more than 5 redirects"
    );
    assert_eq!(server.requests().len(), 6);
}

#[tokio::test]
async fn a_redirect_to_another_scheme_is_refused() {
    let server = Server::start(vec![Reply::redirect(302, "file:///etc/passwd")]).await;
    assert_eq!(
        fetch(&server.url()).await.unwrap_err().message,
        "fetch refused: after a redirect, only http and https URLs can be fetched, not file:"
    );
}

#[tokio::test]
async fn a_larger_page_is_cut_at_the_limit_with_a_note() {
    let body = "abcdefghij".repeat(100);
    let server = Server::start(vec![Reply::body(200, "text/plain", &body)]).await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::allow_all(),
        max_bytes: 25,
        ..FetchSettings::default()
    });
    assert_eq!(
        fetch_with(&tool, &server.url()).await.unwrap().text,
        "abcdefghijabcdefghijabcde\n\n[fetch: the page is larger than 25 bytes; only the first 25 bytes were read]"
    );
}

#[tokio::test]
async fn a_cut_inside_a_character_drops_the_broken_character() {
    let server = Server::start(vec![Reply::body(200, "text/plain; charset=utf-8", "aaé")]).await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::allow_all(),
        max_bytes: 3,
        ..FetchSettings::default()
    });
    let text = fetch_with(&tool, &server.url()).await.unwrap().text;
    assert!(
        text.starts_with("aa\n\n[fetch: the page is larger than 3 bytes"),
        "{text}"
    );
}

#[tokio::test]
async fn a_page_exactly_at_the_limit_is_whole() {
    let server = Server::start(vec![Reply::body(200, "text/plain", "12345")]).await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::allow_all(),
        max_bytes: 5,
        ..FetchSettings::default()
    });
    assert_eq!(
        fetch_with(&tool, &server.url()).await.unwrap().text,
        "12345"
    );
}

#[tokio::test]
async fn a_stalled_server_times_out() {
    let server = Server::start(vec![
        Reply::body(200, "text/plain", "late").delay_head(Duration::from_secs(20))
    ])
    .await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::allow_all(),
        timeout: Duration::from_millis(700),
        ..FetchSettings::default()
    });
    let started = Instant::now();
    let error = fetch_with(&tool, &server.url()).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(error.message, "fetch failed: timed out after 700 ms");
    assert!(
        took >= Duration::from_millis(650) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_body_that_stalls_times_out_too() {
    let mut reply = Reply::body(200, "text/plain", "");
    reply.chunks = vec![b"first ".to_vec(), b"second".to_vec()];
    reply.chunked = true;
    let server = Server::start(vec![reply.stall_after(1, Duration::from_secs(20))]).await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::allow_all(),
        timeout: Duration::from_secs(1),
        ..FetchSettings::default()
    });
    assert_eq!(
        fetch_with(&tool, &server.url()).await.unwrap_err().message,
        "fetch failed: timed out after 1 s"
    );
}

#[tokio::test]
async fn cancellation_returns_at_once() {
    let server = Server::start(vec![
        Reply::body(200, "text/plain", "late").delay_head(Duration::from_secs(20))
    ])
    .await;
    let tool = tool();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let arguments = json!({ "url": server.url() }).to_string();
    let error = tool.call(&arguments, &cancel).await.unwrap_err();
    assert_eq!(error.message, "fetch cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_error_status_fails_shortly() {
    let server = Server::start(vec![Reply::body(404, "text/html", "<h1>Not here</h1>")]).await;
    assert_eq!(
        fetch(&server.url()).await.unwrap_err().message,
        "fetch failed: HTTP 404"
    );
}

#[tokio::test]
async fn a_closed_port_fails_shortly() {
    let url = refusing_url().await;
    assert_eq!(
        fetch(&url).await.unwrap_err().message,
        "fetch failed: could not connect to 127.0.0.1"
    );
}

#[tokio::test]
async fn other_schemes_and_bad_arguments_are_refused() {
    for (url, want) in [
        (
            "ftp://127.0.0.1/file",
            "fetch refused: only http and https URLs can be fetched, not ftp:",
        ),
        (
            "file:///etc/passwd",
            "fetch refused: only http and https URLs can be fetched, not file:",
        ),
        (
            "javascript:alert(1)",
            "fetch refused: only http and https URLs can be fetched, not javascript:",
        ),
        (
            "not a url",
            "fetch refused: \"not a url\" is not a valid URL",
        ),
    ] {
        assert_eq!(fetch(url).await.unwrap_err().message, want, "{url}");
    }
    let tool = tool();
    let cancel = CancellationToken::new();
    assert_eq!(
        tool.call("{\"href\": \"http://x/\"}", &cancel)
            .await
            .unwrap_err()
            .message,
        "fetch refused: unknown argument \"href\""
    );
    assert_eq!(
        tool.call("[]", &cancel).await.unwrap_err().message,
        "fetch refused: the arguments must be a JSON object with a string \"url\""
    );
}

#[tokio::test]
async fn the_tool_describes_itself() {
    let tool = tool();
    assert_eq!(tool.id().as_str(), "promptforge/web/fetch");
    assert_eq!(tool.wire_name(), "fetch");
    assert_eq!(tool.trust(), Trust::Untrusted);
    assert_eq!(tool.parameters()["required"], json!(["url"]));
    assert_eq!(tool.parameters()["properties"]["url"]["type"], "string");
}
