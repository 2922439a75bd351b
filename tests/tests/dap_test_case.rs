//! Issue 28: a prompt test case under the debugger. `launch` with `program` a
//! test file and `case` a name runs that case as `promptforge test` does (its
//! model script, args and store), stops at breakpoints set in the tested prompt,
//! and ends with the case's verdict as output and `exited` 0 (passed) or 1.

use promptforge_tests::dap_client::{prompt_in, DapClient};
use serde_json::{json, Value};

/// Lines of the prompt: 12 `local m = ...`, 13 `local reply = models.loop(m)`,
/// 14 `return reply`.
const PROMPT: &str = "---\nname: greet\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Greet\n\n```lua\nlocal m = messages.new():user('hi ' .. args)\nlocal reply = models.loop(m)\nreturn reply\n```\n";

const TESTS: &str = "cases:\n  - name: greets\n    args: Ada\n    model:\n      - text: hello Ada\n    expect:\n      result: hello Ada\n  - name: expects too much\n    args: Ada\n    model:\n      - text: hello Ada\n    expect:\n      result: goodbye\n";

/// Launches `case` of the test file with a breakpoint on the prompt's line 14.
fn launch_case(
    client: &mut DapClient,
    tests: &std::path::Path,
    prompt: &std::path::Path,
    case: &str,
) -> Value {
    client.initialize();
    client.ok("launch", json!({ "program": tests, "case": case }));
    let set = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": prompt }, "breakpoints": [{ "line": 14 }] }),
    );
    client.ok("setFunctionBreakpoints", json!({ "breakpoints": [] }));
    client.ok("setExceptionBreakpoints", json!({ "filters": [] }));
    client.ok("configurationDone", Value::Null);
    set
}

#[test]
fn a_case_runs_under_the_debugger_with_its_script_and_ends_with_its_verdict() {
    let (scratch, prompt) = prompt_in("dap-case", "greet.md", PROMPT, "");
    let tests = scratch.write("greet.test.yaml", TESTS);
    let mut client = DapClient::start();
    let set = launch_case(&mut client, &tests, &prompt, "greets");
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    assert_eq!(client.stopped()["reason"], "breakpoint");
    // The paused frame holds the scripted model's reply and the case's args.
    let frame = client.frame_id(1, 0);
    let locals = client.scope(frame, "Locals");
    assert_eq!(client.variable(locals, "reply").0, "\"hello Ada\"");
    let evaluated = client.ok(
        "evaluate",
        json!({ "expression": "args", "frameId": frame, "context": "repl" }),
    );
    assert_eq!(evaluated["result"], "\"Ada\"");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    let shown = client.output_until_terminated("stdout");
    assert_eq!(shown, format!("ok      {}: greets\n", tests.display()));
    client.finish();
}

#[test]
fn a_failing_case_ends_with_exit_code_1_and_its_failure() {
    let (scratch, prompt) = prompt_in("dap-case-fail", "greet.md", PROMPT, "");
    let tests = scratch.write("greet.test.yaml", TESTS);
    let mut client = DapClient::start();
    launch_case(&mut client, &tests, &prompt, "expects too much");
    assert_eq!(client.stopped()["reason"], "breakpoint");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 1);
    let shown = client.output_until_terminated("stderr");
    assert!(
        shown.starts_with(&format!("FAILED  {}: expects too much\n", tests.display())),
        "{shown}"
    );
    assert!(
        shown.contains(
            "expect.result: the result differs\n  expected: \"goodbye\"\n  actual:   \"hello Ada\""
        ),
        "{shown}"
    );
    client.finish();
}

#[test]
fn a_case_the_file_does_not_hold_is_refused_at_launch() {
    let (scratch, _prompt) = prompt_in("dap-case-missing", "greet.md", PROMPT, "");
    let tests = scratch.write("greet.test.yaml", TESTS);
    let mut client = DapClient::start();
    client.initialize();
    let response = client.request("launch", json!({ "program": tests, "case": "absent" }));
    assert_eq!(response["success"], false, "{response}");
    assert_eq!(
        response["message"],
        format!("{} has no case named \"absent\"", tests.display())
    );
}

/// Hostile probe (issue 39): `case` with the prompt itself as `program` said
/// `greet.md.md cannot be read`; it now says what `program` must be.
#[test]
fn a_case_launched_on_a_prompt_names_the_test_file_it_needs() {
    let (_scratch, prompt) = prompt_in("dap-case-prompt", "greet.md", PROMPT, "");
    let mut client = DapClient::start();
    client.initialize();
    let response = client.request("launch", json!({ "program": prompt, "case": "greets" }));
    assert_eq!(response["success"], false, "{response}");
    assert_eq!(
        response["message"],
        format!(
            "{} is not a prompt test file: with \"case\", \"program\" is the test file that holds the case (greet.test.yaml)",
            prompt.display()
        )
    );
}

/// Hostile probe (issue 39): a case name of 3.5 MB came back whole in the
/// refusal; a message now echoes 200 characters of it and its length.
#[test]
fn a_huge_case_name_is_not_echoed_whole() {
    let (scratch, _prompt) = prompt_in("dap-case-huge", "greet.md", PROMPT, "");
    let tests = scratch.write("greet.test.yaml", TESTS);
    let mut client = DapClient::start();
    client.initialize();
    let name = "x".repeat(1_000_000);
    let response = client.request("launch", json!({ "program": tests, "case": name }));
    assert_eq!(response["success"], false);
    let message = response["message"].as_str().expect("a message");
    assert_eq!(
        message,
        format!(
            "{} has no case named \"{}\"… (1000000 bytes)",
            tests.display(),
            "x".repeat(200)
        )
    );
    // A wrong type of a huge value: the same bound.
    let response = client.request("launch", json!({ "program": tests, "seed": name }));
    let message = response["message"].as_str().expect("a message");
    assert!(message.len() < 400, "{} bytes", message.len());
}
