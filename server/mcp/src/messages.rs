//! The texts of the MCP Plugins: activation failure reasons, run log lines and
//! tool failures (short and model-safe).

use std::time::Duration;

/// A tool call the run's cancellation interrupted.
pub const CALL_CANCELLED: &str = "the call was cancelled";
/// A tool call the server or the SDK timed out.
pub const CALL_TIMED_OUT: &str = "the MCP server did not answer in time";
/// A tool call whose connection failed.
pub const CONNECTION_LOST: &str = "the MCP server is not reachable (its connection closed)";
/// Arguments that are not a JSON object.
pub const ARGUMENTS_NOT_OBJECT: &str = "the arguments are not a JSON object";
/// An error result without text.
pub const TOOL_REPORTED_ERROR: &str = "the tool reported an error";
/// A tool with an output schema whose result carries no structured content.
pub const NO_STRUCTURED_CONTENT: &str =
    "the MCP server returned no structured content for a tool with an output schema";
/// Activation during a cancelled run.
pub const ACTIVATION_CANCELLED: &str = "the run was cancelled while the MCP server started";

/// The server could not be started or initialized (`detail`: the cause).
pub fn did_not_start(detail: &str) -> String {
    format!("the MCP server did not start: {detail}")
}

/// The server did not answer `initialize` and `tools/list` in time.
pub fn did_not_answer(timeout: Duration) -> String {
    format!(
        "the MCP server did not answer within {} s",
        timeout.as_secs_f64()
    )
}

/// `tools/list` failed.
pub fn list_failed(detail: &str) -> String {
    format!("the MCP server did not list its tools: {detail}")
}

/// A mapped variable whose Host variable is not set.
pub fn missing_env(variable: &str, host_variable: &str) -> String {
    format!("the MCP server needs the environment variable {host_variable} (for its {variable}), which is not set")
}

/// The log line of a listed tool whose name is not one segment.
pub fn skipped_tool_name(plugin: &str, tool: &str) -> String {
    format!(
        "MCP server {plugin}: skipped the tool {tool:?}: its name does not fit the segment grammar"
    )
}

/// The log line of a tool listed a second time.
pub fn skipped_duplicate(plugin: &str, tool: &str) -> String {
    format!("MCP server {plugin}: skipped the tool {tool:?}: the server lists it twice")
}

/// An activation failure `reason` with the last line the server wrote to stderr.
pub fn with_stderr(reason: String, stderr: Option<&str>) -> String {
    match stderr {
        Some(line) => format!("{reason} (its stderr: {line})"),
        None => reason,
    }
}
