//! A bench client over stdio (ignored by default: run it with `cargo test --release
//! -p promptforge-tests --test lsp_bench -- --ignored --nocapture`; it builds and
//! measures the release server binary, or the one `PROMPTFORGE_LSP_BIN` names).
//!
//! On a 4,000-line prompt with 400 Lua blocks it measures cold start to first
//! diagnostics, one keystroke (`didChange`) to `publishDiagnostics`, hover and
//! completion, and the resident memory with 100 such documents open, and prints
//! the figures; `bench_runs` measures running from the editor (`editor.md` §2).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use promptforge_tests::lsp_client::{range, uri, LspClient};
use promptforge_tests::release_binary;
use serde_json::json;

/// A prompt of 4,000 lines with 400 Lua blocks.
fn big_prompt() -> String {
    let mut text = String::from("---\nname: big\ndescription: A big prompt\npromptforge: 0\nplugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n---\n\n# Big\n\n");
    let mut lines = 13;
    let mut i = 0;
    while lines < 3990 {
        text.push_str(&format!("## Section {i}\n\nProse of section {i}.\n\n```lua\nlocal page = tools.call('fetch', {{ url = args }})\nmodels.use('writer')\nif page == '' then jump('## Section {i}') end\n```\n\n"));
        lines += 10;
        i += 1;
    }
    text
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at]
}

fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
#[ignore = "a benchmark: run it on a release build (see the module documentation)"]
fn bench() {
    let program =
        std::env::var_os("PROMPTFORGE_LSP_BIN").map_or_else(release_binary, PathBuf::from);
    let text = big_prompt();
    assert_eq!(text.lines().count() / 100, 39, "about 4,000 lines");
    let started = Instant::now();
    let mut client = LspClient::start_binary(&program, &[]);
    client.initialize(json!({}));
    let doc = uri("big.md");
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let cold = started.elapsed();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");

    // Keystrokes in the middle of a Lua block: type and delete one character.
    let line = 13 + 10 * 200 + 6;
    let mut keystrokes = Vec::new();
    for version in 2..=401 {
        let change = if version % 2 == 0 {
            json!([{ "range": range(line, 6, line, 6), "text": "x" }])
        } else {
            json!([{ "range": range(line, 6, line, 7), "text": "" }])
        };
        let sent = Instant::now();
        client.change(&doc, version, change);
        client.diagnostics(&doc, version);
        keystrokes.push(sent.elapsed());
    }
    let mut hovers = Vec::new();
    let mut completions = Vec::new();
    for _ in 0..200 {
        let sent = Instant::now();
        client
            .at("textDocument/hover", &doc, line, 20)
            .expect("hover");
        hovers.push(sent.elapsed());
        let sent = Instant::now();
        client
            .at("textDocument/completion", &doc, line, 26)
            .expect("completion");
        completions.push(sent.elapsed());
    }
    for n in 0..99 {
        client.open(&uri(&format!("big{n}.md")), 1, &text);
    }
    client.diagnostics(&uri("big98.md"), 1);
    let memory = resident_kib(client.pid());
    println!("cold start -> first diagnostics: {cold:?}");
    println!(
        "keystroke -> diagnostics: p50 {:?}, max {:?}",
        percentile(&mut keystrokes, 0.5),
        percentile(&mut keystrokes, 1.0)
    );
    println!(
        "hover: p50 {:?}, max {:?}",
        percentile(&mut hovers, 0.5),
        percentile(&mut hovers, 1.0)
    );
    println!(
        "completion: p50 {:?}, max {:?}",
        percentile(&mut completions, 0.5),
        percentile(&mut completions, 1.0)
    );
    println!(
        "resident memory with 100 documents open: {} MiB",
        memory.unwrap_or(0) / 1024
    );
}

/// The next `promptforge/runEvent` of `run_id` that ends the run.
fn run_end(client: &mut LspClient, run_id: &str) -> serde_json::Value {
    let message = client.wait_notification(|m| {
        m["method"] == "promptforge/runEvent"
            && m["params"]["runId"] == run_id
            && (m["params"]["event"]["type"] == "finished"
                || m["params"]["event"]["type"] == "failed")
    });
    message["params"]["event"].clone()
}

fn start_run(client: &mut LspClient, uri: &str) -> String {
    let answer = client
        .request(
            "workspace/executeCommand",
            json!({ "command": "promptforge.run", "arguments": [{ "uri": uri }] }),
        )
        .expect("promptforge.run answers");
    answer["runId"].as_str().unwrap_or_default().to_owned()
}

/// Running from the editor (`editor.md` §2): `promptforge.run` on a pure-Lua
/// prompt to its `finished` event, and one keystroke to `publishDiagnostics` on
/// the 4,000-line prompt while a run (a Lua loop) goes on.
#[test]
#[ignore = "a benchmark: run it on a release build (see the module documentation)"]
fn bench_runs() {
    let program =
        std::env::var_os("PROMPTFORGE_LSP_BIN").map_or_else(release_binary, PathBuf::from);
    let scratch = promptforge_tests::Scratch::new("lsp-bench-runs");
    scratch.write(
        "promptforge.toml",
        "[limits]\nlua_instructions = 100000000000\n",
    );
    let pure = "---\nname: pure\ndescription: d\npromptforge: 0\n---\n\n# Pure\n\n## Go\n\n```lua\nlocal n = 0\nfor i = 1, 100 do n = n + i end\nreturn tostring(n)\n```\n";
    let spin = "---\nname: spin\ndescription: d\npromptforge: 0\n---\n\n# Spin\n\n## Go\n\n```lua\nwhile true do end\n```\n";
    scratch.write("pure.md", pure);
    scratch.write("spin.md", spin);
    let no_user = scratch.path().join(".no-user-config").display().to_string();
    let mut client = LspClient::start_binary(&program, &[("XDG_CONFIG_HOME", no_user.as_str())]);
    client.initialize(json!({}));
    let pure_uri = format!("file://{}", scratch.path().join("pure.md").display());
    let spin_uri = format!("file://{}", scratch.path().join("spin.md").display());
    client.open(&pure_uri, 1, pure);
    client.open(&spin_uri, 1, spin);
    let mut runs = Vec::new();
    for _ in 0..200 {
        let sent = Instant::now();
        let run_id = start_run(&mut client, &pure_uri);
        let end = run_end(&mut client, &run_id);
        runs.push(sent.elapsed());
        assert_eq!(end["result"], "5050", "{end}");
        client.notifications.clear();
    }

    let text = big_prompt();
    let doc = uri("big.md");
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let spinning = start_run(&mut client, &spin_uri);
    let line = 13 + 10 * 200 + 6;
    let mut keystrokes = Vec::new();
    for version in 2..=401 {
        let change = if version % 2 == 0 {
            json!([{ "range": range(line, 6, line, 6), "text": "x" }])
        } else {
            json!([{ "range": range(line, 6, line, 7), "text": "" }])
        };
        let sent = Instant::now();
        client.change(&doc, version, change);
        client.diagnostics(&doc, version);
        keystrokes.push(sent.elapsed());
    }
    client
        .request(
            "workspace/executeCommand",
            json!({ "command": "promptforge.cancel", "arguments": [{ "runId": spinning }] }),
        )
        .expect("promptforge.cancel answers");
    assert_eq!(run_end(&mut client, &spinning)["kind"], "Cancelled");
    println!(
        "promptforge.run -> finished (pure Lua): p50 {:?}, max {:?}",
        percentile(&mut runs, 0.5),
        percentile(&mut runs, 1.0)
    );
    println!(
        "keystroke -> diagnostics while a run goes on: p50 {:?}, max {:?}",
        percentile(&mut keystrokes, 0.5),
        percentile(&mut keystrokes, 1.0)
    );
}

/// The server's peak resident memory so far, in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A prompt whose one section holds one Lua block of at least `bytes` bytes
/// (plain tables: the analysis finds nothing to report in it).
fn huge_lua_prompt(bytes: usize) -> String {
    let mut lua = String::with_capacity(bytes + 64);
    let mut i = 0;
    while lua.len() < bytes {
        lua.push_str(&format!("v{i} = {{ url = 'u{i}', n = {i} }}\n"));
        i += 1;
    }
    format!("---\nname: huge\ndescription: d\npromptforge: 0\n---\n\n# Huge\n\n## Go\n\n```lua\n{lua}```\n")
}

/// A server for the hostile benches, with no user configuration.
fn hostile_server(scratch: &promptforge_tests::Scratch) -> LspClient {
    let program =
        std::env::var_os("PROMPTFORGE_LSP_BIN").map_or_else(release_binary, PathBuf::from);
    let no_user = scratch.path().join(".no-user-config").display().to_string();
    let mut client = LspClient::start_binary(&program, &[("XDG_CONFIG_HOME", no_user.as_str())]);
    client.initialize(json!({}));
    client
}

/// A hostile document (the trust issue): a 10 MB Lua block from `didOpen` to
/// its first diagnostics, a hover on that document and one on a small one sent
/// right after it, and the server's peak memory.
#[test]
#[ignore = "a benchmark: run it on a release build (see the module documentation)"]
fn bench_huge_block() {
    let scratch = promptforge_tests::Scratch::new("lsp-bench-huge");
    let mut client = hostile_server(&scratch);
    let small = uri("small.md");
    let small_text = "---\nname: small\ndescription: d\npromptforge: 0\n---\n\n# Small\n\n## Go\n\n```lua\nreturn args\n```\n";
    client.open(&small, 1, small_text);
    client.diagnostics(&small, 1);
    let huge = uri("huge.md");
    let text = huge_lua_prompt(10 * 1024 * 1024);
    let sent = Instant::now();
    client.open(&huge, 1, &text);
    client
        .at("textDocument/hover", &small, 11, 0)
        .expect("hover");
    let other = sent.elapsed();
    client
        .at("textDocument/hover", &huge, 11, 7)
        .expect("hover");
    let same = sent.elapsed();
    let diagnostics = client.diagnostics(&huge, 1);
    let opened = sent.elapsed();
    println!(
        "didOpen of a {} MB Lua block -> first diagnostics ({} of them): {opened:?}; hovers sent after it answered at: another document {other:?}, that document {same:?}; peak memory {} MiB",
        text.len() / 1_000_000,
        diagnostics.len(),
        peak_kib(client.pid()).unwrap_or(0) / 1024
    );

    // The most the analysis reads of one document: four blocks of 255 KiB that
    // call the Lua API on every line, in a fresh server.
    let mut client = hostile_server(&scratch);
    let mut block = String::new();
    let mut i = 0;
    while block.len() < 255 * 1024 {
        block.push_str(&format!(
            "page{i} = tools.call('fetch', {{ url = args .. '{i}' }})\n"
        ));
        i += 1;
    }
    let fence = format!("```lua\nlocal function f{{}}()\n{block}end\n```\n\n");
    let sections: String = (0..4)
        .map(|n| format!("## S{n}\n\n{}", fence.replace("f{}", &format!("f{n}"))))
        .collect();
    let text = format!("---\nname: budget\ndescription: d\npromptforge: 0\nplugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\n---\n\n# Budget\n\n{sections}");
    let doc = uri("budget.md");
    let sent = Instant::now();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    println!(
        "didOpen of four Lua blocks of 255 KiB -> first diagnostics ({} of them): {:?}; peak memory {} MiB",
        diagnostics.len(),
        sent.elapsed(),
        peak_kib(client.pid()).unwrap_or(0) / 1024
    );
}

/// A run from the editor that logs empty lines until the log limit (the trust
/// issue): the notifications it makes the server send, and its peak memory.
#[test]
#[ignore = "a benchmark: run it on a release build (see the module documentation)"]
fn bench_log_flood() {
    let scratch = promptforge_tests::Scratch::new("lsp-bench-flood");
    let mut client = hostile_server(&scratch);
    let flood = "---\nname: flood\ndescription: d\npromptforge: 0\n---\n\n# Flood\n\n## Go\n\n```lua\nwhile true do log('') end\n```\n";
    scratch.write("flood.md", flood);
    let flood_uri = format!("file://{}", scratch.path().join("flood.md").display());
    let sent = Instant::now();
    let run_id = start_run(&mut client, &flood_uri);
    let (mut count, mut bytes) = (0u64, 0usize);
    let end = loop {
        let message = client.wait_notification(|m| {
            m["method"] == "promptforge/runEvent" && m["params"]["runId"] == run_id.as_str()
        });
        count += 1;
        bytes += message.to_string().len();
        let event = &message["params"]["event"];
        if event["type"] == "finished" || event["type"] == "failed" {
            break event.clone();
        }
    };
    println!(
        "`while true do log('') end` from the editor -> {}: {:?}, {count} runEvent notifications, {} KiB of JSON; server peak memory {} MiB",
        end["kind"],
        sent.elapsed(),
        bytes / 1024,
        peak_kib(client.pid()).unwrap_or(0) / 1024
    );
}

/// `promptforge/tests` on a workspace holding a test file of 63 MiB (617,899
/// cases), then on one holding the most a listing reads (16 test files of
/// about 1 MiB of dense YAML): the answer's time and size, and the server's
/// peak memory.
#[test]
#[ignore = "a benchmark: run it on a release build (see the module documentation)"]
fn bench_test_listing() {
    let program =
        std::env::var_os("PROMPTFORGE_LSP_BIN").map_or_else(release_binary, PathBuf::from);
    let huge = promptforge_tests::Scratch::new("lsp-bench-listing-huge");
    let mut text = String::from("prompt: p.md\ncases:\n");
    for i in 0..617_899 {
        text.push_str(&format!("  - name: case {i:06} reads one\n    args: \"What is Rust? {i:06}\"\n    expect:\n      result_contains: \"Rust\"\n"));
    }
    huge.write("p.test.yaml", &text);
    let dense = promptforge_tests::Scratch::new("lsp-bench-listing-dense");
    let mut text = String::from("prompt: p.md\ncases:\n");
    let mut case = 0;
    while text.len() < 1_000_000 {
        text.push_str(&format!("  - name: case {case}\n    model:\n"));
        for round in 0..2000 {
            text.push_str(&format!("      - text: \"r{round}\"\n"));
        }
        case += 1;
    }
    for i in 0..20 {
        dense.write(&format!("p{i:02}.test.yaml"), &text);
    }
    for (what, scratch) in [
        ("one 63 MiB test file", &huge),
        ("20 test files of 1 MB", &dense),
    ] {
        let no_user = scratch.path().join(".no-user-config").display().to_string();
        let mut client =
            LspClient::start_binary(&program, &[("XDG_CONFIG_HOME", no_user.as_str())]);
        let root = format!("file://{}", scratch.path().display());
        client
            .request(
                "initialize",
                json!({ "processId": null, "rootUri": root, "capabilities": {}, "initializationOptions": { "trusted": false } }),
            )
            .expect("initialize succeeds");
        let sent = Instant::now();
        let answer = client
            .request("promptforge/tests", json!({}))
            .expect("the listing answers");
        let took = sent.elapsed();
        let cases: usize = (answer["files"].as_array().into_iter().flatten())
            .map(|f| f["cases"].as_array().map_or(0, Vec::len))
            .sum();
        println!(
            "promptforge/tests on {what}: {took:?}, {cases} cases, truncated {}, {} bytes; peak memory {} MiB",
            answer["truncated"],
            answer.to_string().len(),
            peak_kib(client.pid()).unwrap_or(0) / 1024
        );
    }
}
