//! `promptforge dap` over stdio on the real binary (the debugger issue, its first
//! slice): a launched prompt runs as `promptforge run` runs it, its log and
//! outcome arrive as `output` events, then `exited` and `terminated`; line
//! breakpoints bind to lines with code and stop there, with the stack;
//! `terminate` cancels a run that never ends or is paused; a request larger
//! than the adapter reads ends the session.

use std::time::{Duration, Instant};

use promptforge_tests::dap_client::{prompt_in, DapClient, Setup};
use promptforge_tests::{workspace_root, Scratch};
use serde_json::{json, Value};

#[test]
fn a_launched_prompt_runs_as_run_does_and_ends_with_exited_and_terminated() {
    let mut client = DapClient::start();
    let program = workspace_root().join("examples/word-stats.md");
    let launched =
        client.launch(json!({ "program": program, "args": ["The", "quick", "brown", "fox"] }));
    assert_eq!(launched["success"], true, "{launched}");
    let exited = client.event("exited");
    assert_eq!(exited["body"]["exitCode"], 0);
    let stdout = client.output_until_terminated("stdout");
    assert!(
        stdout.ends_with("4 words, 16 letters, 4.0 letters per word\n"),
        "{stdout:?}"
    );
    // The run ended: no chain is left.
    let threads = client.request("threads", Value::Null);
    assert_eq!(threads["body"]["threads"], json!([]));
    assert_eq!(client.request("disconnect", Value::Null)["success"], true);
    assert_eq!(client.exit_code(), Some(0));
}

/// A prompt whose section `## Go` calls a function of its `lua shared` block.
/// File lines: 10 `function double(n)`, 11 `return n * 2`, 15 `## Go`,
/// 18 `local a = 1`, 19 blank, 20 comment, 21 `local b = double(a)`, 22 `log(...)`,
/// 23 `return b`.
const STEPS: &str = "---\nname: steps\ndescription: d\npromptforge: 0\n---\n\n# Steps\n\n```lua shared\nfunction double(n)\n  return n * 2\nend\n```\n\n## Go\n\n```lua\nlocal a = 1\n\n-- then\nlocal b = double(a)\nlog('b is ' .. b)\nreturn b\n```\n";

fn steps_prompt(label: &str) -> (Scratch, std::path::PathBuf) {
    prompt_in(label, "steps.md", STEPS, "")
}

#[test]
fn breakpoints_bind_to_lines_with_code_and_stop_there_with_the_stack() {
    let (_scratch, program) = steps_prompt("dap-break");
    let mut client = DapClient::start();
    let answers = client.debug(&program, Setup::lines(&[19, 11, 3]));
    assert_eq!(answers[0]["verified"], true);
    assert_eq!(
        answers[0]["line"], 21,
        "a blank line binds to the next line with code"
    );
    assert_eq!(answers[1]["verified"], true);
    assert_eq!(answers[1]["line"], 11);
    assert_eq!(answers[2]["verified"], false);
    assert_eq!(answers[2]["message"], "not inside a lua block that runs");

    // The shared library runs in the H1 pass before any call: nothing stops
    // there. `## Go` stops first at line 21, then inside `double` at line 11.
    let stopped = client.event("stopped");
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    assert_eq!(stopped["body"]["threadId"], 1);
    assert_eq!(
        client.frames(1),
        [("lua block 2".to_owned(), 21), ("## Go".to_owned(), 15)]
    );
    assert_eq!(
        client.request("continue", json!({ "threadId": 1 }))["success"],
        true
    );
    client.event("stopped");
    assert_eq!(
        client.frames(1),
        [
            ("double".to_owned(), 11),
            ("lua block 2".to_owned(), 21),
            ("## Go".to_owned(), 15)
        ]
    );
    assert_eq!(
        client.request("continue", json!({ "threadId": 1 }))["success"],
        true
    );
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    let stdout = client.output_until_terminated("stdout");
    assert_eq!(stdout, "b is 2\n2\n");
    assert_eq!(client.request("disconnect", Value::Null)["success"], true);
    assert_eq!(client.exit_code(), Some(0));
}

#[test]
fn terminate_ends_a_run_paused_at_a_breakpoint() {
    let (_scratch, program) = steps_prompt("dap-break-end");
    let mut client = DapClient::start();
    client.debug(&program, Setup::lines(&[18]));
    client.event("stopped");
    let asked = Instant::now();
    assert_eq!(client.request("terminate", Value::Null)["success"], true);
    let took = asked.elapsed();
    println!("dap terminate while paused -> response: {took:?}");
    assert!(took < Duration::from_millis(100), "terminate took {took:?}");
    assert_eq!(client.event("exited")["body"]["exitCode"], 130);
    assert_eq!(client.request("disconnect", Value::Null)["success"], true);
    assert_eq!(client.exit_code(), Some(0));
}

#[test]
fn initialize_announces_what_the_adapter_does_and_a_step_needs_a_paused_thread() {
    let mut client = DapClient::start();
    let initialized = client.request("initialize", json!({ "adapterID": "promptforge" }));
    let body = &initialized["body"];
    for capability in [
        "supportsConfigurationDoneRequest",
        "supportsTerminateRequest",
        "supportsConditionalBreakpoints",
        "supportsHitConditionalBreakpoints",
        "supportsLogPoints",
        "supportsFunctionBreakpoints",
        "supportsEvaluateForHovers",
        "supportsSetVariable",
        "supportsExceptionInfoRequest",
    ] {
        assert_eq!(body[capability], true, "{capability}: {body}");
    }
    let filters: Vec<&str> = body["exceptionBreakpointFilters"]
        .as_array()
        .map(|f| f.iter().filter_map(|f| f["filter"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(filters, ["uncaught", "raised"]);
    let step = client.request("stepIn", json!({ "threadId": 1 }));
    assert_eq!(step["success"], false);
    assert_eq!(step["message"], "thread 1 is not paused");
    let unknown = client.request("restart", json!({}));
    assert_eq!(
        unknown["message"],
        "the request restart is not supported by this adapter"
    );
    assert_eq!(client.request("disconnect", Value::Null)["success"], true);
    assert_eq!(client.exit_code(), Some(0));
}

#[test]
fn terminate_cancels_a_run_that_never_ends() {
    let scratch = Scratch::new("dap-spin");
    scratch.write(
        "promptforge.toml",
        "[limits]\nlua_instructions = 100000000000\n",
    );
    let program = scratch.write(
        "spin.md",
        "---\nname: spin\ndescription: d\npromptforge: 0\n---\n\n# Spin\n\n```lua\nlog('spinning')\nwhile true do end\n```\n",
    );
    let mut client = DapClient::start();
    assert_eq!(
        client.launch(json!({ "program": program }))["success"],
        true
    );
    client.take(|m| m["event"] == "output" && m["body"]["output"] == "spinning\n");
    let asked = Instant::now();
    let terminated = client.request("terminate", Value::Null);
    let took = asked.elapsed();
    println!("dap terminate of `while true do end` -> response: {took:?}");
    assert_eq!(terminated["success"], true);
    assert!(took < Duration::from_millis(100), "terminate took {took:?}");
    assert_eq!(client.event("exited")["body"]["exitCode"], 130);
    let stderr = client.output_until_terminated("stderr");
    assert!(stderr.contains("error[Cancelled]"), "{stderr:?}");
    assert_eq!(client.request("disconnect", Value::Null)["success"], true);
    assert_eq!(client.exit_code(), Some(0));
}

/// `disconnect` ends a walk of sections that never suspend nor reach the
/// instruction budget (a section that jumps to itself), and the adapter with it.
#[test]
fn disconnect_cancels_a_jump_loop() {
    let scratch = Scratch::new("dap-jump-loop");
    let program = scratch.write(
        "loop.md",
        "---\nname: loop\ndescription: d\npromptforge: 0\n---\n\n# Loop\n\n## Start\n\n```lua\nlog('looping')\n```\n\n## Self\n\n```lua\njump('## Self')\n```\n",
    );
    let mut client = DapClient::start();
    assert_eq!(
        client.launch(json!({ "program": program }))["success"],
        true
    );
    client.take(|m| m["event"] == "output" && m["body"]["output"] == "looping\n");
    let asked = Instant::now();
    let disconnected = client.request("disconnect", Value::Null);
    let took = asked.elapsed();
    println!("dap disconnect of a jump loop -> response: {took:?}");
    assert_eq!(disconnected["success"], true);
    assert!(
        took < Duration::from_millis(200),
        "disconnect took {took:?}"
    );
    assert_eq!(client.exit_code(), Some(0));
}

#[test]
fn a_launch_that_cannot_run_says_why_and_bad_arguments_are_refused() {
    let mut client = DapClient::start();
    let refused = client.launch(json!({ "args": 3 }));
    assert_eq!(refused["success"], false);
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("invalid launch arguments: missing field `program`")),
        "{refused}"
    );
    let scratch = Scratch::new("dap-plain");
    let program = scratch.write("notes.md", "# Notes\n");
    client.ok("launch", json!({ "program": program }));
    client.ok("configurationDone", Value::Null);
    assert_eq!(client.event("exited")["body"]["exitCode"], 2);
    let stderr = client.output_until_terminated("stderr");
    assert!(
        stderr.ends_with(":1:1: error[Frontmatter]: a prompt starts with YAML frontmatter between two --- lines\n"),
        "{stderr:?}"
    );
    assert_eq!(client.request("disconnect", Value::Null)["success"], true);
    assert_eq!(client.exit_code(), Some(0));
}

#[test]
fn input_ask_takes_the_launchs_answers_then_has_no_operator() {
    let text = "---\nname: ask\ndescription: d\npromptforge: 0\n---\n\n# Ask\n\n```lua\nlocal first = input.ask('name?')\nlocal ok, err = pcall(input.ask, 'again?')\nreturn first .. ' / ' .. tostring(err)\n```\n";
    let (_scratch, program) = prompt_in("dap-input", "ask.md", text, "");
    let mut client = DapClient::start();
    let launched = client.launch(json!({ "program": program, "input": ["Ada"] }));
    assert_eq!(launched["success"], true, "{launched}");
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(
        client.output_until_terminated("stdout"),
        "Ada / no operator is available to answer input.ask\n"
    );
    client.finish();
}

#[test]
fn a_request_larger_than_the_adapter_reads_ends_the_session_before_its_body() {
    let mut client = DapClient::start();
    client.initialize();
    // One byte past 4 MiB, and no body: the adapter does not wait for it.
    client.write(b"Content-Length: 4194305\r\n\r\n");
    assert_eq!(client.exit_code(), Some(1));
}
