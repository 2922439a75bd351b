//! One MCP tool as a Harness tool: `tools/call` with the JSON arguments, the
//! result's content turned into text (or its `structuredContent` into JSON).

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, ClientConfig, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::messages;
use crate::process::ServerProcess;
use promptforge_engine::harness::{OutputKind, Tool, ToolError, ToolId, ToolOutput, Trust};

/// The longest failure text a tool returns, in characters.
const FAILURE_CHARS: usize = 500;

/// One activation's server: the MCP session and its process. The process is
/// killed when the run ends (see the module's Lifetime), or at the latest when
/// the last tool is dropped with this; `closed` then ends the cancel watcher.
pub(crate) struct Server {
    pub(crate) client: RunningService<RoleClient, ClientConfig>,
    pub(crate) process: Arc<ServerProcess>,
    pub(crate) closed: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.process.kill();
        self.closed.cancel();
    }
}

/// A tool an MCP server listed, as `ns/name/{tool}`.
pub(crate) struct McpTool {
    pub(crate) id: ToolId,
    /// The tool's name on the server.
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    /// True when the server declared an `outputSchema`.
    pub(crate) structured: bool,
    pub(crate) server: Arc<Server>,
}

#[async_trait]
impl Tool for McpTool {
    fn id(&self) -> &ToolId {
        &self.id
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn trust(&self) -> Trust {
        Trust::Untrusted
    }

    fn output_kind(&self) -> OutputKind {
        if self.structured {
            OutputKind::Structured
        } else {
            OutputKind::Plain
        }
    }

    async fn call(
        &self,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let mut params = CallToolRequestParams::new(self.name.clone());
        if let Some(arguments) = parse_arguments(arguments)? {
            params = params.with_arguments(arguments);
        }
        if cancel.is_cancelled() {
            return Err(ToolError::new(messages::CALL_CANCELLED));
        }
        // Dropping the call on cancellation sends `notifications/cancelled`.
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ToolError::new(messages::CALL_CANCELLED)),
            result = self.server.client.peer().call_tool(params) => result,
        };
        let result = result.map_err(|e| ToolError::new(service_failure(&e)))?;
        let wire = serde_json::to_value(&result).unwrap_or(Value::Null);
        render_result(&wire, self.structured)
    }
}

/// The call's arguments: a JSON object, or nothing for empty text or `null`.
fn parse_arguments(arguments: &str) -> Result<Option<JsonObject>, ToolError> {
    if arguments.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => Ok(Some(object)),
        Ok(Value::Null) => Ok(None),
        _ => Err(ToolError::new(messages::ARGUMENTS_NOT_OBJECT)),
    }
}

/// A short reason for a failed request.
fn service_failure(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => short(&data.message),
        ServiceError::Cancelled { .. } => messages::CALL_CANCELLED.to_owned(),
        ServiceError::Timeout { .. } => messages::CALL_TIMED_OUT.to_owned(),
        _ => messages::CONNECTION_LOST.to_owned(),
    }
}

/// Turns a `tools/call` result (as it reads on the wire) into the tool's output: an
/// error result is the tool's failure; `structuredContent` is structured output; a
/// tool with an output schema whose result has none is structured when its text is
/// JSON; anything else is the content as plain text. Always untrusted.
pub(crate) fn render_result(result: &Value, structured: bool) -> Result<ToolOutput, ToolError> {
    let text = content_text(result.get("content"));
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = if text.trim().is_empty() {
            messages::TOOL_REPORTED_ERROR.to_owned()
        } else {
            short(text.trim())
        };
        return Err(ToolError::new(text));
    }
    if let Some(structured_content) = result.get("structuredContent") {
        return Ok(ToolOutput {
            text: structured_content.to_string(),
            trust: Trust::Untrusted,
            kind: OutputKind::Structured,
        });
    }
    if structured {
        return match serde_json::from_str::<Value>(&text) {
            Ok(value) => Ok(ToolOutput {
                text: value.to_string(),
                trust: Trust::Untrusted,
                kind: OutputKind::Structured,
            }),
            Err(_) => Err(ToolError::new(messages::NO_STRUCTURED_CONTENT)),
        };
    }
    Ok(ToolOutput::plain(text, Trust::Untrusted))
}

/// The content blocks as text: text blocks as they are, the others summarized, one
/// block per line.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    let blocks = content
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    blocks
        .iter()
        .map(block_text)
        .collect::<Vec<String>>()
        .join("\n")
}

fn block_text(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str);
    match field("type").unwrap_or("") {
        "text" => field("text").unwrap_or("").to_owned(),
        kind @ ("image" | "audio") => format!(
            "[{kind}: {}, {} bytes]",
            field("mimeType").unwrap_or("unknown type"),
            base64_len(field("data").unwrap_or(""))
        ),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let get = |name: &str| resource.get(name).and_then(Value::as_str);
            let uri = get("uri").unwrap_or("");
            match (get("text"), get("blob")) {
                (Some(text), _) => format!("[resource: {uri}]\n{text}"),
                (None, blob) => format!(
                    "[resource: {uri}, {}, {} bytes]",
                    get("mimeType").unwrap_or("unknown type"),
                    base64_len(blob.unwrap_or(""))
                ),
            }
        }
        "resource_link" => {
            let uri = field("uri").unwrap_or("");
            match field("name") {
                Some(name) if !name.is_empty() => format!("[resource link: {name} <{uri}>]"),
                _ => format!("[resource link: <{uri}>]"),
            }
        }
        other => format!("[{} content]", short(other)),
    }
}

/// The decoded size of base64 `data`.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3 + data.len() % 4 * 3 / 4).saturating_sub(padding)
}

/// `text` cut to [`FAILURE_CHARS`] characters.
fn short(text: &str) -> String {
    promptforge_syntax::excerpt::at_most(text, FAILURE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_become_text_one_per_line() {
        let result = json!({"content": [
            {"type": "text", "text": "Here:"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0="},
            {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "demo://a", "text": "body"}},
            {"type": "resource", "resource": {"uri": "demo://b", "mimeType": "x/y", "blob": "AA=="}},
            {"type": "resource_link", "uri": "demo://c", "name": "C"},
            {"type": "hologram"}
        ]});
        let output = render_result(&result, false).unwrap();
        assert_eq!(
            output.text,
            "Here:\n[image: image/png, 5 bytes]\n[audio: audio/wav, 3 bytes]\n[resource: demo://a]\nbody\n[resource: demo://b, x/y, 1 bytes]\n[resource link: C <demo://c>]\n[hologram content]"
        );
        assert_eq!(
            (output.trust, output.kind),
            (Trust::Untrusted, OutputKind::Plain)
        );
    }

    #[test]
    fn structured_content_and_errors() {
        let output = render_result(
            &json!({"content": [{"type": "text", "text": "{}"}], "structuredContent": {"a": 1}}),
            false,
        )
        .unwrap();
        assert_eq!(
            (output.text.as_str(), output.kind),
            ("{\"a\":1}", OutputKind::Structured)
        );
        let from_text = render_result(
            &json!({"content": [{"type": "text", "text": "[1, 2]"}]}),
            true,
        )
        .unwrap();
        assert_eq!(
            (from_text.text.as_str(), from_text.kind),
            ("[1,2]", OutputKind::Structured)
        );
        assert_eq!(
            render_result(&json!({"content": [{"type": "text", "text": "no"}]}), true)
                .unwrap_err()
                .message,
            messages::NO_STRUCTURED_CONTENT
        );
        let error = render_result(
            &json!({"content": [{"type": "text", "text": " bad input "}], "isError": true}),
            false,
        )
        .unwrap_err();
        assert_eq!(error.message, "bad input");
        let empty = render_result(&json!({"content": [], "isError": true}), false).unwrap_err();
        assert_eq!(empty.message, messages::TOOL_REPORTED_ERROR);
        let long = "x".repeat(FAILURE_CHARS + 10);
        let cut = render_result(
            &json!({"content": [{"type": "text", "text": long}], "isError": true}),
            false,
        )
        .unwrap_err();
        assert_eq!(cut.message.chars().count(), FAILURE_CHARS + 1);
    }

    #[test]
    fn arguments_must_be_an_object() {
        assert!(parse_arguments("").unwrap().is_none());
        assert!(parse_arguments("null").unwrap().is_none());
        assert_eq!(parse_arguments("{\"a\": 1}").unwrap().unwrap().len(), 1);
        assert_eq!(
            parse_arguments("[1]").unwrap_err().message,
            messages::ARGUMENTS_NOT_OBJECT
        );
    }
}
