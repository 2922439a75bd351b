//! Running prompts from the editor (`editor.md` §2) over stdio on the real binary:
//! `workspace/executeCommand`, the `promptforge/runEvent` stream in order, runs of
//! unsaved text and several at once, cancellation (a Lua loop, a model request,
//! an MCP tool call, `shutdown`), no MCP server left after `exit`,
//! `promptforge/ask` and work-done progress. The failures shown in place,
//! test-file runs and code lenses are `lsp_run_tests.rs`.

mod lsp_run_support;

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use lsp_run_support::*;
use promptforge_tests::lsp_client::file_uri;
use promptforge_tests::workspace_root;
use serde_json::{json, Value};

#[test]
fn a_run_streams_its_events_in_order_and_finishes_with_the_result() {
    let scratch = workspace("lsp-run-stream", CONFIG);
    let lua = "log('asking')\ntools.add_local('grab', 'Grab', {}, function() return 'x' end)\ntools.call('grab')\nlocal m = messages.new():user('hi ' .. args)\nmodels.loop(m)\nreturn m[#m].content";
    let text = prompt("models:\n  w: {}\n", lua);
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let started = Instant::now();
    let run_id = start_run(
        &mut client,
        "promptforge.run",
        json!({ "uri": uri, "args": "world", "seed": 3 }),
    );
    assert_eq!(run_id, "run-1");
    let all = events(&mut client, &run_id);
    println!("promptforge.run -> finished: {:?}", started.elapsed());
    let kinds = types(&all);
    let at = |kind: &str| {
        kinds
            .iter()
            .position(|k| *k == kind)
            .unwrap_or_else(|| panic!("no {kind} in {all:?}"))
    };
    assert!(at("section") < at("toolCall"), "{all:?}");
    assert!(at("toolCall") < at("toolResult"), "{all:?}");
    assert!(at("toolResult") < at("modelRound"), "{all:?}");
    assert_eq!(kinds.last(), Some(&"finished"), "{all:?}");
    let section = all
        .iter()
        .find(|e| e["type"] == "section" && e["heading"] == "Go");
    assert!(section.is_some(), "{all:?}");
    let log = all
        .iter()
        .find(|e| e["type"] == "log" && e["text"] == "asking");
    assert!(log.is_some(), "{all:?}");
    let call = &all[at("toolCall")];
    assert_eq!(call["alias"], "grab");
    assert!(call.get("path").is_none(), "{call}");
    let result = &all[at("toolResult")];
    assert_eq!(result["callId"], call["callId"]);
    assert_eq!(result["ok"], true);
    assert!(result["durationMs"].is_u64(), "{result}");
    assert_eq!(all[at("modelRound")]["label"], "w");
    assert_eq!(all[at("modelRound")]["round"], 1);
    let finished = all.last().cloned().unwrap_or_default();
    assert_eq!(finished["result"], "hi world");
    assert!(finished["durationMs"].is_u64(), "{finished}");
}

#[test]
fn a_run_uses_the_unsaved_text_and_a_broken_one_fails_at_once() {
    let scratch = workspace("lsp-run-unsaved", CONFIG);
    scratch.write("p.md", prompt("", "return 'from the disk'"));
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    let unsaved = prompt("", "return 'from the editor'");
    client.open(&uri, 1, &unsaved);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let all = events(&mut client, &run_id);
    assert_eq!(
        all.last().map(|e| e["result"].clone()),
        Some(json!("from the editor")),
        "{all:?}"
    );

    // An edit that breaks the document: the run fails with its first problem.
    let broken = "---\nname: Bad Name\ndescription: d\npromptforge: 0\n---\n\n# T\n";
    client.change(&uri, 2, json!([{ "text": broken }]));
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let all = events(&mut client, &run_id);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["type"], "failed");
    assert_eq!(all[0]["kind"], "Frontmatter");
    assert_eq!(
        all[0]["message"],
        "invalid prompt name `Bad Name`: expected [a-z0-9][a-z0-9_-]{0,63}"
    );
    assert_eq!(
        all[0]["range"]["start"],
        json!({ "line": 1, "character": 6 })
    );

    // A document that is not open runs as its file holds it.
    scratch.write("q.md", prompt("", "return 'saved'"));
    let saved = file_uri(&scratch, "q.md");
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": saved }));
    let all = events(&mut client, &run_id);
    assert_eq!(
        all.last().map(|e| e["result"].clone()),
        Some(json!("saved")),
        "{all:?}"
    );
    let missing = execute(
        &mut client,
        "promptforge.run",
        json!({ "uri": file_uri(&scratch, "none.md") }),
    );
    assert_eq!(
        missing.err().map(|e| e["code"].clone()),
        Some(json!(-32602))
    );
}

#[test]
fn two_runs_go_at_once_and_a_cancel_ends_a_lua_loop_that_never_suspends() {
    let scratch = workspace("lsp-run-two", CONFIG);
    let spin = prompt("", "log('spinning')\nwhile true do end");
    let quick = prompt("", "return 'quick'");
    scratch.write("spin.md", &spin);
    scratch.write("quick.md", &quick);
    let (spin_uri, quick_uri) = (
        file_uri(&scratch, "spin.md"),
        file_uri(&scratch, "quick.md"),
    );
    let mut client = start(&scratch, json!({}));
    client.open(&spin_uri, 1, &spin);
    client.open(&quick_uri, 1, &quick);
    let spinning = start_run(&mut client, "promptforge.run", json!({ "uri": spin_uri }));
    events_until(&mut client, &spinning, |e| e["text"] == "spinning");
    let quick_id = start_run(&mut client, "promptforge.run", json!({ "uri": quick_uri }));
    assert_ne!(spinning, quick_id);
    let all = events(&mut client, &quick_id);
    assert_eq!(
        all.last().map(|e| e["result"].clone()),
        Some(json!("quick")),
        "{all:?}"
    );

    let asked = Instant::now();
    assert_eq!(
        execute(
            &mut client,
            "promptforge.cancel",
            json!({ "runId": spinning })
        ),
        Ok(Value::Null)
    );
    let rest = events(&mut client, &spinning);
    let took = asked.elapsed();
    println!("cancel of `while true do end` -> failed event: {took:?}");
    let last = rest.last().cloned().unwrap_or_default();
    assert_eq!(last["type"], "failed", "{rest:?}");
    assert_eq!(last["kind"], "Cancelled", "{rest:?}");
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");
    // A cancelled run leaves no diagnostic; a late cancel is not an error.
    assert_eq!(
        execute(
            &mut client,
            "promptforge.cancel",
            json!({ "runId": spinning })
        ),
        Ok(Value::Null)
    );
}

/// The editor's Stop ends a walk of sections that never suspend nor reach the
/// instruction budget (a section that jumps to itself).
#[test]
fn a_cancel_ends_a_jump_loop() {
    let scratch = workspace("lsp-run-jump-loop", CONFIG);
    let text = format!(
        "{}\n## Self\n\n```lua\njump('## Self')\n```\n",
        prompt("", "log('looping')")
    );
    scratch.write("loop.md", &text);
    let uri = file_uri(&scratch, "loop.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let looping = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    events_until(&mut client, &looping, |e| e["text"] == "looping");
    let asked = Instant::now();
    assert_eq!(
        execute(
            &mut client,
            "promptforge.cancel",
            json!({ "runId": looping })
        ),
        Ok(Value::Null)
    );
    let rest = events(&mut client, &looping);
    let took = asked.elapsed();
    println!("cancel of a jump loop -> failed event: {took:?}");
    let last = rest.last().cloned().unwrap_or_default();
    assert_eq!(
        (&last["type"], &last["kind"], &last["message"]),
        (
            &json!("failed"),
            &json!("Cancelled"),
            &json!("the run was cancelled")
        ),
        "{last}"
    );
    assert!(
        took < Duration::from_millis(200),
        "the cancel took {took:?}"
    );
}

/// A listener that accepts connections and never answers them.
fn silent_server() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            let mut first = [0u8; 1];
            let mut reader = &stream;
            let _ = reader.read(&mut first);
            held.push(stream);
            if held.len() > 4 {
                break;
            }
        }
    });
    (port, handle)
}

#[test]
fn a_cancel_ends_a_model_request_that_never_answers() {
    let (port, _server) = silent_server();
    let config = format!(
        "default_model = \"slow\"\n\n[model.slow]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\ntimeout_s = 60\nretries = 0\n\n{CONFIG}"
    );
    let scratch = workspace("lsp-run-model", &config);
    let text = prompt(
        "models:\n  w: {}\n",
        "models.loop(messages.new():user('hi'))\nreturn 'never'",
    );
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    events_until(&mut client, &run_id, |e| e["type"] == "modelRound");
    std::thread::sleep(Duration::from_millis(100));
    let asked = Instant::now();
    assert_eq!(
        execute(
            &mut client,
            "promptforge.cancel",
            json!({ "runId": run_id })
        ),
        Ok(Value::Null)
    );
    let rest = events(&mut client, &run_id);
    let took = asked.elapsed();
    println!("cancel of a model request in flight -> failed event: {took:?}");
    assert_eq!(
        rest.last().map(|e| e["kind"].clone()),
        Some(json!("Cancelled")),
        "{rest:?}"
    );
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");
}

/// The processes whose parent is `pid` and whose command line holds `needle`.
fn children_of(pid: u32, needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let dir = entry.path();
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            // `pid (comm) state ppid ...`: the fields after the last `)`.
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let parent = after
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok());
            let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
            let matches = parent == Some(pid) && String::from_utf8_lossy(&cmdline).contains(needle);
            matches
                .then(|| entry.file_name().to_str()?.parse().ok())
                .flatten()
        })
        .collect()
}

fn children_running(pid: u32, needle: &str) -> usize {
    children_of(pid, needle).len()
}

/// True while the process `pid` lives (a zombie does not count).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        after.split_whitespace().next() != Some("Z")
    })
}

fn node_missing() -> bool {
    let missing = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err();
    if missing {
        eprintln!("skipped: node is not installed (the stub MCP server needs it)");
    }
    missing
}

/// A workspace whose prompt `p.md` calls the stub MCP server's `slow` tool, which
/// never answers. A `stubborn` server outlives the end of its input (a timer keeps
/// it alive), as a server may: only a kill ends it.
fn slow_mcp_workspace(label: &str, stubborn: bool) -> (promptforge_tests::Scratch, String, String) {
    let stub = workspace_root().join("server/mcp/tests/fixtures/mcp_stub.js");
    let scratch = workspace(label, "");
    let server = if stubborn {
        let wrapper = format!(
            "require({:?});\nsetInterval(() => {{}}, 1 << 30);\n",
            stub.display().to_string()
        );
        scratch.write("mcp_stub_stubborn.js", &wrapper);
        scratch.path().join("mcp_stub_stubborn.js")
    } else {
        stub
    };
    let config = format!(
        "{CONFIG}[plugin.\"acme/stub\"]\ncommand = \"node\"\nargs = [{:?}]\n",
        server.display().to_string()
    );
    scratch.write("promptforge.toml", &config);
    let text = prompt(
        "plugins: [acme/stub]\ntools:\n  slow: acme/stub/slow\n",
        "log('calling')\ntools.call('slow', { text = 'x' })\nreturn 'never'",
    );
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    (scratch, text, uri)
}

#[test]
fn a_cancel_ends_an_mcp_tool_call_in_flight_and_its_server() {
    if node_missing() {
        return;
    }
    let (scratch, text, uri) = slow_mcp_workspace("lsp-run-mcp", false);
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let before = events_until(&mut client, &run_id, |e| e["type"] == "toolCall");
    assert_eq!(
        before.last().map(|e| e["path"].clone()),
        Some(json!("acme/stub/slow"))
    );
    std::thread::sleep(Duration::from_millis(100));
    let asked = Instant::now();
    assert_eq!(
        execute(
            &mut client,
            "promptforge.cancel",
            json!({ "runId": run_id })
        ),
        Ok(Value::Null)
    );
    let rest = events(&mut client, &run_id);
    let took = asked.elapsed();
    println!("cancel of an MCP tool call in flight -> failed event: {took:?}");
    let ended: Vec<&Value> = rest.iter().filter(|e| e["type"] != "log").collect();
    assert_eq!(ended.len(), 2, "{rest:?}");
    assert_eq!(
        (&ended[0]["type"], &ended[0]["ok"]),
        (&json!("toolResult"), &json!(false))
    );
    assert_eq!(ended[1]["kind"], "Cancelled");
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while children_running(client.pid(), "mcp_stub.js") > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        children_running(client.pid(), "mcp_stub.js"),
        0,
        "the MCP server is left behind"
    );
}

#[test]
fn input_ask_is_answered_through_promptforge_ask() {
    let scratch = workspace("lsp-run-ask", CONFIG);
    let text = prompt("", "return 'answer: ' .. input.ask('Your name?')");
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    client.answer = Box::new(|request| {
        if request["method"] == "promptforge/ask" && request["params"]["question"] == "Your name?" {
            Ok(json!({ "answer": "Ada" }))
        } else {
            Ok(Value::Null)
        }
    });
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let all = events(&mut client, &run_id);
    assert_eq!(
        all.last().map(|e| e["result"].clone()),
        Some(json!("answer: Ada")),
        "{all:?}"
    );
    let asked: Vec<&Value> = client
        .server_requests
        .iter()
        .filter(|r| r["method"] == "promptforge/ask")
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0]["params"],
        json!({ "runId": run_id, "question": "Your name?" })
    );

    // null, and an error answer, are input_unavailable.
    for answer in [
        Ok(Value::Null),
        Err(json!({ "code": -32800, "message": "cancelled" })),
    ] {
        client.answer = Box::new(move |_| answer.clone());
        let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
        let all = events(&mut client, &run_id);
        assert_eq!(
            all.last().map(|e| e["kind"].clone()),
            Some(json!("Input")),
            "{all:?}"
        );
    }
}

#[test]
fn work_done_progress_reports_the_run_and_its_cancel_cancels_it() {
    let scratch = workspace("lsp-run-progress", CONFIG);
    let text = prompt("", "log('spinning')\nwhile true do end");
    scratch.write("spin.md", &text);
    let uri = file_uri(&scratch, "spin.md");
    let mut client = start(&scratch, json!({ "window": { "workDoneProgress": true } }));
    client.open(&uri, 1, &text);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let begin = client.wait_notification(|m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == run_id
            && m["params"]["value"]["kind"] == "begin"
    });
    assert_eq!(begin["params"]["value"]["title"], "Running p");
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    let created = client
        .server_requests
        .iter()
        .any(|r| r["method"] == "window/workDoneProgress/create" && r["params"]["token"] == run_id);
    assert!(created, "{:?}", client.server_requests);
    // The section shows in the begin (when it came first) or in a report.
    if begin["params"]["value"]["message"] != "section: Go" {
        let report = client.wait_notification(|m| {
            m["method"] == "$/progress"
                && m["params"]["token"] == run_id
                && m["params"]["value"]["message"] == "section: Go"
        });
        assert_eq!(report["params"]["value"]["kind"], "report");
    }
    events_until(&mut client, &run_id, |e| e["text"] == "spinning");
    let asked = Instant::now();
    client.notify("window/workDoneProgress/cancel", json!({ "token": run_id }));
    let rest = events(&mut client, &run_id);
    println!("progress cancel -> failed event: {:?}", asked.elapsed());
    assert_eq!(
        rest.last().map(|e| e["kind"].clone()),
        Some(json!("Cancelled")),
        "{rest:?}"
    );
    let end = client.wait_notification(|m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == run_id
            && m["params"]["value"]["kind"] == "end"
    });
    assert!(
        end["params"]["value"]["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("Cancelled"),
        "{end}"
    );
}

#[test]
fn shutdown_cancels_the_runs() {
    let scratch = workspace("lsp-run-shutdown", CONFIG);
    let text = prompt("", "log('spinning')\nwhile true do end");
    scratch.write("spin.md", &text);
    let uri = file_uri(&scratch, "spin.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    events_until(&mut client, &run_id, |e| e["text"] == "spinning");
    assert_eq!(client.request("shutdown", Value::Null), Ok(Value::Null));
    let rest = events(&mut client, &run_id);
    assert_eq!(
        rest.last().map(|e| e["kind"].clone()),
        Some(json!("Cancelled")),
        "{rest:?}"
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// `exit` without `shutdown` (a client that quits abruptly) still cancels every
/// run before the process ends: no MCP server a run started is left behind, even
/// one that would outlive the end of its input.
#[test]
fn exit_without_shutdown_cancels_the_runs_and_leaves_no_process() {
    if node_missing() {
        return;
    }
    let (scratch, text, uri) = slow_mcp_workspace("lsp-run-exit", true);
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    events_until(&mut client, &run_id, |e| e["type"] == "toolCall");
    let servers = children_of(client.pid(), "mcp_stub");
    assert!(!servers.is_empty(), "the run started its MCP server");
    assert_eq!(client.exit_without_shutdown(), Some(1));
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = servers.into_iter().filter(|&pid| alive(pid)).collect();
    assert!(left.is_empty(), "MCP servers left behind: {left:?}");
}

/// `exit` while the catalog still starts a declared Plugin's MCP server (one that
/// never answers and does not end with its input): that server is not left behind
/// either.
#[test]
fn exit_while_the_catalog_starts_a_server_leaves_no_process() {
    let config = format!("{CONFIG}[plugin.\"acme/mute\"]\ncommand = \"sleep\"\nargs = [\"600\"]\n");
    let scratch = workspace("lsp-exit-catalog", &config);
    let text = prompt("plugins: [acme/mute]\n", "return 'x'");
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut servers = Vec::new();
    while servers.is_empty() && Instant::now() < deadline {
        servers = children_of(client.pid(), "sleep");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!servers.is_empty(), "the catalog started the server");
    assert_eq!(client.exit_without_shutdown(), Some(1));
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = servers.into_iter().filter(|&pid| alive(pid)).collect();
    assert!(left.is_empty(), "MCP servers left behind: {left:?}");
}

/// A client that answers `window/workDoneProgress/create` only after the run has
/// finished, and `promptforge/ask` only after its run was cancelled: the server
/// takes both late answers and stays up (tower-lsp 0.20 dies of an answer to a
/// request whose future was dropped; the server never drops one).
#[test]
fn late_answers_to_the_servers_requests_are_taken_and_the_server_stays() {
    let scratch = workspace("lsp-run-late", CONFIG);
    let quick = prompt("", "return 'done'");
    let asking = prompt("", "return input.ask('Your name?')");
    scratch.write("quick.md", &quick);
    scratch.write("ask.md", &asking);
    let (quick_uri, ask_uri) = (file_uri(&scratch, "quick.md"), file_uri(&scratch, "ask.md"));
    let mut client = start(&scratch, json!({ "window": { "workDoneProgress": true } }));
    client.hold = Box::new(|request| {
        request["method"] == "window/workDoneProgress/create"
            || request["method"] == "promptforge/ask"
    });
    client.open(&quick_uri, 1, &quick);
    client.open(&ask_uri, 1, &asking);

    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": quick_uri }));
    let all = events(&mut client, &run_id);
    assert_eq!(all.last().map(|e| e["result"].clone()), Some(json!("done")));
    // The progress-create request may come after the run's last event.
    client.pump_until(|c| !c.held.is_empty());
    assert_eq!(client.held.len(), 1, "{:?}", client.held);
    client.answer_held();

    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": ask_uri }));
    client.pump_until(|c| c.held.iter().any(|r| r["method"] == "promptforge/ask"));
    assert_eq!(
        execute(
            &mut client,
            "promptforge.cancel",
            json!({ "runId": run_id })
        ),
        Ok(Value::Null)
    );
    let rest = events(&mut client, &run_id);
    assert_eq!(
        rest.last().map(|e| e["kind"].clone()),
        Some(json!("Cancelled"))
    );
    client.answer = Box::new(|_| Ok(json!({ "answer": "too late" })));
    client.answer_held();

    // Still serving: another run, then a clean shutdown.
    client.hold = Box::new(|_| false);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": quick_uri }));
    let all = events(&mut client, &run_id);
    assert_eq!(all.last().map(|e| e["result"].clone()), Some(json!("done")));
    assert_eq!(client.shutdown(), Some(0));
}
