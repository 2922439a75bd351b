//! `promptforge/web/search` against a search endpoint on 127.0.0.1 replaying the
//! Brave Search API: the request as sent, the formatted results, the parameter
//! bounds, a missing key variable, and search left out when it is not configured.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::harness::{Plugin, Tool, ToolError, ToolOutput, Trust};
use promptforge_engine::host::{Config, Extensions};
use promptforge_engine::testing::activation;
use promptforge_engine::testing::http::{refusing_url, Reply, Server};
use promptforge_engine::Host;
use promptforge_web::{WebPlugin, PLUGIN_ID};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const KEY: &str = "brv-test-7c1e";

fn brave_reply() -> String {
    json!({
        "type": "search",
        "query": {"original": "rust async"},
        "web": {"type": "search", "results": [
            {"title": "Asynchronous Programming in <strong>Rust</strong>", "url": "https://rust-lang.github.io/async-book/",
             "description": "A book about <strong>async</strong> &amp; await in Rust.", "language": "en"},
            {"title": "Tokio - An asynchronous Rust runtime", "url": "https://tokio.rs/",
             "description": "Tokio is an   event-driven, non-blocking I/O platform."},
            {"title": "No description", "url": "https://example.org/bare"}
        ]}
    })
    .to_string()
}

fn web_config(text: &str) -> Config {
    Config::parse(text, Path::new("promptforge.toml")).unwrap()
}

fn plugin(endpoint: &str, env: &[(&str, &str)]) -> WebPlugin {
    let config = web_config(&format!(
        "[web]\nsearch_endpoint = \"{endpoint}\"\nsearch_key_env = \"PF_TEST_SEARCH_KEY\"\n"
    ));
    WebPlugin::from_config(&config.web, &|name| {
        env.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    })
}

async fn tools_of(plugin: &dyn Plugin) -> Vec<Arc<dyn Tool>> {
    plugin
        .activate(activation(&CancellationToken::new()))
        .await
        .unwrap()
}

async fn search_tool(endpoint: &str) -> Arc<dyn Tool> {
    let tools = tools_of(&plugin(endpoint, &[("PF_TEST_SEARCH_KEY", KEY)])).await;
    tools
        .into_iter()
        .find(|t| t.id().as_str() == "promptforge/web/search")
        .unwrap()
}

async fn search(tool: &dyn Tool, arguments: Value) -> Result<ToolOutput, ToolError> {
    tool.call(&arguments.to_string(), &CancellationToken::new())
        .await
}

fn query_pairs(path: &str) -> Vec<(String, String)> {
    let url = url::Url::parse(&format!("http://x{path}")).unwrap();
    url.query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[tokio::test]
async fn a_search_sends_the_brave_request_and_lists_the_results() {
    let server = Server::start(vec![Reply::json(200, &brave_reply())]).await;
    let tool = search_tool(&format!("{}/res/v1/web/search", server.url())).await;
    let output = search(
        tool.as_ref(),
        json!({
            "query": "rust async",
            "count": 3,
            "freshness": "pw",
            "safe_search": "strict",
            "domains_include": ["rust-lang.github.io", "tokio.rs"],
            "domains_exclude": ["spam.example"],
            "country": "US",
            "language": "en"
        }),
    )
    .await
    .unwrap();
    assert_eq!(output.trust, Trust::Untrusted);
    insta::assert_snapshot!("brave_results_as_listed", output.text);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "GET");
    assert!(
        request.path.starts_with("/res/v1/web/search?"),
        "{}",
        request.path
    );
    assert_eq!(request.header("x-subscription-token"), Some(KEY));
    assert_eq!(request.header("accept"), Some("application/json"));
    assert_eq!(
        query_pairs(&request.path),
        [
            (
                "q",
                "rust async (site:rust-lang.github.io OR site:tokio.rs) -site:spam.example"
            ),
            ("count", "3"),
            ("freshness", "pw"),
            ("safesearch", "strict"),
            ("country", "US"),
            ("search_lang", "en"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
}

#[tokio::test]
async fn only_the_query_is_sent_when_nothing_else_is_given() {
    let server = Server::start(vec![Reply::json(200, &brave_reply())]).await;
    let tool = search_tool(&server.url()).await;
    search(tool.as_ref(), json!({"query": "  tokio  "}))
        .await
        .unwrap();
    assert_eq!(
        query_pairs(&server.requests()[0].path),
        [("q".to_owned(), "tokio".to_owned())]
    );
}

#[tokio::test]
async fn count_caps_the_listed_results() {
    let server = Server::start(vec![Reply::json(200, &brave_reply())]).await;
    let tool = search_tool(&server.url()).await;
    let output = search(tool.as_ref(), json!({"query": "rust", "count": 1}))
        .await
        .unwrap();
    assert_eq!(
        output.text,
        "1. Asynchronous Programming in Rust\n   https://rust-lang.github.io/async-book/\n   A book about async & await in Rust."
    );
}

#[tokio::test]
async fn no_results_say_so() {
    let server = Server::start(vec![
        Reply::json(200, "{\"type\":\"search\",\"web\":{\"results\":[]}}"),
        Reply::json(200, "{}"),
    ])
    .await;
    let tool = search_tool(&server.url()).await;
    for _ in 0..2 {
        let output = search(tool.as_ref(), json!({"query": "zzqx"}))
            .await
            .unwrap();
        assert_eq!(output.text, "No results for \"zzqx\".");
    }
}

#[tokio::test]
async fn service_failures_are_short() {
    let server = Server::start(vec![
        Reply::json(401, "{\"error\": {\"detail\": \"bad token sk-secret\"}}"),
        Reply::body(200, "text/html", "<html>portal</html>"),
    ])
    .await;
    let tool = search_tool(&server.url()).await;
    assert_eq!(
        search(tool.as_ref(), json!({"query": "a"}))
            .await
            .unwrap_err()
            .message,
        "search failed: the search service answered HTTP 401"
    );
    assert_eq!(
        search(tool.as_ref(), json!({"query": "a"}))
            .await
            .unwrap_err()
            .message,
        "search failed: the search service sent an unreadable reply"
    );
    let closed = search_tool(&refusing_url().await).await;
    assert_eq!(
        search(closed.as_ref(), json!({"query": "a"}))
            .await
            .unwrap_err()
            .message,
        "search failed: the search service could not be reached"
    );
}

#[tokio::test]
async fn arguments_out_of_bounds_are_refused_without_a_request() {
    let server = Server::start(vec![]).await;
    let tool = search_tool(&server.url()).await;
    let many: Vec<String> = (0..21).map(|i| format!("d{i}.example")).collect();
    for (arguments, want) in [
        (
            json!({}),
            "search refused: query must be a non-empty string",
        ),
        (
            json!({"query": "   "}),
            "search refused: query must be a non-empty string",
        ),
        (
            json!({"query": 7}),
            "search refused: query must be a non-empty string",
        ),
        (
            json!({"query": "a", "count": 0}),
            "search refused: count must be an integer from 1 to 20",
        ),
        (
            json!({"query": "a", "count": 21}),
            "search refused: count must be an integer from 1 to 20",
        ),
        (
            json!({"query": "a", "count": 2.5}),
            "search refused: count must be an integer from 1 to 20",
        ),
        (
            json!({"query": "a", "freshness": "pq"}),
            "search refused: freshness must be one of pd, pw, pm, py",
        ),
        (
            json!({"query": "a", "safe_search": "on"}),
            "search refused: safe_search must be one of off, moderate, strict",
        ),
        (
            json!({"query": "a", "domains_include": many}),
            "search refused: domains_include must be a list of at most 20 domain names",
        ),
        (
            json!({"query": "a", "domains_exclude": ["a b.com"]}),
            "search refused: domains_exclude must be a list of at most 20 domain names",
        ),
        (
            json!({"query": "a", "domains_exclude": "x.com"}),
            "search refused: domains_exclude must be a list of at most 20 domain names",
        ),
        (
            json!({"query": "a", "country": "U S"}),
            "search refused: country must be a short code of letters, digits, - and _",
        ),
        (
            json!({"query": "a", "language": ""}),
            "search refused: language must be a short code of letters, digits, - and _",
        ),
        (
            json!({"query": "a", "page": 2}),
            "search refused: unknown argument \"page\"",
        ),
        (
            json!(["a"]),
            "search refused: the arguments must be a JSON object",
        ),
    ] {
        let message = search(tool.as_ref(), arguments.clone())
            .await
            .unwrap_err()
            .message;
        assert_eq!(message, want, "{arguments}");
    }
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn twenty_domains_are_accepted() {
    let server = Server::start(vec![Reply::json(200, &brave_reply())]).await;
    let tool = search_tool(&server.url()).await;
    let twenty: Vec<String> = (0..20).map(|i| format!("d{i}.example")).collect();
    search(
        tool.as_ref(),
        json!({"query": "a", "count": 20, "domains_exclude": twenty}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_missing_key_variable_fails_each_call_naming_it() {
    let server = Server::start(vec![]).await;
    let tools = tools_of(&plugin(&server.url(), &[])).await;
    let ids: Vec<&str> = tools.iter().map(|t| t.id().as_str()).collect();
    assert_eq!(ids, ["promptforge/web/fetch", "promptforge/web/search"]);
    let message = search(tools[1].as_ref(), json!({"query": "a"}))
        .await
        .unwrap_err()
        .message;
    assert_eq!(
        message,
        "search failed: the search key is not configured (the environment variable PF_TEST_SEARCH_KEY is not set)"
    );
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn without_a_key_variable_no_key_header_is_sent() {
    let server = Server::start(vec![Reply::json(200, &brave_reply())]).await;
    let config = web_config(&format!("[web]\nsearch_endpoint = \"{}\"\n", server.url()));
    let plugin = WebPlugin::from_config(&config.web, &|_| None);
    let tools = tools_of(&plugin).await;
    search(tools[1].as_ref(), json!({"query": "a"}))
        .await
        .unwrap();
    assert_eq!(server.requests()[0].header("x-subscription-token"), None);
}

#[tokio::test]
async fn search_is_not_contributed_when_unconfigured() {
    let plugin =
        WebPlugin::from_config(&web_config("[web]\nmax_fetch_bytes = 1000\n").web, &|_| {
            None
        });
    assert!(!plugin.has_search());
    let ids: Vec<String> = tools_of(&plugin)
        .await
        .iter()
        .map(|t| t.id().to_string())
        .collect();
    assert_eq!(ids, ["promptforge/web/fetch"]);
}

#[tokio::test]
async fn a_host_with_the_web_plugin_registered_offers_fetch_and_search_when_configured() {
    let mut extensions = Extensions::new();
    promptforge_web::register(&mut extensions);
    let offline = Host::offline_with(&extensions);
    assert!(offline.harness().ids().contains(&PLUGIN_ID.to_owned()));
    let ids: Vec<String> = tools_of(offline.harness().get(PLUGIN_ID).unwrap().as_ref())
        .await
        .iter()
        .map(|t| t.id().to_string())
        .collect();
    assert_eq!(ids, ["promptforge/web/fetch"]);

    let config = web_config(
        "[web]\nsearch_endpoint = \"http://127.0.0.1:9/s\"\nsearch_key_env = \"PF_TEST_SEARCH_KEY\"\n",
    );
    let host = Host::with_extensions(
        config,
        &|name| (name == "PF_TEST_SEARCH_KEY").then(|| KEY.to_owned()),
        &extensions,
    )
    .unwrap();
    let ids: Vec<String> = tools_of(host.harness().get(PLUGIN_ID).unwrap().as_ref())
        .await
        .iter()
        .map(|t| t.id().to_string())
        .collect();
    assert_eq!(ids, ["promptforge/web/fetch", "promptforge/web/search"]);
}

#[tokio::test]
async fn the_schema_carries_the_bounds() {
    let server = Server::start(vec![]).await;
    let tool = search_tool(&server.url()).await;
    assert_eq!(tool.wire_name(), "search");
    assert_eq!(tool.trust(), Trust::Untrusted);
    let schema = tool.parameters();
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["properties"]["count"]["minimum"], json!(1));
    assert_eq!(schema["properties"]["count"]["maximum"], json!(20));
    assert_eq!(
        schema["properties"]["freshness"]["enum"],
        json!(["pd", "pw", "pm", "py"])
    );
    assert_eq!(
        schema["properties"]["safe_search"]["enum"],
        json!(["off", "moderate", "strict"])
    );
    assert_eq!(
        schema["properties"]["domains_include"]["maxItems"],
        json!(20)
    );
    assert_eq!(
        schema["properties"]["domains_exclude"]["maxItems"],
        json!(20)
    );
    assert_eq!(schema["properties"]["country"]["type"], json!("string"));
    assert_eq!(schema["properties"]["language"]["type"], json!("string"));
}

#[tokio::test]
async fn cancellation_returns_at_once() {
    let server = Server::start(vec![
        Reply::json(200, &brave_reply()).delay_head(Duration::from_secs(20))
    ])
    .await;
    let tool = search_tool(&server.url()).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = tool.call("{\"query\":\"a\"}", &cancel).await.unwrap_err();
    assert_eq!(error.message, "search cancelled");
    assert!(started.elapsed() < Duration::from_secs(2));
}
