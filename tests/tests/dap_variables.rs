//! Scopes, variables and evaluation of `promptforge dap` over stdio on the real
//! binary (the debugger issue), written from the DAP specification: a stop's
//! Locals and Run scope; `evaluate` reads `var` and the store, runs statements,
//! refuses what suspends and stops a runaway expression, even one that catches
//! its budget's error with `pcall`; `setVariable` on a
//! local and on a field of `var`; a breakpoint set while a loop runs; requests
//! that name nothing paused get a clear failure.

use promptforge_tests::dap_client::{prompt_in, DapClient, Setup};
use serde_json::{json, Value};

/// `## Go` calls its off-walk child `### Helper` and a shared function.
/// File lines: 18 `var.count = 1`, 19 `local r = call(...)`, 20 `local d =
/// double(2)`, 21 `store.write(...)`, 22 `return r .. d`.
const CALLS: &str = "---\nname: calls\ndescription: d\npromptforge: 0\n---\n\n# Calls\n\n```lua shared\nfunction double(n)\n  return n * 2\nend\n```\n\n## Go\n\n```lua\nvar.count = 1\nlocal r = call('### Helper', 'x')\nlocal d = double(2)\nstore.write('notes/a.md', 'hello\\nworld\\n')\nreturn r .. d\n```\n\n### Helper\n\n---\n\n```lua\nlocal up = args .. '!'\nreturn up\n```\n";

fn paused_at(label: &str, line: u32, launch: Value) -> (promptforge_tests::Scratch, DapClient) {
    let (scratch, program) = prompt_in(label, "calls.md", CALLS, "");
    let mut client = DapClient::start();
    let setup = Setup {
        launch,
        ..Setup::lines(&[line])
    };
    client.debug(&program, setup);
    client.stopped();
    (scratch, client)
}

fn shown(variables: Vec<(String, String, i64)>) -> Vec<(String, String)> {
    variables.into_iter().map(|(n, v, _)| (n, v)).collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn a_stop_shows_its_locals_and_the_run_scope() {
    let (_scratch, mut client) =
        paused_at("dap-scopes", 22, json!({ "args": "some words", "seed": 7 }));
    let frame = client.frame_id(1, 0);
    let scopes = client.ok("scopes", json!({ "frameId": frame }));
    let names: Vec<&str> = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["Locals", "Upvalues", "Run"]);
    let locals = client.scope(frame, "Locals");
    assert_eq!(
        shown(client.variables(locals)),
        pairs(&[("r", "\"x!\""), ("d", "4")])
    );
    let upvalues = client.scope(frame, "Upvalues");
    assert_eq!(client.variables(upvalues), []);

    let run = client.scope(frame, "Run");
    let entries = client.variables(run);
    let names: Vec<&str> = entries.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["args", "var", "sys", "tools.calls", "scope", "store"]
    );
    assert_eq!(entries[0].1, "\"some words\"");
    let (var, var_ref) = client.variable(run, "var");
    assert_eq!(var, "{count = 1}");
    assert_eq!(shown(client.variables(var_ref)), pairs(&[("count", "1")]));
    let (_, sys) = client.variable(run, "sys");
    let sys = shown(client.variables(sys));
    assert_eq!(
        &sys[..2],
        pairs(&[("prompt", "\"calls\""), ("section", "\"Go\"")])
    );
    assert_eq!(sys[3], ("seed".to_owned(), "7".to_owned()));
    let (store, store_ref) = client.variable(run, "store");
    assert_eq!(store, "1 files");
    let files = client.variables(store_ref);
    assert_eq!(files[0].0, "notes/a.md");
    assert_eq!(files[0].1, "\"hello\\nworld\\n\"");
    assert_eq!(
        shown(client.variables(files[0].2)),
        pairs(&[("[1]", "\"hello\""), ("[2]", "\"world\"")])
    );

    // The section's entry frame shows the Run scope only; a caller's frame none.
    let frames = client.ok("stackTrace", json!({ "threadId": 1 }));
    let entry = frames["stackFrames"][1]["id"].as_i64().expect("an id");
    let scopes = client.ok("scopes", json!({ "frameId": entry }));
    assert_eq!(scopes["scopes"].as_array().map(Vec::len), Some(1));
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}

#[test]
fn evaluate_reads_var_and_the_store_runs_statements_and_refuses_what_suspends() {
    let (_scratch, mut client) = paused_at("dap-evaluate", 22, json!({}));
    let frame = client.frame_id(1, 0);
    let result = |client: &mut DapClient, expression: &str, context: &str| {
        let answer = client.evaluate(expression, Some(frame), context);
        if answer["success"] == true {
            Ok(answer["body"]["result"]
                .as_str()
                .unwrap_or_default()
                .to_owned())
        } else {
            Err(answer["message"].as_str().unwrap_or_default().to_owned())
        }
    };
    assert_eq!(
        result(&mut client, "var.count", "watch"),
        Ok("1".to_owned())
    );
    assert_eq!(
        result(&mut client, "store.read('notes/a.md')", "repl"),
        Ok("\"hello\\nworld\\n\"".to_owned())
    );
    assert_eq!(
        result(&mut client, "r .. d", "hover"),
        Ok("\"x!4\"".to_owned())
    );
    // Statements; an assignment to a local reaches the frame.
    assert_eq!(
        result(&mut client, "d = d + 10", "repl"),
        Ok("nil".to_owned())
    );
    assert_eq!(result(&mut client, "d", "repl"), Ok("14".to_owned()));
    // A long string: cut in a hover, whole in the console.
    let long = result(&mut client, "string.rep('x', 300)", "hover").unwrap_or_default();
    assert!(long.ends_with("… (300 characters)"), "{long}");
    assert_eq!(
        result(&mut client, "string.rep('x', 300)", "repl").map(|s| s.len()),
        Ok(302)
    );
    assert_eq!(
        result(&mut client, "nosuch.x", "repl"),
        Err("attempt to index a nil value (global 'nosuch')".to_owned())
    );
    assert_eq!(
        result(&mut client, "call('### Helper')", "repl"),
        Err("call is not available while the run is paused".to_owned())
    );
    assert_eq!(
        result(&mut client, "(function() while true do end end)()", "repl"),
        Err("the expression ran past its budget of 10000000 instructions".to_owned())
    );
    // Still paused, still usable.
    assert_eq!(result(&mut client, "1 + 1", "repl"), Ok("2".to_owned()));
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "x!14\n");
    client.finish();
}

#[test]
fn a_runaway_expression_that_catches_its_budget_error_still_ends() {
    let (_scratch, mut client) = paused_at("dap-evaluate-pcall", 22, json!({}));
    let frame = client.frame_id(1, 0);
    // Each escape a block has from the run's instruction limit, tried on the
    // evaluation's budget: none of them catches it.
    for expression in [
        "while true do pcall(function() while true do end end) end",
        "while true do xpcall(function() while true do end end, print) end",
        "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
    ] {
        let answer = client.evaluate(expression, Some(frame), "repl");
        assert_eq!(answer["success"], false, "{expression}");
        assert_eq!(
            answer["message"],
            "the expression ran past its budget of 10000000 instructions"
        );
    }
    // The chain is still paused and answers; a pcall in an evaluation still
    // catches an ordinary error; the run goes on as before.
    let answer = client.evaluate("select(2, pcall(error, 'boom', 0))", Some(frame), "repl");
    assert_eq!(answer["body"]["result"], "\"boom\"");
    assert_eq!(client.frames(1)[0].1, 22);
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "x!4\n");
    client.finish();
}

#[test]
fn set_variable_changes_a_local_and_a_field_of_var() {
    let (_scratch, mut client) = paused_at("dap-set", 20, json!({}));
    let frame = client.frame_id(1, 0);
    let locals = client.scope(frame, "Locals");
    let set = client.ok(
        "setVariable",
        json!({ "variablesReference": locals, "name": "r", "value": "'changed '" }),
    );
    assert_eq!(set["value"], "\"changed \"");
    let run = client.scope(frame, "Run");
    let (_, var) = client.variable(run, "var");
    let set = client.ok(
        "setVariable",
        json!({ "variablesReference": var, "name": "count", "value": "{1, 2}" }),
    );
    assert_eq!(set["value"], "{1, 2}");
    assert!(set["variablesReference"].as_i64().is_some_and(|r| r > 0));
    let refused = client.request(
        "setVariable",
        json!({ "variablesReference": var, "name": "f", "value": "print" }),
    );
    assert_eq!(refused["success"], false);
    assert_eq!(
        refused["message"],
        "var holds JSON data only: cannot store a function"
    );
    let (_, sys) = client.variable(run, "sys");
    let refused = client.request(
        "setVariable",
        json!({ "variablesReference": sys, "name": "prompt", "value": "'x'" }),
    );
    assert_eq!(
        refused["message"],
        "only locals, upvalues and fields under var can be set"
    );
    let answer = client.evaluate("#var.count", Some(frame), "repl");
    assert_eq!(answer["body"]["result"], "2");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "changed 4\n");
    client.finish();
}

const SPIN: &str = "---\nname: spin\ndescription: d\npromptforge: 0\n---\n\n# Spin\n\n## Loop\n\n```lua\nlocal n = 0\nlog('spinning')\nwhile true do n = n + 1 end\n```\n";

#[test]
fn a_breakpoint_set_while_a_loop_runs_stops_it() {
    let (_scratch, program) = prompt_in("dap-late", "spin.md", SPIN, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::default());
    client.take(|m| m["event"] == "output" && m["body"]["output"] == "spinning\n");
    let set = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program }, "breakpoints": [{ "line": 14, "condition": "n > 1000" }] }),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true);
    let stop = client.stopped();
    assert_eq!(stop["reason"], "breakpoint");
    let frame = client.frame_id(1, 0);
    let answer = client.evaluate("n > 1000", Some(frame), "repl");
    assert_eq!(answer["body"]["result"], "true");
    client.ok("terminate", Value::Null);
    assert_eq!(client.event("exited")["body"]["exitCode"], 130);
    client.finish();
}

#[test]
fn requests_about_nothing_paused_fail_clearly_and_bad_frames_do_not_end_the_session() {
    let (_scratch, program) = prompt_in("dap-nothing", "spin.md", SPIN, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::default());
    client.take(|m| m["event"] == "output" && m["body"]["output"] == "spinning\n");
    let answer = client.evaluate("1", None, "repl");
    assert_eq!(
        answer["message"],
        "the run is not paused: expressions run in a paused chain"
    );
    let answer = client.request("stackTrace", json!({ "threadId": 99 }));
    assert_eq!(answer["message"], "thread 99 is not paused");
    let answer = client.request("variables", json!({ "variablesReference": 12345 }));
    assert_eq!(answer["success"], false);
    let answer = client.request("pause", json!({ "threadId": 42 }));
    assert_eq!(answer["message"], "there is no thread 42 to pause");
    // A frame that is not JSON is reported and the session goes on.
    client.write(b"Content-Length: 5\r\n\r\nhello");
    let said = client.take(|m| m["event"] == "output" && m["body"]["category"] == "console");
    assert!(
        said["body"]["output"]
            .as_str()
            .is_some_and(|t| t.starts_with("promptforge: dap: the message is not JSON")),
        "{said}"
    );
    client.ok("pause", json!({ "threadId": 1 }));
    assert_eq!(client.stopped()["reason"], "pause");
    client.ok("terminate", Value::Null);
    assert_eq!(client.event("exited")["body"]["exitCode"], 130);
    client.finish();
}
