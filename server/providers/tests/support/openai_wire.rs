//! The chat completions wire format as OpenAI streams it: `chat.completion.chunk`
//! events (text deltas, tool-call deltas split by `index`), a usage chunk, `[DONE]`.

use serde_json::{json, Value};

/// One `chat.completion.chunk` event with one choice.
pub fn chunk(delta: Value, finish_reason: Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-pf7Qm2", "object": "chat.completion.chunk", "created": 1764412345,
        "model": "qwen2.5-7b-instruct", "system_fingerprint": "fp_5f1c",
        "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason }],
    });
    format!("data: {chunk}\n\n")
}

/// The closing events: the usage chunk (no choices) and `[DONE]`.
pub fn closing() -> String {
    let usage = json!({
        "id": "chatcmpl-pf7Qm2", "object": "chat.completion.chunk", "created": 1764412345,
        "model": "qwen2.5-7b-instruct", "choices": [],
        "usage": { "prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43 },
    });
    format!("data: {usage}\n\ndata: [DONE]\n\n")
}

/// A streamed text reply with non-ASCII text and quotes.
pub fn text_stream() -> String {
    let mut body = chunk(
        json!({ "role": "assistant", "content": "", "refusal": null }),
        Value::Null,
    );
    for piece in ["Bonjour", ", le \"monde\"", " ✓ — ", "fin."] {
        body += &chunk(json!({ "content": piece }), Value::Null);
    }
    body += &chunk(json!({}), json!("stop"));
    body + &closing()
}

/// A tool-call delta: the first of a call carries its id, type and name.
pub fn call_delta(index: u64, id: Option<&str>, name: Option<&str>, arguments: &str) -> Value {
    let mut call = json!({ "index": index, "function": { "arguments": arguments } });
    if let (Some(id), Some(name)) = (id, name) {
        call["id"] = json!(id);
        call["type"] = json!("function");
        call["function"]["name"] = json!(name);
    }
    json!({ "tool_calls": [call] })
}

/// Two parallel tool calls whose arguments arrive in many pieces.
pub fn tool_call_stream() -> String {
    let mut first = call_delta(0, Some("call_Wx81"), Some("get_weather"), "");
    first["role"] = json!("assistant");
    first["content"] = Value::Null;
    let mut body = chunk(first, Value::Null);
    for piece in [
        "{\"", "city", "\": \"", "Par", "is\", \"", "unit\":", " \"cel", "sius\"}",
    ] {
        body += &chunk(call_delta(0, None, None, piece), Value::Null);
    }
    body += &chunk(
        call_delta(1, Some("call_Tm02"), Some("lookup_time"), ""),
        Value::Null,
    );
    for piece in ["{\"zone\"", ":\"Europe/", "Paris\",\"for", "mat\":\"24h\"}"] {
        body += &chunk(call_delta(1, None, None, piece), Value::Null);
    }
    body += &chunk(json!({}), json!("tool_calls"));
    body + &closing()
}
