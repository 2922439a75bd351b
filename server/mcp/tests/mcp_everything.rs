//! MCP servers as Plugins (`host.md` §3), against the real reference server
//! `@modelcontextprotocol/server-everything` and a small stub server: activation,
//! calls, the server's environment, failures, cancellation and the server's end.
//! The runs of prompts using them are in `mcp_prompts.rs`.
//!
//! The reference server is found at `$PROMPTFORGE_MCP_EVERYTHING` (its
//! `dist/index.js`), else in `<repo>/target/mcp`, where
//! `scripts/install-mcp-everything.sh` installs it (the tests run that script
//! themselves when the server is missing). They need `node` and `npm` on `PATH`.

mod mcp_common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_common::{
    alive, children, everything, gone, host_env, read_pid, repo_root, stub, temp_file, wait_until,
    ID,
};
use promptforge_engine::harness::{ActivationError, OutputKind, Plugin, Tool, Trust};
use promptforge_engine::host::config::PluginConfig;
use promptforge_engine::testing::activation;
use promptforge_mcp::McpPlugin;
use tokio_util::sync::CancellationToken;

fn plugin_of(command: &str, args: &[&str]) -> McpPlugin {
    let config = PluginConfig {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: [("TOKEN_ENV".to_owned(), "CORP_TOKEN".to_owned())].into(),
        conflicts: vec!["acme/fs".to_owned()],
        dir: repo_root(),
    };
    McpPlugin::from_config(ID, &config, &host_env)
}

fn everything_plugin() -> McpPlugin {
    let entry = everything();
    plugin_of("node", &[entry.to_str().unwrap_or_default(), "stdio"])
}

/// Activates `plugin` and also returns the lines it wrote to the activation's log.
async fn activate_logged(
    plugin: &McpPlugin,
    cancel: &CancellationToken,
) -> (Result<Vec<Arc<dyn Tool>>, ActivationError>, Vec<String>) {
    let activation = activation(cancel);
    let log = activation.log.clone();
    let tools = plugin.activate(activation).await;
    (tools, log.take())
}

async fn activate(
    plugin: &McpPlugin,
    cancel: &CancellationToken,
) -> Result<Vec<Arc<dyn Tool>>, ActivationError> {
    plugin.activate(activation(cancel)).await
}

async fn activation_error(plugin: &McpPlugin, cancel: &CancellationToken) -> ActivationError {
    match activate(plugin, cancel).await {
        Ok(tools) => panic!("{} tools activated", tools.len()),
        Err(error) => error,
    }
}

fn find<'a>(tools: &'a [Arc<dyn Tool>], short: &str) -> &'a Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.id().short_name() == short)
        .unwrap_or_else(|| panic!("no tool {short}"))
}

/// A plugin running server-everything under `sh`, which writes its pid to a file:
/// the server is then the shell's child (a grandchild of the test).
fn wrapped_everything(pid_file: &Path) -> McpPlugin {
    let script = format!(
        "echo $$ > '{}'; node '{}' stdio; exit 0",
        pid_file.display(),
        everything().display()
    );
    plugin_of("sh", &["-c", &script])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activation_lists_the_servers_tools_in_order() {
    let plugin = everything_plugin();
    assert_eq!(plugin.conflicts(), ["acme/fs"]);
    let cancel = CancellationToken::new();
    let (tools, log) = activate_logged(&plugin, &cancel).await;
    let tools = tools.unwrap();
    let ids: Vec<&str> = tools.iter().map(|t| t.id().as_str()).collect();
    assert_eq!(
        ids,
        [
            "acme/everything/echo",
            "acme/everything/get-annotated-message",
            "acme/everything/get-env",
            "acme/everything/get-resource-links",
            "acme/everything/get-resource-reference",
            "acme/everything/get-structured-content",
            "acme/everything/get-sum",
            "acme/everything/get-tiny-image",
            "acme/everything/gzip-file-as-resource",
            "acme/everything/toggle-simulated-logging",
            "acme/everything/toggle-subscriber-updates",
            "acme/everything/trigger-long-running-operation",
            "acme/everything/simulate-research-query",
        ]
    );
    // Every name of this server fits the segment grammar: nothing is skipped.
    assert_eq!(log, Vec::<String>::new());
    let echo = find(&tools, "echo");
    assert_eq!(echo.description(), "Echoes back the input string");
    assert_eq!(echo.wire_name(), "echo");
    assert_eq!(echo.parameters()["type"], "object");
    assert_eq!(echo.parameters()["properties"]["message"]["type"], "string");
    assert_eq!(echo.trust(), Trust::Untrusted);
    assert_eq!(echo.output_kind(), OutputKind::Plain);
    assert_eq!(
        find(&tools, "get-structured-content").output_kind(),
        OutputKind::Structured
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_return_untrusted_text_structured_json_and_failures() {
    let plugin = everything_plugin();
    let cancel = CancellationToken::new();
    let tools = activate(&plugin, &cancel).await.unwrap();

    let echo = find(&tools, "echo")
        .call(r#"{"message": "hi"}"#, &cancel)
        .await
        .unwrap();
    assert_eq!(echo.text, "Echo: hi");
    assert_eq!(
        (echo.trust, echo.kind),
        (Trust::Untrusted, OutputKind::Plain)
    );

    let sum = find(&tools, "get-sum")
        .call(r#"{"a": 2, "b": 3.5}"#, &cancel)
        .await
        .unwrap();
    assert_eq!(sum.text, "The sum of 2 and 3.5 is 5.5.");

    let weather = find(&tools, "get-structured-content")
        .call(r#"{"location": "Chicago"}"#, &cancel)
        .await
        .unwrap();
    assert_eq!(weather.kind, OutputKind::Structured);
    assert_eq!(weather.trust, Trust::Untrusted);
    let value: serde_json::Value = serde_json::from_str(&weather.text).unwrap();
    assert_eq!(value["temperature"], 36);
    assert_eq!(value["conditions"], "Light rain / drizzle");

    let image = find(&tools, "get-tiny-image")
        .call("{}", &cancel)
        .await
        .unwrap();
    let lines: Vec<&str> = image.text.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("Here's the image you requested:")
    );
    assert!(
        lines
            .get(1)
            .is_some_and(|l| l.starts_with("[image: image/png, ") && l.ends_with(" bytes]")),
        "{}",
        image.text
    );

    let links = find(&tools, "get-resource-links")
        .call(r#"{"count": 1}"#, &cancel)
        .await
        .unwrap();
    assert!(
        links
            .text
            .contains("[resource link: Blob Resource 1 <demo://resource/dynamic/blob/1>]"),
        "{}",
        links.text
    );

    let invalid = find(&tools, "echo").call("{}", &cancel).await.unwrap_err();
    assert!(
        invalid
            .message
            .starts_with("MCP error -32602: Input validation error"),
        "{}",
        invalid.message
    );
    let not_object = find(&tools, "echo").call("[1]", &cancel).await.unwrap_err();
    assert_eq!(not_object.message, "the arguments are not a JSON object");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_sees_the_mapped_variables_and_not_the_whole_host_environment() {
    let plugin = everything_plugin();
    let cancel = CancellationToken::new();
    let tools = activate(&plugin, &cancel).await.unwrap();
    let output = find(&tools, "get-env").call("{}", &cancel).await.unwrap();
    let env: serde_json::Value = serde_json::from_str(&output.text).unwrap();
    assert_eq!(env["TOKEN_ENV"], "tok-123");
    assert!(env.get("PATH").is_some());
    // Cargo sets CARGO_MANIFEST_DIR for the test; the server does not inherit it.
    assert!(env.get("CARGO_MANIFEST_DIR").is_none(), "{env}");
    assert!(env.get("CORP_TOKEN").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unset_mapped_variable_fails_activation() {
    let config = PluginConfig {
        command: "node".to_owned(),
        args: vec![],
        env: [("TOKEN_ENV".to_owned(), "PF_TEST_UNSET_VARIABLE".to_owned())].into(),
        conflicts: vec![],
        dir: repo_root(),
    };
    let plugin = McpPlugin::from_config(ID, &config, &host_env);
    let error = activation_error(&plugin, &CancellationToken::new()).await;
    assert_eq!(
        error.reason,
        "the MCP server needs the environment variable PF_TEST_UNSET_VARIABLE (for its TOKEN_ENV), which is not set"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_followed_and_names_outside_the_grammar_skipped_with_a_log_line() {
    let plugin = plugin_of("node", &[stub().to_str().unwrap_or_default()]);
    let cancel = CancellationToken::new();
    let (tools, log) = activate_logged(&plugin, &cancel).await;
    let tools = tools.unwrap();
    let ids: Vec<&str> = tools.iter().map(|t| t.id().as_str()).collect();
    assert_eq!(
        ids,
        [
            "acme/everything/echo",
            "acme/everything/slow",
            "acme/everything/structured",
            "acme/everything/plain.v2",
        ]
    );
    assert_eq!(
        log,
        [
            "MCP server acme/everything: skipped the tool \"getTinyImage\": its name does not fit the segment grammar",
            "MCP server acme/everything: skipped the tool \"bad name\": its name does not fit the segment grammar",
            "MCP server acme/everything: skipped the tool \"echo\": the server lists it twice",
        ]
    );
    // Each activation has its own log: a second one writes the same lines afresh.
    let (_, again) = activate_logged(&plugin, &cancel).await;
    assert_eq!(again.len(), 3, "{again:?}");
    assert_eq!(find(&tools, "plain.v2").description(), "Plain, titled");
    // A tool with an outputSchema whose result has JSON text only is structured.
    let structured = find(&tools, "structured")
        .call("{}", &cancel)
        .await
        .unwrap();
    assert_eq!(
        (structured.text.as_str(), structured.kind),
        ("{\"n\":1}", OutputKind::Structured)
    );
    let echo = find(&tools, "echo").call("", &cancel).await.unwrap();
    assert_eq!(echo.text, "echo: {}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_fails_activation() {
    let plugin = plugin_of("promptforge-no-such-mcp-server", &[]);
    let error = activation_error(&plugin, &CancellationToken::new()).await;
    assert!(
        error.reason.starts_with(
            "the MCP server did not start: cannot run promptforge-no-such-mcp-server: "
        ),
        "{}",
        error.reason
    );
    assert!(!error.reason.contains('\n'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_fails_activation_with_its_last_stderr_line() {
    let plugin = plugin_of(
        "sh",
        &[
            "-c",
            "echo starting >&2; echo 'boom: no config' >&2; exit 3",
        ],
    );
    let error = activation_error(&plugin, &CancellationToken::new()).await;
    assert_eq!(
        error.reason,
        "the MCP server did not start: it exited (exit status: 3) (its stderr: boom: no config)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_fails_within_the_timeout_and_is_killed() {
    let pid_file = temp_file("silent.pid");
    let script = format!("echo $$ > '{}'; exec sleep 60", pid_file.display());
    let plugin = plugin_of("sh", &["-c", &script]).with_start_timeout(Duration::from_millis(700));
    let started = Instant::now();
    let error = activation_error(&plugin, &CancellationToken::new()).await;
    let took = started.elapsed();
    assert_eq!(error.reason, "the MCP server did not answer within 0.7 s");
    assert!(took >= Duration::from_millis(700), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let pid = read_pid(&pid_file).await;
    wait_until("the silent server to be reaped", || gone(pid)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_interrupts_a_call_and_kills_the_server_and_its_children() {
    let pid_file = temp_file("cancel.pid");
    let plugin = wrapped_everything(&pid_file);
    let cancel = CancellationToken::new();
    let tools = activate(&plugin, &cancel).await.unwrap();
    let shell = read_pid(&pid_file).await;
    let node = children(shell);
    assert_eq!(node.len(), 1, "the shell runs node");
    assert!(alive(shell) && node.iter().all(|p| alive(*p)));

    let long = find(&tools, "trigger-long-running-operation").clone();
    let call_cancel = cancel.clone();
    let call = tokio::spawn(async move {
        let started = Instant::now();
        let outcome = long
            .call(r#"{"duration": 30, "steps": 3}"#, &call_cancel)
            .await;
        (outcome, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancelled_at = Instant::now();
    cancel.cancel();
    let (outcome, _) = call.await.unwrap();
    assert!(cancelled_at.elapsed() < Duration::from_secs(1));
    assert_eq!(outcome.unwrap_err().message, "the call was cancelled");
    // The tools are still held, yet the cancel signal ended the server.
    wait_until("the shell to be reaped", || gone(shell)).await;
    wait_until("node to die", || node.iter().all(|p| !alive(*p))).await;
    let after = find(&tools, "echo")
        .call(r#"{"message": "x"}"#, &cancel)
        .await
        .unwrap_err();
    assert_eq!(after.message, "the call was cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_tool_ends_the_server() {
    let pid_file = temp_file("drop.pid");
    let plugin = wrapped_everything(&pid_file);
    let cancel = CancellationToken::new();
    let tools = activate(&plugin, &cancel).await.unwrap();
    let shell = read_pid(&pid_file).await;
    let node = children(shell);
    let echo = find(&tools, "echo").clone();
    drop(tools);
    // One tool still holds the server.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(alive(shell));
    let output = echo.call(r#"{"message": "still"}"#, &cancel).await.unwrap();
    assert_eq!(output.text, "Echo: still");
    drop(echo);
    wait_until("the shell to be reaped", || gone(shell)).await;
    wait_until("node to die", || node.iter().all(|p| !alive(*p))).await;
    assert!(!cancel.is_cancelled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_sends_the_mcp_cancellation() {
    let record = temp_file("methods.txt");
    let plugin = plugin_of(
        "node",
        &[
            stub().to_str().unwrap_or_default(),
            record.to_str().unwrap_or_default(),
        ],
    );
    let run_cancel = CancellationToken::new();
    let tools = activate(&plugin, &run_cancel).await.unwrap();
    let call_cancel = CancellationToken::new();
    let slow = find(&tools, "slow").clone();
    let stop = call_cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stop.cancel();
    });
    let error = slow.call("{}", &call_cancel).await.unwrap_err();
    assert_eq!(error.message, "the call was cancelled");
    wait_until("notifications/cancelled", || {
        std::fs::read_to_string(&record).is_ok_and(|t| t.contains("notifications/cancelled"))
    })
    .await;
    let methods = std::fs::read_to_string(&record).unwrap_or_default();
    let methods: Vec<&str> = methods.lines().collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list",
            "tools/call",
            "notifications/cancelled"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_registers_one_plugin_per_table() {
    let entry = everything();
    let text = format!(
        "[plugin.\"{ID}\"]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        entry.display().to_string()
    );
    let config =
        promptforge_engine::host::Config::parse(&text, &repo_root().join("x.toml")).unwrap();
    let host = mcp_common::mcp_host(config);
    let plugin = host.harness().get(ID).unwrap().clone();
    let tools = plugin
        .activate(activation(&CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(tools.len(), 13);
}
