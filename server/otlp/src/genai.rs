//! The GenAI semantic conventions' JSON shapes for a round's content:
//! `gen_ai.input.messages` and `gen_ai.output.messages` (messages of typed
//! parts) and `gen_ai.tool.definitions`, from the trace's engine-terms request
//! and reply.

use promptforge_engine::trace::Reply;
use serde_json::{json, Map, Value as Json};

/// A tool call as a part: `{type: tool_call, id, name, arguments}`, the
/// arguments parsed when they are JSON, else the text.
fn tool_call_part(call: &Json) -> Json {
    let arguments = match call.get("arguments") {
        Some(Json::String(text)) => {
            serde_json::from_str(text).unwrap_or(Json::String(text.clone()))
        }
        Some(other) => other.clone(),
        None => Json::Null,
    };
    json!({
        "type": "tool_call",
        "id": call.get("id").cloned().unwrap_or(Json::Null),
        "name": call.get("name").cloned().unwrap_or(Json::Null),
        "arguments": arguments,
    })
}

/// One engine message (`role`, `content`, `toolCalls`, `toolCallId`) as a
/// conventions message (`role`, `parts`): a tool result is a
/// `tool_call_response` part of a `tool` message.
fn message(message: &Json) -> Json {
    let role = message.get("role").and_then(Json::as_str).unwrap_or("user");
    let content = message.get("content").and_then(Json::as_str).unwrap_or("");
    let mut parts = Vec::new();
    if let Some(id) = message.get("toolCallId") {
        parts.push(json!({ "type": "tool_call_response", "id": id, "response": content }));
    } else if !content.is_empty() {
        parts.push(json!({ "type": "text", "content": content }));
    }
    if let Some(Json::Array(calls)) = message.get("toolCalls") {
        parts.extend(calls.iter().map(tool_call_part));
    }
    let mut out = Map::new();
    out.insert("role".into(), role.into());
    out.insert("parts".into(), Json::Array(parts));
    if let Some(name) = message.get("name").filter(|_| role != "tool") {
        out.insert("name".into(), name.clone());
    }
    Json::Object(out)
}

/// `gen_ai.input.messages` of a request in the engine's terms (its `messages`).
pub fn input_messages(request: &Json) -> Json {
    let messages = request.get("messages").and_then(Json::as_array);
    Json::Array(messages.into_iter().flatten().map(message).collect())
}

/// `gen_ai.output.messages` of a reply: one assistant message with the text and
/// the tool calls, and the finish reason when the provider gave one.
pub fn output_messages(reply: &Reply) -> Json {
    let mut parts = Vec::new();
    if !reply.content.is_empty() {
        parts.push(json!({ "type": "text", "content": reply.content }));
    }
    parts.extend(reply.tool_calls.iter().map(tool_call_part));
    let mut out = Map::new();
    out.insert("role".into(), "assistant".into());
    out.insert("parts".into(), Json::Array(parts));
    if let Some(reason) = &reply.finish_reason {
        out.insert("finish_reason".into(), reason.clone().into());
    }
    Json::Array(vec![Json::Object(out)])
}

/// `gen_ai.tool.definitions` of a request: `{type: function, name,
/// description, parameters}` per tool offered; None when it offered none.
pub fn tool_definitions(request: &Json) -> Option<Json> {
    let tools = request.get("tools")?.as_array()?;
    if tools.is_empty() {
        return None;
    }
    let definitions = tools.iter().map(|tool| {
        json!({
            "type": "function",
            "name": tool.get("name").cloned().unwrap_or(Json::Null),
            "description": tool.get("description").cloned().unwrap_or(Json::Null),
            "parameters": tool.get("parameters").cloned().unwrap_or(Json::Null),
        })
    });
    Some(Json::Array(definitions.collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_become_typed_parts() {
        let request = json!({ "messages": [
            { "role": "system", "content": "Be brief." },
            { "role": "assistant", "content": "", "toolCalls": [
                { "id": "c1", "name": "fetch", "arguments": "{\"url\":\"u\"}" } ] },
            { "role": "tool", "content": "<h1>Rust</h1>", "toolCallId": "c1", "name": "fetch" },
        ], "tools": [] });
        assert_eq!(
            input_messages(&request),
            json!([
                { "role": "system", "parts": [{ "type": "text", "content": "Be brief." }] },
                { "role": "assistant", "parts": [
                    { "type": "tool_call", "id": "c1", "name": "fetch", "arguments": { "url": "u" } } ] },
                { "role": "tool", "parts": [
                    { "type": "tool_call_response", "id": "c1", "response": "<h1>Rust</h1>" } ] },
            ])
        );
        assert_eq!(tool_definitions(&request), None);
        let reply = Reply {
            content: "Hi".into(),
            tool_calls: vec![json!({ "id": "c2", "name": "f", "arguments": "not json" })],
            finish_reason: Some("stop".into()),
        };
        assert_eq!(
            output_messages(&reply),
            json!([{ "role": "assistant", "parts": [
                { "type": "text", "content": "Hi" },
                { "type": "tool_call", "id": "c2", "name": "f", "arguments": "not json" },
            ], "finish_reason": "stop" }])
        );
    }
}
