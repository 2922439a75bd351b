//! A bench of `promptforge dap` over stdio (ignored by default: run it with
//! `cargo test --release -p promptforge-tests --test dap_bench -- --ignored
//! --nocapture`; it builds and measures the release binary, or the one
//! `PROMPTFORGE_DAP_BIN` names).
//!
//! It measures hostile requests (the trust issue): `setBreakpoints` with the
//! lines 1 to 1,000,000 of a prompt, and the adapter's memory once they are
//! replaced by none.

use std::path::PathBuf;
use std::time::{Duration, Instant};

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

/// The CPU time the process has used, in clock ticks (user and system).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields; 12th and 13th after the name.
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// True once the process has exited (gone, or a zombie not yet waited for).
fn ended_process(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).map_or(true, |status| {
        status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
    })
}

/// A framed `setBreakpoints` of `path` on the lines `1..=lines`, with `seq`.
fn set_breakpoints_frame(path: &std::path::Path, lines: u32, seq: i64) -> Vec<u8> {
    let mut body = format!(
        "{{\"type\":\"request\",\"seq\":{seq},\"command\":\"setBreakpoints\",\"arguments\":{{\"source\":{{\"path\":{}}},\"breakpoints\":[",
        json!(path)
    );
    for line in 1..=lines {
        if line > 1 {
            body.push(',');
        }
        body.push_str(&format!("{{\"line\":{line}}}"));
    }
    body.push_str("]}}");
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body.as_bytes());
    frame
}

/// A launched session of the adapter `program` on a small prompt.
fn session(program: &std::path::Path) -> (promptforge_tests::Scratch, PathBuf, DapClient) {
    let (scratch, path) = prompt_in("dap-bench", "p.md", PROMPT, "");
    let mut client = DapClient::start_binary(program);
    client.initialize();
    client.ok("launch", json!({ "program": path }));
    (scratch, path, client)
}

#[test]
#[ignore = "a benchmark: run it on a release build (see the module documentation)"]
fn bench_hostile_breakpoints() {
    let program =
        std::env::var_os("PROMPTFORGE_DAP_BIN").map_or_else(release_binary, PathBuf::from);
    // The largest request under 4 MiB: about 220,000 breakpoints.
    let (_scratch, path, mut client) = session(&program);
    let pid = client.pid();
    let frame = set_breakpoints_frame(&path, 220_000, 1000);
    let (ticks, sent) = (cpu_ticks(pid), Instant::now());
    client.write(&frame);
    let answer = client.take(|m| m["type"] == "response" && m["request_seq"] == 1000);
    println!(
        "setBreakpoints of lines 1..=220,000 ({} KiB): {:?}, adapter CPU {} ticks, success {}, {} breakpoints answered; resident {} MiB, peak {} MiB",
        frame.len() / 1024,
        sent.elapsed(),
        cpu_ticks(pid) - ticks,
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

    // A million lines: answered, or the session ends at its header.
    let (_scratch, path, mut client) = session(&program);
    let pid = client.pid();
    let frame = set_breakpoints_frame(&path, 1_000_000, 1000);
    let (ticks, sent) = (cpu_ticks(pid), Instant::now());
    // An adapter that refuses the frame at its header stops reading it.
    let _ = client.try_write(&frame);
    let ended = loop {
        match client.next_within(Duration::from_millis(50)) {
            Some(m) if m["type"] == "response" && m["request_seq"] == 1000 => {
                break Some((
                    cpu_ticks(pid) - ticks,
                    memory_mib(pid, "VmRSS:"),
                    memory_mib(pid, "VmHWM:"),
                ));
            }
            Some(_) => {}
            None if ended_process(pid) => break None,
            None => {}
        }
    };
    match ended {
        Some((cpu, resident, peak)) => println!(
            "setBreakpoints of lines 1..=1,000,000 ({} KiB): answered in {:?}, adapter CPU {cpu} ticks; resident {resident} MiB, peak {peak} MiB",
            frame.len() / 1024,
            sent.elapsed(),
        ),
        None => println!(
            "setBreakpoints of lines 1..=1,000,000 ({} KiB): the session ended in {:?}, exit status {:?}",
            frame.len() / 1024,
            sent.elapsed(),
            client.exit_code(),
        ),
    }
}
