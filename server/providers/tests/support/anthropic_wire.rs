//! The Messages API's streamed events as Anthropic sends them: `message_start`,
//! content blocks (text, thinking, tool_use with `input_json_delta`), `ping`,
//! `message_delta`, `message_stop`, and the error bodies.

use serde_json::{json, Value};

/// One named event.
pub fn event(data: Value) -> String {
    let name = data["type"].as_str().unwrap_or_default().to_owned();
    format!("event: {name}\ndata: {data}\n\n")
}

/// `message_start` with an empty message.
pub fn message_start() -> String {
    event(json!({ "type": "message_start", "message": {
        "id": "msg_01PfA7", "type": "message", "role": "assistant", "content": [],
        "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null,
        "usage": { "input_tokens": 472, "output_tokens": 2 },
    } }))
}

/// `message_delta` with the stop reason, then `message_stop`.
pub fn message_end(stop_reason: &str) -> String {
    event(
        json!({ "type": "message_delta", "delta": { "stop_reason": stop_reason, "stop_sequence": null },
                  "usage": { "output_tokens": 89 } }),
    ) + &event(json!({ "type": "message_stop" }))
}

/// A text block: start, one `text_delta` per piece, stop.
pub fn text_block(index: u64, pieces: &[&str]) -> String {
    let mut body = event(json!({ "type": "content_block_start", "index": index,
                                 "content_block": { "type": "text", "text": "" } }));
    for piece in pieces {
        body += &event(json!({ "type": "content_block_delta", "index": index,
                               "delta": { "type": "text_delta", "text": piece } }));
    }
    body + &event(json!({ "type": "content_block_stop", "index": index }))
}

/// A tool_use block: start with `input: {}`, one `input_json_delta` per piece, stop.
pub fn tool_block(index: u64, id: &str, name: &str, pieces: &[&str]) -> String {
    let mut body = event(json!({ "type": "content_block_start", "index": index,
                                 "content_block": { "type": "tool_use", "id": id, "name": name, "input": {} } }));
    for piece in pieces {
        body += &event(json!({ "type": "content_block_delta", "index": index,
                               "delta": { "type": "input_json_delta", "partial_json": piece } }));
    }
    body + &event(json!({ "type": "content_block_stop", "index": index }))
}

/// A streamed text reply with a `ping` in it.
pub fn text_stream() -> String {
    message_start()
        + &text_block(0, &["Bonjour", ", le \"monde\"", " ✓ — ", "fin."])
        + "event: ping\ndata: {\"type\": \"ping\"}\n\n"
        + &message_end("end_turn")
}

/// A thinking block, a text block and two tool_use blocks.
pub fn tool_stream() -> String {
    let thinking = event(json!({ "type": "content_block_start", "index": 0,
                                 "content_block": { "type": "thinking", "thinking": "" } }))
        + &event(json!({ "type": "content_block_delta", "index": 0,
                         "delta": { "type": "thinking_delta", "thinking": "Two lookups." } }))
        + &event(json!({ "type": "content_block_delta", "index": 0,
                         "delta": { "type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h" } }))
        + &event(json!({ "type": "content_block_stop", "index": 0 }));
    message_start()
        + &thinking
        + &text_block(1, &["I'll check ", "both."])
        + &tool_block(
            2,
            "toolu_01Wx81",
            "get_weather",
            &["", "{\"city\": \"Pa", "ris\", \"unit\"", ": \"celsius\"}"],
        )
        + &tool_block(
            3,
            "toolu_01Tm02",
            "lookup_time",
            &["{\"zone\":", "\"Europe/Paris\"", ",\"format\":\"24h\"}"],
        )
        + &message_end("tool_use")
}

/// An error body (`{"type":"error","error":{...}}`).
pub fn error_body(kind: &str, message: &str) -> String {
    json!({ "type": "error", "error": { "type": kind, "message": message } }).to_string()
}
