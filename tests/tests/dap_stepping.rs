//! Stepping and threads in `promptforge dap` over stdio on the real binary (the
//! debugger issue), written from the DAP specification: `next` over a line and
//! over a `call`, `stepIn` into a `call` target's chain and into a shared
//! function, `stepOut` back to the caller (across chains too); a fanout of three
//! arms shows three threads; `pause` stops a loop that never suspends; stop on
//! entry; `terminate` ends a paused run within 100 ms.

use std::time::{Duration, Instant};

use promptforge_tests::dap_client::{prompt_in, DapClient, Setup};
use serde_json::{json, Value};

/// `## Go` calls its off-walk child `### Helper` and a shared function.
/// File lines: 10 `function double(n)`, 11 `return n * 2`, 15 `## Go`,
/// 18 `var.count = 1`, 19 `local r = call(...)`, 20 `local d = double(2)`,
/// 21 `store.write(...)`, 22 `return r .. d`, 25 `### Helper`, 30 `local up`,
/// 31 `return up`.
const CALLS: &str = "---\nname: calls\ndescription: d\npromptforge: 0\n---\n\n# Calls\n\n```lua shared\nfunction double(n)\n  return n * 2\nend\n```\n\n## Go\n\n```lua\nvar.count = 1\nlocal r = call('### Helper', 'x')\nlocal d = double(2)\nstore.write('notes/a.md', 'hello\\nworld\\n')\nreturn r .. d\n```\n\n### Helper\n\n---\n\n```lua\nlocal up = args .. '!'\nreturn up\n```\n";

fn names(frames: &[(String, u64)]) -> Vec<(&str, u64)> {
    frames.iter().map(|(n, l)| (n.as_str(), *l)).collect()
}

/// Resumes `thread` with `command` and waits for the next stop: its body.
fn step(client: &mut DapClient, command: &str, thread: i64) -> Value {
    client.ok(command, json!({ "threadId": thread }));
    client.stopped()
}

#[test]
fn next_steps_over_lines_and_over_a_call_in_the_same_chain() {
    let (_scratch, program) = prompt_in("dap-next", "calls.md", CALLS, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::lines(&[18]));
    let stop = client.stopped();
    assert_eq!(
        (stop["reason"].as_str(), stop["threadId"].as_i64()),
        (Some("breakpoint"), Some(1))
    );
    let stop = step(&mut client, "next", 1);
    assert_eq!(stop["reason"], "step");
    assert_eq!(names(&client.frames(1))[0], ("lua block 2", 19));
    // The call's chain runs to its end without stopping.
    let stop = step(&mut client, "next", 1);
    assert_eq!(stop["threadId"], 1);
    assert_eq!(names(&client.frames(1))[0], ("lua block 2", 20));
    step(&mut client, "next", 1);
    assert_eq!(names(&client.frames(1))[0], ("lua block 2", 21));
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "x!4\n");
    client.finish();
}

#[test]
fn step_in_enters_a_call_targets_chain_and_a_shared_function_and_step_out_returns() {
    let (_scratch, program) = prompt_in("dap-step-in", "calls.md", CALLS, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::lines(&[19]));
    client.stopped();

    // Into the call: the chain is a thread of its own, its stack goes on below
    // with the caller's frames.
    let stop = step(&mut client, "stepIn", 1);
    let helper = stop["threadId"].as_i64().expect("a thread");
    assert_ne!(helper, 1);
    assert_eq!(stop["reason"], "step");
    assert_eq!(
        names(&client.frames(helper)),
        [
            ("lua block 3", 30),
            ("### Helper", 25),
            ("lua block 2", 19),
            ("## Go", 15)
        ]
    );
    let threads = client.ok("threads", Value::Null);
    assert_eq!(
        threads["threads"],
        json!([{ "id": 1, "name": "walk: ## Go" }, { "id": helper, "name": "call: ### Helper" }])
    );
    step(&mut client, "next", helper);
    assert_eq!(names(&client.frames(helper))[0], ("lua block 3", 31));

    // Out of the chain: the caller stops at its next line.
    let stop = step(&mut client, "stepOut", helper);
    assert_eq!(stop["threadId"], 1);
    assert_eq!(names(&client.frames(1))[0], ("lua block 2", 20));

    // Into the shared function, then out to the caller's next line.
    step(&mut client, "stepIn", 1);
    assert_eq!(
        names(&client.frames(1)),
        [("double", 11), ("lua block 2", 20), ("## Go", 15)]
    );
    step(&mut client, "stepOut", 1);
    assert_eq!(names(&client.frames(1))[0], ("lua block 2", 21));
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}

/// `## Go` fans out to `### Arm` three times; file line 22 is `return up` of the arm.
const FANOUT: &str = "---\nname: fan\ndescription: d\npromptforge: 0\n---\n\n# Fan\n\n## Go\n\n```lua\nlocal r = fanout('### Arm', {'a', 'b', 'c'})\nreturn table.concat(r, ',')\n```\n\n### Arm\n\n---\n\n```lua\nlocal up = item .. sys.index\nreturn up\n```\n";

#[test]
fn a_fanout_of_three_arms_shows_three_threads_each_stopped_in_its_arm() {
    let (_scratch, program) = prompt_in("dap-fanout", "fan.md", FANOUT, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::lines(&[22]));
    let mut stopped: Vec<i64> = (0..3)
        .map(|_| client.stopped()["threadId"].as_i64().expect("a thread"))
        .collect();
    stopped.sort_unstable();
    let threads = client.ok("threads", Value::Null);
    let mut arms: Vec<(i64, String)> = threads["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["id"] != 1)
        .map(|t| {
            (
                t["id"].as_i64().unwrap_or(0),
                t["name"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    arms.sort();
    assert_eq!(arms.iter().map(|(id, _)| *id).collect::<Vec<_>>(), stopped);
    let mut names_of_arms: Vec<&str> = arms.iter().map(|(_, n)| n.as_str()).collect();
    names_of_arms.sort_unstable();
    assert_eq!(
        names_of_arms,
        [
            "fanout arm 1: ### Arm",
            "fanout arm 2: ### Arm",
            "fanout arm 3: ### Arm"
        ]
    );
    let mut values = Vec::new();
    for thread in &stopped {
        assert_eq!(
            names(&client.frames(*thread)),
            [
                ("lua block 2", 22),
                ("### Arm", 16),
                ("lua block 1", 12),
                ("## Go", 9)
            ]
        );
        let frame = client.frame_id(*thread, 0);
        let locals = client.scope(frame, "Locals");
        values.push(client.variable(locals, "up").0);
    }
    values.sort();
    assert_eq!(values, ["\"a1\"", "\"b2\"", "\"c3\""]);
    for thread in stopped {
        client.ok("continue", json!({ "threadId": thread }));
    }
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "a1,b2,c3\n");
    client.finish();
}

const SPIN: &str = "---\nname: spin\ndescription: d\npromptforge: 0\n---\n\n# Spin\n\n## Loop\n\n```lua\nlocal n = 0\nlog('spinning')\nwhile true do n = n + 1 end\n```\n";

#[test]
fn pause_stops_a_loop_that_never_suspends_and_terminate_ends_it_within_100_ms() {
    let (_scratch, program) = prompt_in("dap-pause", "spin.md", SPIN, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::default());
    client.take(|m| m["event"] == "output" && m["body"]["output"] == "spinning\n");
    client.ok("pause", json!({ "threadId": 1 }));
    let stop = client.stopped();
    assert_eq!(stop["reason"], "pause");
    assert_eq!(
        names(&client.frames(1)),
        [("lua block 1", 14), ("## Loop", 9)]
    );
    let frame = client.frame_id(1, 0);
    let locals = client.scope(frame, "Locals");
    let (n, _) = client.variable(locals, "n");
    assert!(n.parse::<u64>().is_ok_and(|n| n > 0), "{n}");
    // Paused, then running again, then terminated.
    client.ok("continue", json!({ "threadId": 1 }));
    std::thread::sleep(Duration::from_millis(50));
    let asked = Instant::now();
    client.ok("terminate", Value::Null);
    let took = asked.elapsed();
    println!("dap terminate of a running loop -> response: {took:?}");
    assert!(took < Duration::from_millis(100), "terminate took {took:?}");
    assert_eq!(client.event("exited")["body"]["exitCode"], 130);
    client.finish();
}

#[test]
fn stop_on_entry_stops_at_the_first_line_the_run_reaches() {
    let (_scratch, program) = prompt_in("dap-entry", "calls.md", CALLS, "");
    let mut client = DapClient::start();
    let setup = Setup {
        launch: json!({ "stopOnEntry": true }),
        ..Setup::default()
    };
    client.debug(&program, setup);
    let stop = client.stopped();
    assert_eq!(stop["reason"], "entry");
    // The shared library replays first, in the H1 pass.
    assert_eq!(
        names(&client.frames(1)),
        [("lua block 1", 12), ("# Calls", 7)]
    );
    client.ok("continue", json!({ "threadId": 1 }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}

/// A model starts a task on `## Worker` and waits for it. File lines: 11
/// `## Main`, 14 `tools.allow_tasks(...)`, 15 `return models.loop(...)`, 18
/// `## Worker`, 24 `return got`.
const TASKS: &str = "---\nname: tasks\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Tasks\n\n## Main\n\n```lua\ntools.allow_tasks({'## Worker'})\nreturn models.loop(messages.new():user('go'))\n```\n\n## Worker\n\n---\n\n```lua\nlocal got = args .. '?'\nreturn got\n```\n";

#[test]
fn a_task_is_a_thread_named_for_its_id_and_section() {
    let config = "default_model = \"scripted\"\n\n[model.scripted]\nprovider = \"script\"\npath = \"turns.yaml\"\n";
    let (scratch, program) = prompt_in("dap-task", "tasks.md", TASKS, config);
    scratch.write(
        "turns.yaml",
        "- calls:\n    - task: { target: \"## Worker\", input: \"x\" }\n- calls:\n    - await_tasks: { ids: [] }\n- text: \"all done\"\n",
    );
    let mut client = DapClient::start();
    client.debug(&program, Setup::lines(&[24]));
    let stop = client.stopped();
    let task = stop["threadId"].as_i64().expect("a thread");
    let threads = client.ok("threads", Value::Null);
    let named: Vec<&str> = threads["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["id"] == task)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(named, ["task t1: ## Worker"]);
    // `return models.loop(...)` is a tail call: the block's own frame is gone
    // from Lua's stack, so the caller shows as its section's entry only.
    assert_eq!(
        names(&client.frames(task)),
        [("lua block 2", 24), ("## Worker", 18), ("## Main", 11)]
    );
    client.ok("continue", json!({ "threadId": task }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "all done\n");
    client.finish();
}

#[test]
fn step_in_on_a_fanout_line_stops_in_the_first_arm_to_run_only() {
    let (_scratch, program) = prompt_in("dap-fanout-step", "fan.md", FANOUT, "");
    let mut client = DapClient::start();
    client.debug(&program, Setup::lines(&[12]));
    client.stopped();
    let stop = step(&mut client, "stepIn", 1);
    assert_eq!(stop["reason"], "step");
    let arm = stop["threadId"].as_i64().expect("a thread");
    assert_ne!(arm, 1);
    assert_eq!(
        names(&client.frames(arm))[..2],
        [("lua block 2", 21), ("### Arm", 16)]
    );
    // The step ended for every arm: the others run to their end.
    client.ok("continue", json!({ "threadId": arm }));
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    assert_eq!(client.output_until_terminated("stdout"), "a1,b2,c3\n");
    let stops = client
        .pending
        .iter()
        .filter(|m| m["event"] == "stopped")
        .count();
    assert_eq!(stops, 0, "no other arm stopped");
    client.finish();
}
