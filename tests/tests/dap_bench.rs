//! A bench of `promptforge dap` over stdio (ignored by default: run it with
//! `cargo test --release -p promptforge-tests --test dap_bench -- --ignored
//! --nocapture`; it builds and measures the release binary, or the one
//! `PROMPTFORGE_DAP_BIN` names).
//!
//! It measures hostile requests (the trust issue): `setBreakpoints` with the
//! lines 1 to 1,000,000 of a prompt, and the adapter's memory once they are
//! replaced by none.

use std::path::PathBuf;
use std::time::Instant;

use promptforge_tests::dap_client::{prompt_in, DapClient};
use promptforge_tests::release_binary;
use serde_json::json;

const PROMPT: &str = "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# P\n\n## Go\n\n```lua\nreturn 'done'\n```\n";

/// A figure of the process's `/proc/{pid}/status` (`VmRSS`, `VmHWM`), in MiB.
fn memory_mib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

#[test]
#[ignore = "a benchmark: run it on a release build (see the module documentation)"]
fn bench_hostile_breakpoints() {
    let program =
        std::env::var_os("PROMPTFORGE_DAP_BIN").map_or_else(release_binary, PathBuf::from);
    let (_scratch, path) = prompt_in("dap-bench", "p.md", PROMPT, "");
    let mut client = DapClient::start_binary(&program);
    let pid = client.pid();
    client.initialize();
    client.ok("launch", json!({ "program": path }));
    let lines: Vec<serde_json::Value> = (1..=1_000_000).map(|l| json!({ "line": l })).collect();
    let sent = Instant::now();
    let answer = client.request(
        "setBreakpoints",
        json!({ "source": { "path": path }, "breakpoints": lines }),
    );
    let took = sent.elapsed();
    println!(
        "setBreakpoints of lines 1..=1,000,000: {took:?}, success {}, {} breakpoints answered; resident {} MiB, peak {} MiB",
        answer["success"],
        answer["body"]["breakpoints"].as_array().map_or(0, Vec::len),
        memory_mib(pid, "VmRSS:"),
        memory_mib(pid, "VmHWM:"),
    );
    client.ok(
        "setBreakpoints",
        json!({ "source": { "path": path }, "breakpoints": [] }),
    );
    println!(
        "after they are replaced by none: resident {} MiB",
        memory_mib(pid, "VmRSS:")
    );
    client.ok("configurationDone", serde_json::Value::Null);
    assert_eq!(client.event("exited")["body"]["exitCode"], 0);
    client.finish();
}
