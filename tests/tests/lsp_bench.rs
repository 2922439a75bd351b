//! A bench client over stdio (ignored by default: run it with `cargo test --release
//! -p promptforge-tests --test lsp_bench -- --ignored --nocapture`; it builds and
//! measures the release server binary, or the one `PROMPTFORGE_LSP_BIN` names).
//!
//! On a 4,000-line prompt with 400 Lua blocks it measures cold start to first
//! diagnostics, one keystroke (`didChange`) to `publishDiagnostics`, hover and
//! completion, and the resident memory with 100 such documents open, and prints
//! the figures.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use promptforge_tests::lsp_client::{range, uri, LspClient};
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

/// Builds the release server binary (`promptforge_tests::binary` is the debug one,
/// whose figures say little about the server's speed) and returns its path.
fn release_binary() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(promptforge_tests::workspace_root())
        .args([
            "build",
            "-q",
            "--release",
            "-p",
            "promptforge",
            "--bin",
            "promptforge",
            "--message-format=json",
        ])
        .output()
        .expect("cargo can be started");
    assert!(
        output.status.success(),
        "building promptforge failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| {
            msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "promptforge"
        })
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported the promptforge executable")
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
