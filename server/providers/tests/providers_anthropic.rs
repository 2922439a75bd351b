//! The `anthropic` provider against a real HTTP server on loopback replaying the
//! Messages API's streamed events (`message_start` ... `message_stop`).

#[path = "support/anthropic_wire.rs"]
mod wire;

use std::time::{Duration, Instant};

use promptforge_engine::models::ProviderSettings;
use promptforge_engine::models::{
    ChatMessage, ModelProvider, ModelRequest, Role, ToolCall, ToolSpec,
};
use promptforge_engine::testing::http::{refusing_url, Reply, Server};
use promptforge_providers::anthropic::AnthropicProvider;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wire::{error_body, event, message_start, text_block, text_stream, tool_stream};

const KEY: &str = "sk-ant-pf-test-0a1b2c3d4e5f";

fn settings(base: &str, retries: u32, timeout: Duration) -> ProviderSettings {
    ProviderSettings {
        base_url: Some(base.to_owned()),
        model: "claude-sonnet-4-5".into(),
        api_key: Some(KEY.into()),
        timeout,
        retries,
        host_model: "claude".into(),
    }
}

fn provider(server: &Server, retries: u32) -> AnthropicProvider {
    AnthropicProvider::new(settings(&server.url(), retries, Duration::from_secs(5)))
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        model: "claude-sonnet-4-5".into(),
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
    assert_eq!(provider.kind(), "anthropic");
    let reply = provider
        .complete(&ask("Salut"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content, "Bonjour, le \"monde\" ✓ — fin.");
    assert!(reply.tool_calls.is_empty());
    let usage = reply
        .usage
        .expect("message_start and message_delta carry the usage");
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.estimated),
        (472, 89, false)
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
}

#[tokio::test]
async fn streamed_tool_use_blocks() {
    let server = Server::start(vec![Reply::sse(&tool_stream())]).await;
    let reply = provider(&server, 0)
        .complete(&ask("Weather?"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content, "I'll check both.");
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall {
                id: "toolu_01Wx81".into(),
                name: "get_weather".into(),
                arguments: "{\"city\": \"Paris\", \"unit\": \"celsius\"}".into(),
            },
            ToolCall {
                id: "toolu_01Tm02".into(),
                name: "lookup_time".into(),
                arguments: "{\"zone\":\"Europe/Paris\",\"format\":\"24h\"}".into(),
            },
        ]
    );
}

fn tool_message(id: &str, content: &str) -> ChatMessage {
    ChatMessage {
        role: Role::Tool,
        content: content.into(),
        tool_calls: Vec::new(),
        tool_call_id: Some(id.into()),
        name: Some("weather".into()),
    }
}

#[tokio::test]
async fn request_body_and_headers() {
    let server = Server::start(vec![Reply::sse(&text_stream())]).await;
    let schema = json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] });
    let request = ModelRequest {
        model: "claude-sonnet-4-5".into(),
        messages: vec![
            ChatMessage::text(Role::System, "You are terse."),
            ChatMessage::text(Role::System, "Answer in French."),
            ChatMessage::text(Role::User, "Weather in Paris and Lyon?"),
            ChatMessage {
                role: Role::Assistant,
                content: "Checking.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "toolu_1".into(),
                        name: "weather".into(),
                        arguments: "{\"city\":\"Paris\"}".into(),
                    },
                    ToolCall {
                        id: "toolu_2".into(),
                        name: "weather".into(),
                        arguments: "{\"city\":\"Lyon\"}".into(),
                    },
                ],
                tool_call_id: None,
                name: None,
            },
            tool_message("toolu_1", "12°C, rain"),
            tool_message("toolu_2", "15°C, sun"),
            ChatMessage::text(Role::User, "Be brief."),
            ChatMessage::text(Role::Assistant, "Pluie à Paris, soleil à Lyon."),
            ChatMessage::text(Role::User, "Merci"),
        ],
        tools: vec![ToolSpec {
            name: "weather".into(),
            description: "Current weather".into(),
            parameters: schema.clone(),
        }],
        temperature: Some(0.5),
        max_tokens: Some(1024),
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
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    let expected = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": true,
        "system": "You are terse.\n\nAnswer in French.",
        "messages": [
            { "role": "user", "content": "Weather in Paris and Lyon?" },
            { "role": "assistant", "content": [
                { "type": "text", "text": "Checking." },
                { "type": "tool_use", "id": "toolu_1", "name": "weather", "input": { "city": "Paris" } },
                { "type": "tool_use", "id": "toolu_2", "name": "weather", "input": { "city": "Lyon" } },
            ] },
            { "role": "user", "content": [
                { "type": "tool_result", "tool_use_id": "toolu_1", "content": "12°C, rain" },
                { "type": "tool_result", "tool_use_id": "toolu_2", "content": "15°C, sun" },
                { "type": "text", "text": "Be brief." },
            ] },
            { "role": "assistant", "content": "Pluie à Paris, soleil à Lyon." },
            { "role": "user", "content": "Merci" },
        ],
        "tools": [{ "name": "weather", "description": "Current weather", "input_schema": schema }],
        "temperature": 0.5,
    });
    assert_eq!(sent.json(), expected);
    let wire = provider(&server, 0).wire_request(&request).unwrap();
    assert_eq!(wire.body, sent.json(), "the trace's body is the body sent");
    assert_eq!(wire.url, format!("{}/v1/messages", server.url()));
}

#[tokio::test]
async fn defaults_no_tools_no_system_and_max_tokens_4096() {
    let server = Server::start(vec![Reply::sse(&text_stream())]).await;
    let mut settings = settings(&server.url(), 0, Duration::from_secs(5));
    settings.api_key = None;
    let mut request = ask("Hi");
    request.model = String::new(); // the settings' model is used
    AnthropicProvider::new(settings)
        .complete(&request, &CancellationToken::new())
        .await
        .unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(
        sent.json(),
        json!({ "model": "claude-sonnet-4-5", "max_tokens": 4096, "stream": true,
                "messages": [{ "role": "user", "content": "Hi" }] })
    );
}

#[tokio::test]
async fn rate_limited_then_ok_honours_retry_after() {
    let limited = error_body(
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
    );
    let server = Server::start(vec![
        Reply::json(429, &limited).header("retry-after", "1"),
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
    assert!(requests[1].at - requests[0].at >= Duration::from_secs(1));
}

#[tokio::test]
async fn server_errors_are_retried_then_fail_in_one_line() {
    let body = error_body("api_error", "Internal server error");
    let server = Server::start(vec![
        Reply::json(529, &error_body("overloaded_error", "Overloaded")),
        Reply::json(500, &body),
        Reply::json(500, &body),
    ])
    .await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.message, "model \"claude\" failed after 3 attempts: HTTP 500 Internal Server Error: Internal server error");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let body = error_body("invalid_request_error", "temperature: range: 0..1");
    let server = Server::start(vec![Reply::json(400, &body), Reply::sse(&text_stream())]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "model \"claude\" failed: HTTP 400 Bad Request: temperature: range: 0..1"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_event_mid_stream() {
    let overloaded = message_start()
        + &text_block(0, &["Bon"])
        + &event(
            json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
        );
    // Overload is retried.
    let server = Server::start(vec![Reply::sse(&overloaded), Reply::sse(&text_stream())]).await;
    let reply = provider(&server, 1)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.content, "Bonjour, le \"monde\" ✓ — fin.");
    // Without retries, the error names it.
    let server = Server::start(vec![Reply::sse(&overloaded)]).await;
    let error = provider(&server, 0)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "model \"claude\" failed: the server reported an error: overloaded_error: Overloaded"
    );
}

#[tokio::test]
async fn connection_refused() {
    let base = refusing_url().await;
    let provider = AnthropicProvider::new(settings(&base, 0, Duration::from_secs(5)));
    let error = provider
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        format!("model \"claude\" failed: connection refused ({base}/v1/messages)")
    );
}

#[tokio::test]
async fn malformed_payloads_fail_without_retry() {
    let cases = [
        (
            message_start() + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"unterminated}\n\n",
            "model \"claude\" failed: malformed reply: the data of a content_block_delta event is not JSON: EOF while parsing a string",
        ),
        (
            message_start() + &event(json!({ "type": "content_block_delta", "index": 4, "delta": { "type": "text_delta", "text": "x" } })),
            "model \"claude\" failed: malformed reply: a delta for content block 4, which never started",
        ),
        (
            message_start() + &text_block(0, &["cut short"]),
            "model \"claude\" failed: malformed reply: the stream ended before message_stop",
        ),
    ];
    for (body, expected) in cases {
        let server = Server::start(vec![Reply::sse(&body), Reply::sse(&text_stream())]).await;
        let error = provider(&server, 2)
            .complete(&ask("Hi"), &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(error.message.starts_with(expected), "{}", error.message);
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn a_stalled_server_times_out() {
    let server = Server::start(vec![
        Reply::sse(&text_stream()).delay_head(Duration::from_secs(10)),
        Reply::sse(&text_stream()).stall_after(4, Duration::from_secs(10)),
    ])
    .await;
    let provider = AnthropicProvider::new(settings(&server.url(), 0, Duration::from_millis(1500)));
    let expected = format!(
        "model \"claude\" failed: timed out after 1.5s ({}/v1/messages)",
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
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn cancellation_mid_stream_returns_at_once() {
    let server = Server::start(vec![
        Reply::sse(&tool_stream()).stall_after(10, Duration::from_secs(30))
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
    assert!(
        returned - cancelled_at < Duration::from_millis(500),
        "{:?}",
        returned - cancelled_at
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_already_cancelled_call_sends_nothing() {
    let server = Server::start(vec![Reply::sse(&text_stream())]).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = provider(&server, 0)
        .complete(&ask("Hi"), &cancel)
        .await
        .unwrap_err();
    assert!(error.cancelled);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn the_key_echoed_by_the_server_is_redacted() {
    let body = error_body("authentication_error", &format!("invalid x-api-key: {KEY}"));
    let server = Server::start(vec![Reply::json(401, &body)]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(!error.message.contains(KEY));
    assert_eq!(
        error.message,
        "model \"claude\" failed: HTTP 401 Unauthorized: invalid x-api-key: [redacted]"
    );
}

#[tokio::test]
async fn a_streamed_reply_past_16_mib_fails() {
    // A text block whose 64 KiB deltas come for ever (64 MiB here), never
    // reaching message_stop.
    let start = message_start()
        + &event(json!({ "type": "content_block_start", "index": 0,
                         "content_block": { "type": "text", "text": "" } }));
    let delta = event(json!({ "type": "content_block_delta", "index": 0,
                              "delta": { "type": "text_delta", "text": "x".repeat(64 * 1024) } }));
    let reply = Reply::sse(&start)
        .gap(Duration::ZERO)
        .then_repeat(delta.as_bytes(), 1024);
    let server = Server::start(vec![reply]).await;
    let error = provider(&server, 2)
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        "model \"claude\" failed: the reply is larger than 16 MiB"
    );
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn the_timeout_is_one_deadline_for_the_whole_streamed_reply() {
    // One `ping` every 100 ms, each well within the timeout, for 6 s.
    let ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    let server = Server::start(vec![Reply::sse(&message_start())
        .gap(Duration::from_millis(100))
        .then_repeat(ping.as_bytes(), 60)])
    .await;
    let provider = AnthropicProvider::new(settings(&server.url(), 0, Duration::from_millis(500)));
    let started = Instant::now();
    let error = provider
        .complete(&ask("Hi"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.message,
        format!(
            "model \"claude\" failed: timed out after 500ms ({}/v1/messages)",
            server.url()
        )
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(2),
        "{took:?}"
    );
}
