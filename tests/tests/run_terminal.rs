//! `promptforge run` on a real terminal (a pseudo-terminal from util-linux's
//! `script`): the live status line and the operator's questions.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use promptforge_tests::{binary, isolate, Scratch};

/// Reads `reader` on a thread, sending what arrives.
fn pump(mut reader: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = reader.read(&mut buffer) {
            if send.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    receive
}

/// Collects output until `done` holds of it or `limit` passes.
fn collect_until(
    from: &mpsc::Receiver<Vec<u8>>,
    out: &mut Vec<u8>,
    limit: Duration,
    done: impl Fn(&str) -> bool,
) {
    let end = Instant::now() + limit;
    while !done(&String::from_utf8_lossy(out)) {
        let left = end.saturating_duration_since(Instant::now());
        match from.recv_timeout(left) {
            Ok(bytes) => out.extend(bytes),
            Err(_) => break,
        }
    }
}

#[test]
fn the_status_line_waits_while_the_operator_is_asked() {
    // Issue 23, trap 3: the status line redrew over the question.
    let scratch = Scratch::new("ask-terminal");
    scratch.write(
        "p.md",
        "---\nname: asks\ndescription: d\npromptforge: 0\n---\n\n# T\n\n```lua\nlocal name = input.ask('Your name?')\nreturn 'hi ' .. name\n```\n",
    );
    let command = format!("{} run p.md", binary().display());
    let mut script = Command::new("script");
    isolate(&mut script)
        .current_dir(scratch.path())
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = script.spawn().expect("util-linux's script runs");
    let output = pump(child.stdout.take().expect("stdout"));
    let mut seen = Vec::new();
    collect_until(&output, &mut seen, Duration::from_secs(20), |s| {
        s.contains("Your name?")
    });
    let asked = String::from_utf8_lossy(&seen).into_owned();
    assert!(asked.contains("Your name?"), "the question: {asked:?}");
    // Ten ticks of the status line pass while the operator thinks.
    let thinking = Instant::now() + Duration::from_millis(1200);
    while let Some(left) = thinking.checked_duration_since(Instant::now()) {
        if let Ok(bytes) = output.recv_timeout(left) {
            seen.extend(bytes);
        }
    }
    let text = String::from_utf8_lossy(&seen).into_owned();
    let after_question = &text[text.find("Your name?").expect("asked")..];
    assert!(
        !after_question.contains("section:") && !after_question.contains('\r'),
        "nothing is drawn over the question: {after_question:?}"
    );
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"Ada\n").expect("answer");
    collect_until(&output, &mut seen, Duration::from_secs(20), |s| {
        s.contains("hi Ada")
    });
    drop(stdin);
    let status = child.wait().expect("ends");
    let text = String::from_utf8_lossy(&seen).into_owned();
    assert!(text.contains("hi Ada"), "{text:?}");
    assert!(status.success(), "{text:?}");
}
