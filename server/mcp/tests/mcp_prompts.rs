//! MCP servers as Plugins of a prompt (`host.md` §3), against the real reference
//! server `@modelcontextprotocol/server-everything` and a small stub server: a
//! prompt's Lua and a scripted model call the server's tools through their aliases,
//! and the server ends with the run.
//! They need `node` and `npm` on `PATH` (see `mcp_common`).

mod mcp_common;

use std::path::Path;
use std::sync::Arc;

use mcp_common::{
    alive, children, everything, read_pid, repo_root, stub, temp_file, wait_until, ID,
};
use promptforge_engine::testing::{
    add_script, counts, envelope, nonce, prepare_text, prompt, run_async,
};
use promptforge_engine::{run, Host, Outcome, RunErrorKind, RunEvents, RunOptions, Store};
use promptforge_syntax::test_file::{Round, ScriptedCall, Spanned};
use tokio_util::sync::CancellationToken;

/// A Host whose configuration has the `[plugin."acme/everything"]` table.
fn everything_host() -> Host {
    let text = format!(
        "[plugin.\"{ID}\"]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        everything().display().to_string()
    );
    let config =
        promptforge_engine::host::Config::parse(&text, &repo_root().join("x.toml")).unwrap();
    mcp_common::mcp_host(config)
}

/// A prompt declaring the everything Plugin with `frontmatter` after it, and the
/// section `## Main` running `code`.
fn everything_prompt(frontmatter: &str, code: &str) -> String {
    prompt(
        &format!("plugins:\n  - {ID}\n{frontmatter}"),
        &format!("## Main\n\n```lua\n{code}\n```\n"),
    )
}

async fn run_prompt(tools: &str, code: &str) -> Outcome {
    let text = everything_prompt(&format!("tools:\n{tools}"), code);
    run_async(&text, everything_host(), RunOptions::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_calls_the_servers_tools_from_lua() {
    let outcome = run_prompt(
        "  echo: acme/everything/echo\n",
        "return tools.call('echo', {message = 'hi'})",
    )
    .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let result = outcome.result.unwrap_or_default();
    assert!(result.contains("Echo: hi"), "{result}");
    assert!(result.contains("<untrusted_input_"), "untrusted: {result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_call_raises_the_servers_short_message() {
    let outcome = run_prompt(
        "  echo: acme/everything/echo\n",
        "local ok, err = pcall(tools.call, 'echo', {})\nreturn tostring(ok) .. '|' .. tostring(err)",
    )
    .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let result = outcome.result.unwrap_or_default();
    assert!(
        result.starts_with("false|tool call failure: MCP error -32602: Input validation error"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_is_a_missing_required_plugin() {
    let text = format!("[plugin.\"{ID}\"]\ncommand = \"promptforge-no-such-mcp-server\"\n");
    let config =
        promptforge_engine::host::Config::parse(&text, &repo_root().join("x.toml")).unwrap();
    let host = mcp_common::mcp_host(config);
    let text = everything_prompt(&format!("tools:\n  echo: {ID}/echo\n"), "return 1");
    let outcome = run_async(&text, host, RunOptions::default()).await;
    let error = outcome.error.unwrap();
    assert_eq!(error.kind.as_str(), "RequirementsUnmet");
    assert!(
        error
            .message
            .contains("- missing required Plugin: acme/everything"),
        "{}",
        error.message
    );
}

/// Runs a prompt with the everything Plugin, the slots `slots` and the section `code`
/// on a Host whose default model is the script `turns`, with seed 1.
async fn run_scripted(slots: &[(&str, &str)], code: &str, turns: Vec<Round>) -> Outcome {
    let mut tools = String::new();
    for (alias, name) in slots {
        tools.push_str(&format!("  {alias}: {ID}/{name}\n"));
    }
    let text = everything_prompt(&format!("tools:\n{tools}models:\n  w: {{}}\n"), code);
    let mut host = everything_host();
    add_script(&mut host, turns);
    let options = RunOptions {
        seed: Some(1),
        ..Default::default()
    };
    run_async(&text, host, options).await
}

/// Lua that runs `models.loop` on one user message and returns the reply, then each
/// record as `role|name|tool_call_id|content`, separated by `\x1e`.
const LOOP_AND_RECORDS: &str = "local msgs = messages.new():user('go')\nlocal reply = models.loop(msgs)\nlocal out = { reply }\nfor i = 1, #msgs do\n  local m = msgs[i]\n  out[#out + 1] = m.role .. '|' .. (m.name or '') .. '|' .. (m.tool_call_id or '') .. '|' .. m.content\nend\n";

fn call_turn(calls: &[(&str, &str)]) -> Round {
    Round::Calls(
        calls
            .iter()
            .map(|(name, arguments)| ScriptedCall {
                alias: Spanned::new((*name).to_owned(), 0..0),
                arguments: (*arguments).to_owned(),
            })
            .collect(),
    )
}

/// A scripted model calls the server's tools through their aliases inside
/// `models.loop`: each result comes back as a tool record named by the alias, in the
/// untrusted envelope, and the calls count per alias.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_model_calls_the_servers_tools_in_models_loop() {
    let turns = vec![
        call_turn(&[
            ("echo", r#"{"message":"hi"}"#),
            ("sum", r#"{"a":2,"b":3.5}"#),
        ]),
        Round::Text("Echo said hi; the sum is 5.5.".to_owned()),
    ];
    let code = format!(
        "tools.add({{'echo', 'sum'}})\n{LOOP_AND_RECORDS}local call = msgs[2].tool_calls\nout[#out + 1] = call[1].name .. ' ' .. call[1].arguments .. ' ' .. call[2].name .. ' ' .. call[2].arguments\nout[#out + 1] = tools.calls.echo .. ',' .. tools.calls.sum\nreturn table.concat(out, '\\30')"
    );
    let outcome = run_scripted(&[("echo", "echo"), ("sum", "get-sum")], &code, turns).await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let result = outcome.result.clone().unwrap_or_default();
    let parts: Vec<&str> = result.split('\u{1e}').collect();
    let n = nonce();
    assert_eq!(
        parts,
        [
            "Echo said hi; the sum is 5.5.".to_owned(),
            "user|||go".to_owned(),
            "assistant|||".to_owned(),
            format!("tool|echo|call_1_1|{}", envelope(&n, "Echo: hi")),
            format!(
                "tool|sum|call_1_2|{}",
                envelope(&n, "The sum of 2 and 3.5 is 5.5.")
            ),
            "assistant|||Echo said hi; the sum is 5.5.".to_owned(),
            r#"echo {"message":"hi"} sum {"a":2,"b":3.5}"#.to_owned(),
            "1,1".to_owned(),
        ]
    );
    assert_eq!(outcome.calls, counts(&[("echo", 1), ("sum", 1)]));
    assert_eq!(outcome.rounds, 2);
}

/// A call the server answers with `isError` (its own input validation: a count above
/// the tool's maximum) and a call whose arguments break the tool's schema (a string
/// for a number, refused by the Engine before the server) both go back to the model as
/// wrapped failure text; both count, and the loop continues to the text reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_mcp_call_in_models_loop_becomes_wrapped_failure_text() {
    let turns = vec![
        call_turn(&[
            ("links", r#"{"count":50}"#),
            ("sum", r#"{"a":"two","b":3}"#),
            ("echo", r#"{"message":"still here"}"#),
        ]),
        Round::Text("sorry".to_owned()),
    ];
    let code = format!(
        "tools.add({{'echo', 'sum', 'links'}})\n{LOOP_AND_RECORDS}out[#out + 1] = tools.calls.links .. ',' .. tools.calls.sum .. ',' .. tools.calls.echo\nreturn table.concat(out, '\\30')"
    );
    let outcome = run_scripted(
        &[
            ("echo", "echo"),
            ("sum", "get-sum"),
            ("links", "get-resource-links"),
        ],
        &code,
        turns,
    )
    .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let result = outcome.result.clone().unwrap_or_default();
    let parts: Vec<&str> = result.split('\u{1e}').collect();
    assert_eq!(parts.len(), 8, "{result}");
    let n = nonce();
    assert_eq!(parts[..3], ["sorry", "user|||go", "assistant|||"]);
    // The server's isError result: its text, wrapped as untrusted.
    let (head, tail) = envelope(&n, "\u{0}")
        .split_once('\u{0}')
        .map(|(h, t)| (h.to_owned(), t.to_owned()))
        .unwrap();
    let links = parts[3]
        .strip_prefix("tool|links|call_1_1|")
        .unwrap_or_else(|| panic!("{}", parts[3]));
    let failure = links
        .strip_prefix(&head)
        .and_then(|rest| rest.strip_suffix(&tail))
        .unwrap_or_else(|| panic!("not wrapped: {links}"));
    assert!(
        failure.starts_with(
            "MCP error -32602: Input validation error: Invalid arguments for tool get-resource-links"
        ),
        "{failure}"
    );
    assert!(!failure.starts_with("tool call failure"), "{failure}");
    assert_eq!(
        parts[4],
        format!(
            "tool|sum|call_1_2|{}",
            envelope(
                &n,
                "invalid arguments for tool \"sum\": property \"a\" must be of type number, got string"
            )
        )
    );
    assert_eq!(
        parts[5],
        format!("tool|echo|call_1_3|{}", envelope(&n, "Echo: still here"))
    );
    assert_eq!(parts[6..], ["assistant|||sorry", "1,1,1"]);
    assert_eq!(
        outcome.calls,
        counts(&[("echo", 1), ("links", 1), ("sum", 1)])
    );
}

/// host.md §3: a tool "whose name fits the segment grammar" becomes a tool path,
/// "others are skipped with a log line": the line reaches the run log through
/// prepare.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipped_tool_names_reach_the_run_log() {
    let text = format!(
        "[plugin.\"{ID}\"]\ncommand = \"node\"\nargs = [{:?}]\n",
        stub().display().to_string()
    );
    let config =
        promptforge_engine::host::Config::parse(&text, &repo_root().join("x.toml")).unwrap();
    let host = mcp_common::mcp_host(config);
    let text = everything_prompt(&format!("tools:\n  echo: {ID}/echo\n"), "return 'ok'");
    let outcome = run_async(&text, host, RunOptions::default()).await;
    assert_eq!(outcome.result.as_deref(), Some("ok"), "{:?}", outcome.error);
    assert_eq!(
        outcome.log,
        [
            "MCP server acme/everything: skipped the tool \"getTinyImage\": its name does not fit the segment grammar",
            "MCP server acme/everything: skipped the tool \"bad name\": its name does not fit the segment grammar",
            "MCP server acme/everything: skipped the tool \"echo\": the server lists it twice",
        ]
    );
}

/// A Host whose `acme/everything` Plugin is the stub server started by `sh`: the
/// shell writes its pid to `pid_file` and waits for the stub, its child.
fn wrapped_stub_host(pid_file: &Path) -> Host {
    let script = format!(
        "echo $$ > '{}'; node '{}'; exit 0",
        pid_file.display(),
        stub().display()
    );
    let text = format!("[plugin.\"{ID}\"]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\n");
    let config =
        promptforge_engine::host::Config::parse(&text, &repo_root().join("x.toml")).unwrap();
    mcp_common::mcp_host(config)
}

/// Cancels the run as its first tool call starts.
struct CancelOnCall(CancellationToken);

impl RunEvents for CancelOnCall {
    fn tool_call(&self, _alias: &str, _path: Option<&str>, _call_id: &str) {
        self.0.cancel();
    }
}

/// A run's MCP server, and what it started, is killed when the run ends, however
/// it ends (finished, failed, cancelled in a call), even while one of its tools is
/// still held elsewhere (a task of the run, a cache): not when the last one goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_server_and_its_children_are_killed_when_the_run_ends() {
    let endings = [
        ("finished", "return 'done'", None),
        ("failed", "error('boom')", Some(RunErrorKind::Lua)),
        (
            "cancelled",
            "tools.call('slow', {})\nreturn 'never'",
            Some(RunErrorKind::Cancelled),
        ),
    ];
    for (ending, code, kind) in endings {
        let pid_file = temp_file(&format!("{ending}.pid"));
        let host = wrapped_stub_host(&pid_file);
        let text = everything_prompt(&format!("tools:\n  slow: {ID}/slow\n"), code);
        let prepared = prepare_text(&text, &host)
            .await
            .expect("the prompt prepares");
        let held = prepared.slot("slow").and_then(|s| s.tool.clone());
        assert!(held.is_some(), "{ending}: the slot is bound");
        let shell = read_pid(&pid_file).await;
        let stub = children(shell);
        assert_eq!(stub.len(), 1, "{ending}: the shell runs the stub");
        let cancel = CancellationToken::new();
        let options = RunOptions {
            cancel: cancel.clone(),
            ..RunOptions::default()
        };
        let store = Arc::new(Store::in_memory());
        let events = Arc::new(CancelOnCall(cancel));
        let outcome = run(Arc::new(prepared), Arc::new(host), store, options, events).await;
        assert_eq!(outcome.error.map(|e| e.kind), kind, "{ending}");
        wait_until(&format!("{ending}: the shell to die"), || !alive(shell)).await;
        wait_until(&format!("{ending}: the stub to die"), || {
            stub.iter().all(|&pid| !alive(pid))
        })
        .await;
        drop(held);
    }
}
