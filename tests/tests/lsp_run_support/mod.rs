//! Helpers of the suites that run prompts from the editor (`lsp_run*.rs`): the
//! workspace, the server, `workspace/executeCommand` and a run's events.

// Each suite uses a part of the helpers.
#![allow(dead_code)]

use promptforge_tests::lsp_client::LspClient;
use promptforge_tests::Scratch;
use serde_json::{json, Value};

/// A configuration whose Lua may loop long before its instruction limit.
pub const CONFIG: &str = "[limits]\nlua_instructions = 100000000000\n";

/// A prompt with this frontmatter tail and one section `## Go` holding `lua`.
pub fn prompt(frontmatter: &str, lua: &str) -> String {
    format!(
        "---\nname: p\ndescription: d\npromptforge: 0\n{frontmatter}---\n\n# T\n\n## Go\n\n```lua\n{lua}\n```\n"
    )
}

/// A scratch workspace holding `promptforge.toml` (`config`).
pub fn workspace(label: &str, config: &str) -> Scratch {
    let scratch = Scratch::new(label);
    scratch.write("promptforge.toml", config);
    scratch
}

/// A server whose user configuration is out of reach, initialized with `capabilities`.
pub fn start(scratch: &Scratch, capabilities: Value) -> LspClient {
    let no_user = scratch.path().join(".no-user-config");
    let no_user = no_user.display().to_string();
    let mut client = LspClient::start_with_env(&[("XDG_CONFIG_HOME", no_user.as_str())]);
    client.initialize(capabilities);
    client
}

/// Sends `workspace/executeCommand`.
pub fn execute(client: &mut LspClient, command: &str, argument: Value) -> Result<Value, Value> {
    client.request(
        "workspace/executeCommand",
        json!({ "command": command, "arguments": [argument] }),
    )
}

/// Starts `command` and returns its run id; nothing of the run arrives before
/// the response that names it.
pub fn start_run(client: &mut LspClient, command: &str, argument: Value) -> String {
    let answer = execute(client, command, argument).expect("the command is accepted");
    let run_id = answer["runId"]
        .as_str()
        .unwrap_or_else(|| panic!("no runId in {answer}"))
        .to_owned();
    let early = client.notifications.iter().any(|m| {
        m["params"]["runId"] == run_id.as_str() || m["params"]["token"] == run_id.as_str()
    });
    assert!(!early, "an event of {run_id} came before its response");
    let asked = client.server_requests.iter().any(|r| {
        r["params"]["runId"] == run_id.as_str() || r["params"]["token"] == run_id.as_str()
    });
    assert!(!asked, "a request of {run_id} came before its response");
    run_id
}

/// The next event of run `run_id`.
pub fn next_event(client: &mut LspClient, run_id: &str) -> Value {
    let message = client.wait_notification(|m| {
        m["method"] == "promptforge/runEvent" && m["params"]["runId"] == run_id
    });
    message["params"]["event"].clone()
}

/// Every event of run `run_id` up to its last (`finished` or `failed`).
pub fn events(client: &mut LspClient, run_id: &str) -> Vec<Value> {
    let mut all = Vec::new();
    loop {
        let event = next_event(client, run_id);
        let last = event["type"] == "finished" || event["type"] == "failed";
        all.push(event);
        if last {
            return all;
        }
    }
}

/// The events up to the first one `pick` accepts (included).
pub fn events_until(
    client: &mut LspClient,
    run_id: &str,
    pick: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut all = Vec::new();
    loop {
        let event = next_event(client, run_id);
        let found = pick(&event);
        let last = event["type"] == "finished" || event["type"] == "failed";
        all.push(event);
        if found {
            return all;
        }
        assert!(!last, "the run ended first: {all:?}");
    }
}

pub fn types(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["type"].as_str()).collect()
}
