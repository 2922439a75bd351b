//! Breakpoints of `promptforge dap` over stdio on the real binary (the debugger
//! issue), written from the DAP specification: a condition (a Lua expression in
//! the frame), a hit count and a logpoint; function breakpoints on the
//! suspending calls (`models.loop` shows the conversation before the scripted
//! model is asked; `tool:ALIAS` stops before a model's tool call); the
//! uncaught and raised exception filters; breakpoints changed while the run
//! goes on; the reasons a breakpoint is not verified.

use promptforge_tests::dap_client::{prompt_in, DapClient, Setup};
use serde_json::{json, Value};

/// A loop over five values. File lines: 12 `local total = 0`, 13 `for i = 1, 5 do`,
/// 14 `total = total + i`, 15 `end`, 16 `return total`.
const LOOP: &str = "---\nname: loop\ndescription: d\npromptforge: 0\n---\n\n# Loop\n\n## Sum\n\n```lua\nlocal total = 0\nfor i = 1, 5 do\n  total = total + i\nend\nreturn total\n```\n";

/// The value of the local `name` in the top frame of the walk.
fn local(client: &mut DapClient, name: &str) -> String {
    let frame = client.frame_id(1, 0);
    let locals = client.scope(frame, "Locals");
    client.variable(locals, name).0
}

#[test]
fn a_conditional_breakpoint_stops_only_where_its_condition_holds() {
    let (_scratch, program) = prompt_in("dap-condition", "loop.md", LOOP, "");
    let mut client = DapClient::start();
    let setup = Setup {
        breakpoints: vec![json!({ "line": 14, "condition": "i % 2 == 0" })],
        ..Setup::default()
    };
    let answers = client.debug(&program, setup);
    assert_eq!(answers[0]["verified"], true);
    let mut seen = Vec::new();
    for _ in 0..2 {
        assert_eq!(client.stopped()["reason"], "breakpoint");
        seen.push(local(&mut client, "i"));
        client.ok("continue", json!({ "threadId": 1 }));
    }
    assert_eq!(seen, ["2", "4"]);
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "15\n");
    client.finish();
}

#[test]
fn a_hit_count_and_a_logpoint() {
    let (_scratch, program) = prompt_in("dap-hits", "loop.md", LOOP, "");
    let mut client = DapClient::start();
    let setup = Setup {
        breakpoints: vec![
            json!({ "line": 14, "hitCondition": ">= 4" }),
            json!({ "line": 16, "logMessage": "total is {total}, {'as text'} \\{kept\\}" }),
        ],
        ..Setup::default()
    };
    client.debug(&program, setup);
    assert_eq!(client.stopped()["reason"], "breakpoint");
    assert_eq!(local(&mut client, "i"), "4");
    client.ok("continue", json!({ "threadId": 1 }));
    client.stopped();
    assert_eq!(local(&mut client, "i"), "5");
    client.ok("continue", json!({ "threadId": 1 }));
    // The logpoint logs and goes on: no stop before the run ends.
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.event("terminated");
    assert_eq!(client.output("console"), "total is 15, as text {kept}\n");
    assert!(!client.pending.iter().any(|m| m["event"] == "stopped"));
    client.finish();
}

/// An expression that runs forever unless its budget passes through `pcall`.
const RUNAWAY: &str =
    "(function() while true do pcall(function() while true do end end) end end)()";

#[test]
fn a_runaway_condition_or_logpoint_fails_on_its_budget_and_the_run_goes_on() {
    let (_scratch, program) = prompt_in("dap-runaway", "loop.md", LOOP, "");
    let mut client = DapClient::start();
    let setup = Setup {
        breakpoints: vec![
            json!({ "line": 12, "logMessage": format!("before {{{RUNAWAY}}}") }),
            json!({ "line": 16, "condition": RUNAWAY }),
        ],
        ..Setup::default()
    };
    client.debug(&program, setup);
    // A condition that fails stops (as any failing condition does) and says why.
    assert_eq!(client.stopped()["reason"], "breakpoint");
    assert_eq!(local(&mut client, "total"), "15");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "15\n");
    let budget = "the expression ran past its budget of 10000000 instructions";
    assert_eq!(
        client.output("console"),
        format!(
            "before <error: {budget}>\nthe breakpoint condition {RUNAWAY:?} failed: {budget}\n"
        )
    );
    client.finish();
}

#[test]
fn a_request_past_the_breakpoint_limit_is_refused_and_changes_nothing() {
    let (_scratch, program) = prompt_in("dap-too-many", "loop.md", LOOP, "");
    let mut client = DapClient::start();
    client.initialize();
    client.ok("launch", json!({ "program": program }));
    let set = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program }, "breakpoints": [{ "line": 16 }] }),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true);
    let lines: Vec<Value> = (1..=10_001).map(|l| json!({ "line": l })).collect();
    let refused = client.request(
        "setBreakpoints",
        json!({ "source": { "path": program }, "breakpoints": lines }),
    );
    assert_eq!(refused["success"], false);
    assert_eq!(
        refused["message"],
        "10001 breakpoints in one request are more than the 10000 the adapter takes: the breakpoints are unchanged"
    );
    let names: Vec<Value> = (0..10_001)
        .map(|_| json!({ "name": "tools.call" }))
        .collect();
    let refused = client.request("setFunctionBreakpoints", json!({ "breakpoints": names }));
    assert_eq!(refused["success"], false);
    // Ten thousand are taken.
    let lines: Vec<Value> = (1..=10_000).map(|l| json!({ "line": l })).collect();
    let set = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": "/elsewhere.md" }, "breakpoints": lines }),
    );
    assert_eq!(set["breakpoints"].as_array().map(Vec::len), Some(10_000));
    // The breakpoint set before the refusal still stops the run.
    client.ok("configurationDone", Value::Null);
    assert_eq!(client.stopped()["reason"], "breakpoint");
    assert_eq!(local(&mut client, "total"), "15");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}

/// A model loop with a local tool; the scripted model calls it once, then
/// answers. File lines: 11 `## Ask`, 14 `tools.add_local(`, 15 `return 'found ' ..
/// a.word`, 17 `local msgs = ...`, 18 `local answer = models.loop(msgs)`, 19
/// `return answer`.
const LOOPER: &str = "---\nname: looper\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Looper\n\n## Ask\n\n```lua\ntools.add_local('lookup', 'Looks a word up', { word = 'string' }, function(a)\n  return 'found ' .. a.word\nend)\nlocal msgs = messages.new():system('Be brief.'):user('What is ' .. args .. '?')\nlocal answer = models.loop(msgs)\nreturn answer\n```\n";

const SCRIPTED: &str = "default_model = \"scripted\"\n\n[model.scripted]\nprovider = \"script\"\npath = \"turns.yaml\"\n";

fn looper(label: &str) -> (promptforge_tests::Scratch, std::path::PathBuf) {
    let (scratch, program) = prompt_in(label, "looper.md", LOOPER, SCRIPTED);
    scratch.write(
        "turns.yaml",
        "- calls:\n    - lookup: { word: \"rust\" }\n- text: \"Rust is a language.\"\n",
    );
    (scratch, program)
}

/// The records of the Run scope's `conversation` in the top frame: each
/// record's summary.
fn conversation(client: &mut DapClient) -> Vec<String> {
    let frame = client.frame_id(1, 0);
    let run = client.scope(frame, "Run");
    let (_, records) = client.variable(run, "conversation");
    client
        .variables(records)
        .into_iter()
        .map(|(_, value, _)| value)
        .collect()
}

#[test]
fn a_function_breakpoint_on_models_loop_shows_the_conversation_before_the_model_is_asked() {
    let (_scratch, program) = looper("dap-loop");
    let mut client = DapClient::start();
    let setup = Setup {
        functions: vec!["models.loop", "tool:lookup"],
        launch: json!({ "args": "rust" }),
        ..Setup::default()
    };
    client.debug(&program, setup);
    let stop = client.stopped();
    assert_eq!(stop["reason"], "function breakpoint");
    assert_eq!(client.frames(1)[0], ("lua block 1".to_owned(), 18));
    assert_eq!(
        conversation(&mut client),
        ["system: Be brief.", "user: What is rust?"]
    );
    // The model asked nothing yet.
    assert_eq!(client.output("stdout"), "");
    client.ok("continue", json!({ "threadId": 1 }));

    // Before the model's tool call runs: the assistant's record with its call.
    assert_eq!(client.stopped()["reason"], "function breakpoint");
    assert_eq!(
        conversation(&mut client),
        [
            "system: Be brief.",
            "user: What is rust?",
            "assistant: calls lookup"
        ]
    );
    let frame = client.frame_id(1, 0);
    let run = client.scope(frame, "Run");
    let (calls, _) = client.variable(run, "tools.calls");
    assert_eq!(calls, "nil", "the call is not counted before it runs");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(
        client.output_until_terminated("stdout"),
        "Rust is a language.\n"
    );
    client.finish();
}

#[test]
fn a_breakpoint_in_a_local_tool_handler_shows_the_loop_waiting_below_it() {
    let (_scratch, program) = looper("dap-handler");
    let mut client = DapClient::start();
    let setup = Setup {
        breakpoints: vec![json!({ "line": 15 })],
        launch: json!({ "args": "rust" }),
        ..Setup::default()
    };
    client.debug(&program, setup);
    client.stopped();
    let frames = client.frames(1);
    assert_eq!(frames[0].1, 15);
    assert_eq!(
        frames[1..].to_vec(),
        [("lua block 1".to_owned(), 18), ("## Ask".to_owned(), 11)]
    );
    assert_eq!(local(&mut client, "a"), "{word = \"rust\"}");
    // A step out of the handler stops at the loop's caller's next line.
    client.ok("stepOut", json!({ "threadId": 1 }));
    client.stopped();
    assert_eq!(client.frames(1)[0], ("lua block 1".to_owned(), 19));
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}

/// A caught error, then an uncaught one. File lines: 12 `local ok, e = pcall(...)`,
/// 13 `error('caught one')`, 15 `local t = nil`, 16 `return t.x`.
const ERRORS: &str = "---\nname: errors\ndescription: d\npromptforge: 0\n---\n\n# Errors\n\n## Go\n\n```lua\nlocal ok, e = pcall(function()\n  error('caught one')\nend)\nlocal t = nil\nreturn t.x\n```\n";

#[test]
fn the_uncaught_filter_stops_at_the_raising_line_before_the_run_ends() {
    let (_scratch, program) = prompt_in("dap-uncaught", "errors.md", ERRORS, "");
    let mut client = DapClient::start();
    let setup = Setup {
        exceptions: vec!["uncaught"],
        ..Setup::default()
    };
    client.debug(&program, setup);
    let stop = client.stopped();
    assert_eq!(stop["reason"], "exception");
    assert_eq!(stop["text"], "attempt to index a nil value (local 't')");
    assert_eq!(client.frames(1)[0], ("lua block 1".to_owned(), 16));
    let info = client.ok("exceptionInfo", json!({ "threadId": 1 }));
    assert_eq!(
        info,
        json!({ "exceptionId": "lua", "description": "attempt to index a nil value (local 't')", "breakMode": "unhandled" })
    );
    assert_eq!(local(&mut client, "ok"), "false");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 1);
    let stderr = client.output_until_terminated("stderr");
    assert!(
        stderr.ends_with(":16:1: error[Lua]: attempt to index a nil value (local 't')\n"),
        "{stderr}"
    );
    client.finish();
}

#[test]
fn the_raised_filter_stops_at_every_raised_error_caught_or_not() {
    let (_scratch, program) = prompt_in("dap-raised", "errors.md", ERRORS, "");
    let mut client = DapClient::start();
    let setup = Setup {
        exceptions: vec!["raised"],
        ..Setup::default()
    };
    client.debug(&program, setup);
    let stop = client.stopped();
    assert_eq!(stop["text"], "caught one");
    let frames = client.frames(1);
    assert_eq!(frames[0].1, 13);
    assert_eq!(frames[1], ("lua block 1".to_owned(), 12));
    let info = client.ok("exceptionInfo", json!({ "threadId": 1 }));
    assert_eq!(info["breakMode"], "always");
    client.ok("continue", json!({ "threadId": 1 }));
    let stop = client.stopped();
    assert_eq!(stop["text"], "attempt to index a nil value (local 't')");
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 1);
    client.finish();
}

#[test]
fn breakpoints_set_while_paused_and_while_running_are_seen() {
    let (_scratch, program) = prompt_in("dap-change", "loop.md", LOOP, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::lines(&[12]));
    client.stopped();
    // While paused: move the breakpoint into the loop, with a condition.
    let set = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program }, "breakpoints": [{ "line": 14, "condition": "i == 3" }] }),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true);
    client.ok("continue", json!({ "threadId": 1 }));
    client.stopped();
    assert_eq!(local(&mut client, "i"), "3");
    // Cleared: the run goes to its end.
    client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program }, "breakpoints": [] }),
    );
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}

#[test]
fn breakpoints_that_cannot_stop_say_why() {
    let text = format!("{LOOP}\n---\n\n```lua\nlog('never')\n```\n");
    let (scratch, program) = prompt_in("dap-unverified", "loop.md", &text, "");
    let other = scratch.write("other.md", LOOP);
    let mut client = DapClient::start();
    client.initialize();
    // Set before the launch: the program is not known yet.
    let early = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program }, "breakpoints": [{ "line": 15 }] }),
    );
    assert_eq!(early["breakpoints"][0]["verified"], true);
    assert_eq!(
        early["breakpoints"][0]["line"], 16,
        "an `end` of a loop has no code"
    );
    client.ok("launch", json!({ "program": program }));
    let answers = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": program }, "breakpoints": [
            { "line": 9 },
            { "line": 22 },
            { "line": 14, "condition": "i >" },
            { "line": 14, "hitCondition": "often" },
        ] }),
    );
    let reasons: Vec<&str> = answers["breakpoints"]
        .as_array()
        .expect("breakpoints")
        .iter()
        .map(|b| {
            assert_eq!(b["verified"], false, "{b}");
            b["message"].as_str().unwrap_or_default()
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "not inside a lua block that runs",
            "not inside a lua block that runs",
            "the condition does not compile: unexpected symbol near <eof>",
            "the hit condition \"often\" is not a count: write N, >= N, > N, == N or % N",
        ]
    );
    let elsewhere = client.ok(
        "setBreakpoints",
        json!({ "source": { "path": other }, "breakpoints": [{ "line": 14 }] }),
    );
    assert_eq!(
        elsewhere["breakpoints"][0]["message"],
        "breakpoints stop only in the launched prompt"
    );
    let functions = client.ok(
        "setFunctionBreakpoints",
        json!({ "breakpoints": [{ "name": "print" }, { "name": "tools.call" }] }),
    );
    assert_eq!(functions["breakpoints"][0]["verified"], false);
    assert_eq!(functions["breakpoints"][1]["verified"], true);
    client.ok("configurationDone", Value::Null);
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}

/// Every suspending call in turn. File lines: 15 `local c = call(...)`, 16
/// `local f = fanout(...)`, 17 `local t = tools.call('echo', ...)`, 18
/// `local m = models.infer('hi')`, 19 `local ok = pcall(input.ask, 'name?')`,
/// 20 `jump('## Last')`.
const SUSPENDING: &str = "---\nname: calls\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Calls\n\n## First\n\n```lua\ntools.add_local('echo', 'Echoes', { text = 'string' }, function(a) return a.text end)\nlocal c = call('### Child', 'x')\nlocal f = fanout('### Child', {'a'})\nlocal t = tools.call('echo', { text = 'y' })\nlocal m = models.infer('hi')\nlocal ok = pcall(input.ask, 'name?')\njump('## Last')\n```\n\n### Child\n\n---\n\n```lua\nreturn args\n```\n\n## Middle\n\n```lua\nlog('skipped')\n```\n\n## Last\n\n```lua\nreturn 'done'\n```\n";

#[test]
fn every_suspending_call_can_be_a_function_breakpoint() {
    let (scratch, program) = prompt_in("dap-functions", "calls.md", SUSPENDING, SCRIPTED);
    scratch.write("turns.yaml", "- text: \"hello\"\n");
    let mut client = DapClient::start();
    let setup = Setup {
        functions: vec![
            "call",
            "fanout",
            "tools.call",
            "models.infer",
            "input.ask",
            "jump",
        ],
        ..Setup::default()
    };
    client.debug(&program, setup);
    let mut lines = Vec::new();
    for _ in 0..6 {
        assert_eq!(client.stopped()["reason"], "function breakpoint");
        lines.push(client.frames(1)[0].1);
        client.ok("continue", json!({ "threadId": 1 }));
    }
    assert_eq!(lines, [15, 16, 17, 18, 19, 20]);
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "done\n");
    client.finish();
}

/// A chain that fails, called with and without `pcall`. File lines: 12
/// `local ok = pcall(call, '### Fails')`, 13 `call('### Fails')`, 21
/// `error('boom')`.
const CHAIN_ERRORS: &str = "---\nname: chains\ndescription: d\npromptforge: 0\n---\n\n# Chains\n\n## Go\n\n```lua\nlocal ok = pcall(call, '### Fails')\ncall('### Fails')\n```\n\n### Fails\n\n---\n\n```lua\nerror('boom')\n```\n";

#[test]
fn a_chains_error_is_uncaught_only_when_its_caller_does_not_catch_it() {
    let (_scratch, program) = prompt_in("dap-chain-errors", "chains.md", CHAIN_ERRORS, "");
    let mut client = DapClient::start();
    let setup = Setup {
        exceptions: vec!["uncaught"],
        ..Setup::default()
    };
    client.debug(&program, setup);
    // The first call's error is caught by the caller's pcall: no stop there.
    let stop = client.stopped();
    assert_eq!(stop["text"], "boom");
    let thread = stop["threadId"].as_i64().expect("a thread");
    assert_ne!(thread, 1, "the error stops in the chain that raised it");
    let frames = client.frames(thread);
    assert_eq!(frames[0], ("lua block 2".to_owned(), 21));
    assert_eq!(frames[2], ("lua block 1".to_owned(), 13), "{frames:?}");
    client.ok("continue", json!({ "threadId": thread }));
    // Raised again in the caller at the call line, it does not stop twice.
    assert_eq!(client.event("exited")["body"]["exitCode"], 1);
    client.event("terminated");
    assert!(!client.pending.iter().any(|m| m["event"] == "stopped"));
    client.finish();
}
