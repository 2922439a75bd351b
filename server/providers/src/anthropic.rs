//! The `anthropic` provider: `POST {base_url}/v1/messages` (the Messages API), streamed.

use std::collections::BTreeMap;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::failure::Failure;
use crate::retry::{Decoder, Flow, Transport};
use crate::sse::SseEvent;
use promptforge_engine::models::ProviderSettings;
use promptforge_engine::models::{
    ChatMessage, ModelError, ModelProvider, ModelReply, ModelRequest, Role, ToolCall,
};
use promptforge_engine::trace::{address_without_credentials, Usage, WireRequest};

/// The public endpoint, used when the configuration gives no base URL.
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent with every request.
const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when the label sets none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// A provider speaking the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicProvider {
    /// `{base_url}/v1/messages`.
    url: String,
    /// The model name used when a request names none.
    model: String,
    /// The client, retries, timeout and the key.
    transport: Transport,
}

impl AnthropicProvider {
    /// A provider for `settings`; the HTTP client (rustls) is built here.
    pub fn new(settings: ProviderSettings) -> Self {
        let base = settings.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        AnthropicProvider {
            url: format!("{}/v1/messages", base.trim_end_matches('/')),
            model: settings.model,
            transport: Transport::new(
                settings.host_model,
                settings.timeout,
                settings.retries,
                settings.api_key,
            ),
        }
    }

    /// The headers of every request: JSON in, SSE out, the API version, the key when set.
    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if let Some(key) = self.transport.secret() {
            if let Ok(mut value) = HeaderValue::from_str(key) {
                value.set_sensitive(true);
                headers.insert(HeaderName::from_static("x-api-key"), value);
            }
        }
        headers
    }
}

#[async_trait]
impl ModelProvider for AnthropicProvider {
    fn kind(&self) -> &str {
        "anthropic"
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let model = request.model_or(&self.model);
        let body = request_body(model, request).to_string().into_bytes();
        let new_decoder = || EventDecoder::new(self.transport.secret());
        self.transport
            .send(&self.url, self.headers(), body, new_decoder, cancel)
            .await
    }

    fn wire_request(&self, request: &ModelRequest) -> Option<WireRequest> {
        Some(WireRequest {
            url: address_without_credentials(&self.url),
            body: request_body(request.model_or(&self.model), request),
        })
    }
}

/// The JSON body of a round: `model`, `max_tokens` (4096 when unset), `stream`,
/// `system` (the system messages joined by a blank line, when there are any),
/// `messages`, then `tools` (only when the round offers some) and `temperature`.
pub(crate) fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "max_tokens".into(),
        json!(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    body.insert("stream".into(), json!(true));
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(|tool| {
            json!({ "name": tool.name, "description": tool.description, "input_schema": tool.parameters })
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    Value::Object(body)
}

/// The conversation without its system messages. An assistant message with calls
/// becomes `text` and `tool_use` blocks; tool results become `tool_result` blocks of
/// one user message, which also takes a user text that directly follows them.
fn messages(conversation: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for message in conversation {
        let block = match message.role {
            Role::System => continue,
            Role::Assistant if !message.tool_calls.is_empty() => {
                let mut blocks = Vec::new();
                if !message.content.is_empty() {
                    blocks.push(json!({ "type": "text", "text": message.content }));
                }
                blocks.extend(message.tool_calls.iter().map(tool_use));
                out.push(json!({ "role": "assistant", "content": blocks }));
                continue;
            }
            Role::Assistant => {
                out.push(json!({ "role": "assistant", "content": message.content }));
                continue;
            }
            Role::User => json!({ "type": "text", "text": message.content }),
            Role::Tool => json!({
                "type": "tool_result",
                "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                "content": message.content,
            }),
        };
        let open_blocks = out
            .last_mut()
            .filter(|last| last["role"] == "user")
            .and_then(|last| last.get_mut("content"))
            .and_then(Value::as_array_mut);
        match (open_blocks, message.role) {
            (Some(blocks), _) => blocks.push(block),
            (None, Role::Tool) => out.push(json!({ "role": "user", "content": [block] })),
            (None, _) => out.push(json!({ "role": "user", "content": message.content })),
        }
    }
    out
}

/// A `tool_use` block; arguments that are not a JSON object are sent as `{}` (the
/// engine has already refused such a call, and the API requires an object).
fn tool_use(call: &ToolCall) -> Value {
    let input = serde_json::from_str::<Value>(&call.arguments)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input })
}

/// A content block being assembled.
#[derive(Debug)]
enum Block {
    /// A text block and its text so far.
    Text(String),
    /// A tool_use block: its id, name, the `partial_json` so far and the start's `input`.
    ToolUse {
        id: String,
        name: String,
        partial_json: String,
        start_input: Value,
    },
    /// Thinking and other blocks, ignored.
    Other,
}

/// The state of one streamed reply: its content blocks by `index`.
#[derive(Debug)]
struct EventDecoder<'a> {
    /// The API key, redacted from server messages before they are cut.
    secret: Option<&'a str>,
    /// The blocks so far, by `index`.
    blocks: BTreeMap<u64, Block>,
    /// True once `message_stop` came.
    stopped: bool,
    /// `stop_reason`, from `message_delta` (or a whole message).
    stop_reason: Option<String>,
    /// The input tokens from `message_start` and the output tokens from the last
    /// `message_delta`, when the server sent them.
    usage: Option<Usage>,
}

impl<'a> EventDecoder<'a> {
    /// A decoder at the start of a reply.
    fn new(secret: Option<&'a str>) -> Self {
        EventDecoder {
            secret,
            blocks: BTreeMap::new(),
            stopped: false,
            stop_reason: None,
            usage: None,
        }
    }

    /// Takes the counts of a `usage` object: a count it holds replaces the one
    /// kept (`message_delta` repeats the total of output tokens so far).
    fn count(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else { return };
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        let kept = self.usage.get_or_insert_default();
        if let Some(input) = count("input_tokens") {
            kept.input_tokens = input;
        }
        if let Some(output) = count("output_tokens") {
            kept.output_tokens = output;
        }
    }

    /// A `content_block_start` (or a block of a non-streamed message).
    fn start(&mut self, index: u64, block: &Value) -> Result<(), Failure> {
        let text = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_owned);
        let block = match block.get("type").and_then(Value::as_str) {
            Some("text") => Block::Text(text("text").unwrap_or_default()),
            Some("tool_use") => Block::ToolUse {
                id: text("id").ok_or_else(|| {
                    Failure::malformed(format!("tool_use block {index} has no id"))
                })?,
                name: text("name").ok_or_else(|| {
                    Failure::malformed(format!("tool_use block {index} has no name"))
                })?,
                partial_json: String::new(),
                start_input: block.get("input").cloned().unwrap_or_else(|| json!({})),
            },
            _ => Block::Other,
        };
        self.blocks.insert(index, block);
        Ok(())
    }

    /// A `content_block_delta`: `text_delta` and `input_json_delta` are kept, others ignored.
    fn delta(&mut self, index: u64, delta: &Value) -> Result<(), Failure> {
        let block = self.blocks.get_mut(&index).ok_or_else(|| {
            Failure::malformed(format!(
                "a delta for content block {index}, which never started"
            ))
        })?;
        let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        match (delta.get("type").and_then(Value::as_str), block) {
            (Some("text_delta"), Block::Text(text)) => text.push_str(field("text")),
            (Some("input_json_delta"), Block::ToolUse { partial_json, .. }) => {
                partial_json.push_str(field("partial_json"))
            }
            (Some(kind @ ("text_delta" | "input_json_delta")), _) => {
                return Err(Failure::malformed(format!(
                    "a {kind} for content block {index} of another type"
                )));
            }
            _ => {}
        }
        Ok(())
    }
}

impl Decoder for EventDecoder<'_> {
    fn event(&mut self, event: SseEvent) -> Result<Flow, Failure> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            Failure::malformed(format!(
                "the data of a {} event is not JSON: {e}",
                event.event
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        let index = || {
            data.get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| Failure::malformed(format!("a {kind} event has no index")))
        };
        match kind {
            "content_block_start" => self.start(index()?, &data["content_block"])?,
            "content_block_delta" => self.delta(index()?, &data["delta"])?,
            "message_start" => self.count(data.pointer("/message/usage")),
            "message_delta" => {
                self.count(data.get("usage"));
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            "error" => {
                let error_type = data
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let retryable = matches!(error_type, "overloaded_error" | "api_error");
                return Err(Failure::server(
                    &format!("{error_type}: {message}"),
                    retryable,
                    self.secret,
                ));
            }
            // content_block_stop, ping, and any new event.
            _ => {}
        }
        Ok(Flow::More)
    }

    fn end(self) -> Result<ModelReply, Failure> {
        if !self.stopped {
            return Err(Failure::malformed("the stream ended before message_stop"));
        }
        let mut reply = ModelReply {
            usage: self.usage,
            finish_reason: self.stop_reason,
            ..ModelReply::default()
        };
        for block in self.blocks.into_values() {
            match block {
                Block::Text(text) => reply.content.push_str(&text),
                Block::ToolUse {
                    id,
                    name,
                    partial_json,
                    start_input,
                } => {
                    let arguments = if partial_json.trim().is_empty() {
                        start_input.to_string()
                    } else {
                        partial_json
                    };
                    reply.tool_calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                Block::Other => {}
            }
        }
        Ok(reply)
    }

    fn whole(mut self, body: &[u8]) -> Result<ModelReply, Failure> {
        let message: Value = serde_json::from_slice(body)
            .map_err(|e| Failure::malformed(format!("the body is not JSON: {e}")))?;
        let blocks = message
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| Failure::malformed("the message has no content array"))?;
        for (index, block) in blocks.iter().enumerate() {
            self.start(index as u64, block)?;
        }
        self.count(message.get("usage"));
        self.stop_reason = (message.get("stop_reason").and_then(Value::as_str)).map(str::to_owned);
        self.stopped = true;
        self.end()
    }
}
