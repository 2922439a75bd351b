//! The `openai` provider against a real HTTP server on loopback replaying the chat
//! completions wire format (streamed `chat.completion.chunk` events, `[DONE]`).

#[path = "support/openai_wire.rs"]
mod wire;

use std::time::{Duration, Instant};

use promptforge_engine::models::ProviderSettings;
use promptforge_engine::models::{
    ChatMessage, ModelProvider, ModelRequest, Role, ToolCall, ToolSpec,
};
use promptforge_engine::testing::http::{refusing_url, Reply, Server};
use promptforge_providers::openai::OpenAiProvider;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use wire::{chunk, closing, text_stream, tool_call_stream};

const KEY: &str = "sk-pf-test-9f8e7d6c5b4a";

fn settings(base: &str, retries: u32, timeout: Duration) -> ProviderSettings {
    ProviderSettings {
        base_url: Some(format!("{base}/v1")),
        model: "qwen2.5-7b-instruct".into(),
        api_key: Some(KEY.into()),
        timeout,
        retries,
        host_model: "local".into(),
    }
}

fn provider(server: &Server, retries: u32) -> OpenAiProvider {
    OpenAiProvider::new(settings(&server.url(), retries, Duration::from_secs(5)))
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        model: "qwen2.5-7b-instruct".into(),
        messages: vec![ChatMessage::text(Role::User, text)],
        tools: Vec::new(),
        temperature: None,
        max_tokens: None,
    }
}

#[tokio::test]
async fn streamed_text_reply() {
    let server = Server::start(vec![Reply::sse(&text_stream())]).await;
    let provider = provider(&server, 0);
    assert_eq!(provider.kind(), "openai");
    let reply = provider
        .complete(&ask("Salut"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content, "Bonjour, le \"monde\" ✓ — fin.");
    assert!(reply.tool_calls.is_empty());
}

#[tokio::test]
async fn streamed_tool_calls_are_assembled_by_index() {
    let server = Server::start(vec![Reply::sse(&tool_call_stream())]).await;
    let reply = provider(&server, 0)
        .complete(&ask("Weather?"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content, "");
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "call_Wx81".into(),
                name: "get_weather".into(),
                arguments: "{\"city\": \"Paris\", \"unit\": \"celsius\"}".into(),
            },
            ToolCall {
                id: "call_Tm02".into(),
                name: "lookup_time".into(),
                arguments: "{\"zone\":\"Europe/Paris\",\"format\":\"24h\"}".into(),
            },
        ]
    );
}

#[tokio::test]
async fn request_body_and_headers() {
    let server = Server::start(vec![Reply::sse(&text_stream())]).await;
    let schema = json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] });
    let request = ModelRequest {
        model: "qwen2.5-7b-instruct".into(),
        messages: vec![
            ChatMessage::text(Role::System, "You are terse."),
            ChatMessage::text(Role::User, "Weather in Paris and Lyon?"),
            ChatMessage {
                role: Role::Assistant,
                content: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "weather".into(),
                        arguments: "{\"city\":\"Paris\"}".into(),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "weather".into(),
                        arguments: "{\"city\":\"Lyon\"}".into(),
                    },
                ],
                tool_call_id: None,
                name: None,
            },
            ChatMessage {
                role: Role::Tool,
                content: "12°C, rain".into(),
                tool_calls: Vec::new(),
                tool_call_id: Some("call_1".into()),
                name: Some("weather".into()),
            },
            ChatMessage {
                role: Role::Tool,
                content: "15°C, sun".into(),
                tool_calls: Vec::new(),
                tool_call_id: Some("call_2".into()),
                name: Some("weather".into()),
            },
            ChatMessage::text(Role::Assistant, "Rain in Paris, sun in Lyon."),
            ChatMessage::text(Role::User, "Thanks"),
        ],
        tools: vec![ToolSpec {
            name: "weather".into(),
            description: "Current weather".into(),
            parameters: schema.clone(),
        }],
        temperature: Some(0.2),
        max_tokens: Some(256),
    };
    provider(&server, 0)
        .complete(&request, &CancellationToken::new())
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    let expected = json!({
        "model": "qwen2.5-7b-instruct",
        "messages": [
            { "role": "system", "content": "You are terse." },
            { "role": "user", "content": "Weather in Paris and Lyon?" },
            { "role": "assistant", "content": null, "tool_calls": [
                { "id": "call_1", "type": "function", "function": { "name": "weather", "arguments": "{\"city\":\"Paris\"}" } },
                { "id": "call_2", "type": "function", "function": { "name": "weather", "arguments": "{\"city\":\"Lyon\"}" } },
            ] },
            { "role": "tool", "tool_call_id": "call_1", "content": "12°C, rain" },
            { "role": "tool", "tool_call_id": "call_2", "content": "15°C, sun" },
            { "role": "assistant", "content": "Rain in Paris, sun in Lyon." },
            { "role": "user", "content": "Thanks" },
        ],
        "stream": true,
        "stream_options": { "include_usage": true },
        "tools": [{ "type": "function", "function": { "name": "weather", "description": "Current weather", "parameters": schema } }],
        "temperature": 0.2,
        "max_tokens": 256,
    });
    assert_eq!(sent.json(), expected);
    let wire = provider(&server, 0).wire_request(&request).unwrap();
    assert_eq!(wire.body, sent.json(), "the trace's body is the body sent");
    assert_eq!(wire.url, format!("{}/v1/chat/completions", server.url()));
}

#[tokio::test]
async fn usage_and_finish_reason_come_back_with_the_reply() {
    let server = Server::start(vec![Reply::sse(&text_stream())]).await;
    let reply = provider(&server, 0)
        .complete(&ask("Salut"), &CancellationToken::new())
        .await
        .unwrap();
    let usage = reply.usage.expect("the usage chunk is read");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.estimated),
        (31, 12, false)
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
}

#[test]
fn the_traced_address_has_no_credentials() {
    let mut settings = settings("http://user:secret@127.0.0.1:9", 0, Duration::from_secs(1));
    settings.base_url = Some("http://user:secret@127.0.0.1:9/v1?key=sk-query".into());
    let wire = OpenAiProvider::new(settings)
        .wire_request(&ask("x"))
        .unwrap();
    assert_eq!(wire.url, "http://127.0.0.1:9/v1");
    assert!(!wire.body.to_string().contains(KEY));
}

#[tokio::test]
async fn no_tools_key_without_tools_and_no_auth_without_key() {
    let server = Server::start(vec![Reply::sse(&text_stream())]).await;
    let mut settings = settings(&server.url(), 0, Duration::from_secs(5));
    settings.api_key = None;
    let mut request = ask("Hi");
    request.model = String::new(); // the settings' model is used
    OpenAiProvider::new(settings)
        .complete(&request, &CancellationToken::new())
        .await
        .unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "qwen2.5-7b-instruct", "messages": [{ "role": "user", "content": "Hi" }],
            "stream": true, "stream_options": { "include_usage": true },
        })
    );
}

#[tokio::test]
async fn a_non_streamed_json_reply_is_read_too() {
    let body = json!({
        "id": "chatcmpl-x", "object": "chat.completion", "created": 1764412345, "model": "m",
        "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{ "id": "call_9", "type": "function", "function": { "name": "f", "arguments": "{\"a\":1}" } }],
        } }],
    });
    let server = Server::start(vec![Reply::json(200, &body.to_string())]).await;
    let reply = provider(&server, 0)
        .complete(&ask("x"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        reply.tool_calls,
        vec![ToolCall {
            id: "call_9".into(),
            name: "f".into(),
            arguments: "{\"a\":1}".into()
        }]
    );
}

#[tokio::test]
async fn rate_limited_then_ok_honours_retry_after() {
    let limited = r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
    let server = Server::start(vec![
        Reply::json(429, limited).header("retry-after", "1"),
        Reply::sse(&text_stream()),
    ])
    .await;
    let reply = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content, "Bonjour, le \"monde\" ✓ — fin.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1].at - requests[0].at;
    assert!(waited >= Duration::from_secs(1), "waited {waited:?}");
}

#[tokio::test]
async fn server_errors_are_retried_then_fail_in_one_line() {
    let body = r#"{"error":{"message":"The server had an error while processing your request.\nSorry about that!","type":"server_error","param":null,"code":null}}"#;
    let server = Server::start(vec![Reply::json(500, body); 3]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "model \"local\" failed after 3 attempts: HTTP 500 Internal Server Error: \
         The server had an error while processing your request. Sorry about that!"
    );
    assert!(!error.cancelled);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let body = r#"{"error":{"message":"Invalid value for 'temperature': must be at most 2.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}"#;
    let server = Server::start(vec![Reply::json(400, body), Reply::sse(&text_stream())]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "model \"local\" failed: HTTP 400 Bad Request: Invalid value for 'temperature': must be at most 2."
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn connection_refused() {
    let base = refusing_url().await;
    let provider = OpenAiProvider::new(settings(&base, 1, Duration::from_secs(5)));
    let error = provider
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        format!("model \"local\" failed after 2 attempts: connection refused ({base}/v1/chat/completions)")
    );
}

#[tokio::test]
async fn a_malformed_payload_fails_without_retry() {
    let body = chunk(json!({ "content": "Hi" }), Value::Null)
        + "data: {\"choices\": [{\"index\": 0, \"delta\": \n\n";
    let server = Server::start(vec![Reply::sse(&body), Reply::sse(&text_stream())]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        error.message.starts_with(
            "model \"local\" failed: malformed reply: a stream chunk is not a chat completion chunk: EOF while parsing"
        ),
        "{}",
        error.message
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_html_page_is_malformed() {
    let page = Reply::body(
        200,
        "text/html; charset=utf-8",
        "<html><body>Sign in</body></html>",
    );
    let server = Server::start(vec![page]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "model \"local\" failed: malformed reply: an HTML page instead of an event stream"
    );
}

#[tokio::test]
async fn a_stream_that_ends_before_done_is_malformed() {
    let body = chunk(json!({ "content": "Hi" }), Value::Null);
    let server = Server::start(vec![Reply::sse(&body)]).await;
    let error = provider(&server, 0)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "model \"local\" failed: malformed reply: the stream ended before [DONE]"
    );
}

#[tokio::test]
async fn a_stalled_server_times_out() {
    let server = Server::start(vec![
        Reply::sse(&text_stream()).delay_head(Duration::from_secs(10)),
        Reply::sse(&text_stream()).stall_after(3, Duration::from_secs(10)),
    ])
    .await;
    let provider = OpenAiProvider::new(settings(&server.url(), 0, Duration::from_millis(300)));
    let expected = format!(
        "model \"local\" failed: timed out after 300ms ({}/v1/chat/completions)",
        server.url()
    );
    for _ in 0..2 {
        let started = Instant::now();
        let error = provider
            .complete(&ask("Hi"), &CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(error.message, expected);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn cancellation_mid_stream_returns_at_once() {
    let server = Server::start(vec![
        Reply::sse(&text_stream()).stall_after(3, Duration::from_secs(30))
    ])
    .await;
    let provider = provider(&server, 2);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let cancelled_at = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
        Instant::now()
    });
    let error = provider.complete(&ask("Hi"), &cancel).await.unwrap_err();
    let returned = Instant::now();
    let cancelled_at = cancelled_at.await.unwrap();
    assert!(error.cancelled);
    assert_eq!(error.message, "the run was cancelled");
    assert!(
        returned - cancelled_at < Duration::from_millis(500),
        "{:?}",
        returned - cancelled_at
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn cancellation_mid_backoff_returns_at_once() {
    let server = Server::start(vec![Reply::json(503, "").header("retry-after", "20")]).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &cancel)
        .await
        .unwrap_err();
    assert!(error.cancelled);
    assert!(
        started.elapsed() < Duration::from_millis(800),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_key_echoed_by_the_server_is_redacted() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
    );
    let server = Server::start(vec![Reply::json(401, &body)]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(!error.message.contains(KEY));
    assert_eq!(
        error.message,
        "model \"local\" failed: HTTP 401 Unauthorized: Incorrect API key provided: [redacted]. \
         You can find your API key at https://platform.openai.com/account/api-keys."
    );
}

/// A 64 KiB text delta, the piece an endless stream repeats.
fn big_delta() -> String {
    chunk(json!({ "content": "x".repeat(64 * 1024) }), Value::Null)
}

#[tokio::test]
async fn a_reply_past_16_mib_fails_streamed_or_whole() {
    let first = chunk(json!({ "role": "assistant", "content": "" }), Value::Null);
    // 64 MiB of deltas that never reach [DONE]; a line that never ends; a JSON body
    // of 17 MiB. Each fails at 16 MiB, once: the same reply again would too.
    let endless = Reply::sse(&first)
        .gap(Duration::ZERO)
        .then_repeat(big_delta().as_bytes(), 1024);
    let one_line = Reply::sse("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"")
        .gap(Duration::ZERO)
        .then_repeat(&[b'x'; 64 * 1024], 1024);
    let whole =
        json!({ "choices": [{ "index": 0, "message": { "content": "x".repeat(17 << 20) } }] });
    for reply in [endless, one_line, Reply::json(200, &whole.to_string())] {
        let server = Server::start(vec![reply]).await;
        let started = Instant::now();
        let error = provider(&server, 2)
            .complete(&ask("Hi"), &CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(
            error.message,
            "model \"local\" failed: the reply is larger than 16 MiB"
        );
        assert_eq!(server.requests().len(), 1, "not retried");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_reply_just_under_16_mib_is_read() {
    // 255 deltas of 64 KiB: 16 MiB less one delta, framing included.
    let mut chunks = vec![chunk(json!({ "role": "assistant" }), Value::Null).into_bytes()];
    chunks.extend(std::iter::repeat_n(big_delta().into_bytes(), 255));
    chunks.push((chunk(json!({}), json!("stop")) + &closing()).into_bytes());
    let reply = Reply {
        chunks,
        ..Reply::sse("").gap(Duration::ZERO)
    };
    let server = Server::start(vec![reply]).await;
    let reply = provider(&server, 0)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content.len(), 255 * 64 * 1024);
}

#[tokio::test]
async fn the_timeout_is_one_deadline_for_the_whole_streamed_reply() {
    // One small delta every 100 ms, each well within the timeout, for 6 s: the
    // whole request still ends at the timeout.
    let first = chunk(json!({ "role": "assistant", "content": "" }), Value::Null);
    let small = chunk(json!({ "content": "." }), Value::Null);
    let server = Server::start(vec![Reply::sse(&first)
        .gap(Duration::from_millis(100))
        .then_repeat(small.as_bytes(), 60)])
    .await;
    let provider = OpenAiProvider::new(settings(&server.url(), 0, Duration::from_millis(500)));
    let started = Instant::now();
    let error = provider
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        format!(
            "model \"local\" failed: timed out after 500ms ({}/v1/chat/completions)",
            server.url()
        )
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(2),
        "{took:?}"
    );
}
