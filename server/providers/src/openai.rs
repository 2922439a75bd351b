//! The `openai` provider: `POST {base_url}/chat/completions`, streamed (SSE), for
//! OpenAI and the servers that speak its chat completions API (vLLM, llama.cpp's
//! server, Ollama, LM Studio, ...).

use std::collections::BTreeMap;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde::Deserialize;
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

/// The base URL when the configuration gives none.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A provider speaking the OpenAI chat completions API.
#[derive(Debug)]
pub struct OpenAiProvider {
    /// `{base_url}/chat/completions`.
    url: String,
    /// The model name used when a request names none.
    model: String,
    /// The client, retries, timeout and the key.
    transport: Transport,
}

impl OpenAiProvider {
    /// A provider for `settings`; the HTTP client (rustls) is built here.
    pub fn new(settings: ProviderSettings) -> Self {
        let base = settings.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        OpenAiProvider {
            url: format!("{}/chat/completions", base.trim_end_matches('/')),
            model: settings.model,
            transport: Transport::new(
                settings.host_model,
                settings.timeout,
                settings.retries,
                settings.api_key,
            ),
        }
    }

    /// The headers of every request: JSON in, SSE out, the bearer key when set.
    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(key) = self.transport.secret() {
            if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {key}")) {
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
            }
        }
        headers
    }
}

#[async_trait]
impl ModelProvider for OpenAiProvider {
    fn kind(&self) -> &str {
        "openai"
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let model = request.model_or(&self.model);
        let body = request_body(model, request).to_string().into_bytes();
        let new_decoder = || ChunkDecoder::new(self.transport.secret());
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

/// The JSON body of a round: `model`, `messages`, `stream`, `stream_options` (asking
/// for the usage in the last chunk), then `tools` (only when the round offers some),
/// `temperature` and `max_tokens` when set.
pub(crate) fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "messages".into(),
        Value::Array(request.messages.iter().map(message).collect()),
    );
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(|tool| {
            json!({
                "type": "function",
                "function": { "name": tool.name, "description": tool.description, "parameters": tool.parameters },
            })
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = request.max_tokens {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    Value::Object(body)
}

/// One message in the chat format: an assistant message with calls has `tool_calls`
/// (and `content: null` when it has no text); a tool message has `tool_call_id`.
fn message(message: &ChatMessage) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), json!(message.role.as_str()));
    match message.role {
        Role::Assistant if !message.tool_calls.is_empty() => {
            let content = if message.content.is_empty() {
                Value::Null
            } else {
                json!(message.content)
            };
            out.insert("content".into(), content);
            let calls = message.tool_calls.iter().map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": { "name": call.name, "arguments": call.arguments },
                })
            });
            out.insert("tool_calls".into(), Value::Array(calls.collect()));
        }
        Role::Tool => {
            out.insert(
                "tool_call_id".into(),
                json!(message.tool_call_id.as_deref().unwrap_or_default()),
            );
            out.insert("content".into(), json!(message.content));
        }
        _ => {
            out.insert("content".into(), json!(message.content));
        }
    }
    Value::Object(out)
}

/// A chunk of the stream (`chat.completion.chunk`), or an error object some servers send.
#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

/// The token counts a server reports (in the last chunk when asked for, or in a
/// whole reply).
#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl WireUsage {
    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            estimated: false,
        }
    }
}

/// A choice of a chunk; only choice 0 is read.
#[derive(Debug, Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: u64,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// What a chunk adds to the message (also the shape of a non-streamed message).
#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

/// A piece of a tool call: `id` and name in the first, arguments spread over the rest.
#[derive(Debug, Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

/// The function part of a tool-call piece.
#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// A tool call being assembled from its deltas.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// The state of one streamed reply: the text and the calls by their `index`.
#[derive(Debug, Default)]
struct ChunkDecoder<'a> {
    /// The API key, redacted from server messages before they are cut.
    secret: Option<&'a str>,
    /// The text so far.
    content: String,
    /// The calls so far, by their `index`.
    calls: BTreeMap<u64, PartialCall>,
    /// True once a choice had a `finish_reason`.
    finished: bool,
    /// The `finish_reason` of choice 0.
    finish_reason: Option<String>,
    /// The usage the server reported.
    usage: Option<Usage>,
    /// True once `[DONE]` came.
    done: bool,
}

impl<'a> ChunkDecoder<'a> {
    /// A decoder at the start of a reply.
    fn new(secret: Option<&'a str>) -> Self {
        ChunkDecoder {
            secret,
            ..ChunkDecoder::default()
        }
    }

    /// Adds a delta: text appended, each call piece merged into the call of its index
    /// (the first id and name kept, arguments concatenated).
    fn delta(&mut self, delta: Delta) {
        if let Some(text) = delta.content {
            self.content.push_str(&text);
        }
        for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
            let partial = self
                .calls
                .entry(call.index.unwrap_or(position as u64))
                .or_default();
            if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                partial.id.get_or_insert(id);
            }
            if let Some(function) = call.function {
                if let Some(name) = function.name.filter(|name| !name.is_empty()) {
                    partial.name.get_or_insert(name);
                }
                partial
                    .arguments
                    .push_str(function.arguments.as_deref().unwrap_or_default());
            }
        }
    }
}

impl Decoder for ChunkDecoder<'_> {
    fn event(&mut self, event: SseEvent) -> Result<Flow, Failure> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Flow::Done);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            Failure::malformed(format!(
                "a stream chunk is not a chat completion chunk: {e}"
            ))
        })?;
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned);
            return Err(Failure::server(
                &message.unwrap_or_else(|| error.to_string()),
                false,
                self.secret,
            ));
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(usage.usage());
        }
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(delta) = choice.delta {
                self.delta(delta);
            }
            if choice.finish_reason.is_some() {
                self.finished = true;
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(Flow::More)
    }

    fn end(self) -> Result<ModelReply, Failure> {
        if !self.done && !self.finished {
            return Err(Failure::malformed("the stream ended before [DONE]"));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            let name = call.name.ok_or_else(|| {
                Failure::malformed(format!(
                    "the tool call at index {index} has no function name"
                ))
            })?;
            let id = call.id.unwrap_or_else(|| format!("call_{index}"));
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_owned()
            } else {
                call.arguments
            };
            tool_calls.push(ToolCall {
                id,
                name,
                arguments,
            });
        }
        Ok(ModelReply {
            content: self.content,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
            ..ModelReply::default()
        })
    }

    fn whole(mut self, body: &[u8]) -> Result<ModelReply, Failure> {
        let reply: Value = serde_json::from_slice(body)
            .map_err(|e| Failure::malformed(format!("the body is not JSON: {e}")))?;
        let message = reply
            .pointer("/choices/0/message")
            .ok_or_else(|| Failure::malformed("the reply has no choices[0].message"))?;
        let delta: Delta = Delta::deserialize(message)
            .map_err(|e| Failure::malformed(format!("choices[0].message: {e}")))?;
        self.delta(delta);
        self.done = true;
        let usage = reply.get("usage").map(WireUsage::deserialize);
        self.usage = usage.and_then(Result::ok).map(|u| u.usage());
        self.finish_reason = reply
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.end()
    }
}
