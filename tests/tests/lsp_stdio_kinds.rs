//! The language server on every kind of standard input and output an editor or
//! a script gives it: a socket pair (how VS Code and Neovim start a server), a
//! pipe (most other clients, and every other protocol test here) and plain
//! files. Pipes and sockets are read where they are ready, files through
//! blocking threads; the protocol is the same on each.

#![cfg(unix)]

use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

use promptforge_tests::lsp_client::{frame, read_message};
use promptforge_tests::{binary, isolate, Scratch};
use serde_json::{json, Value};

/// A prompt whose one diagnostic is Lua's syntax error on its line 9 (0-based 8).
const BROKEN: &str = "---\nname: broken\ndescription: Broken on purpose\npromptforge: 0\n---\n# Broken\n\n```lua\nlocal x = = 1\n```\n";

fn framed(message: &Value) -> Vec<u8> {
    frame(&serde_json::to_vec(message).expect("json"))
}

fn initialize(id: i64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "initialize", "params": { "capabilities": {} } })
}

fn did_open() -> Value {
    json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
        "uri": "file:///nowhere/broken.md", "languageId": "markdown", "version": 1, "text": BROKEN } } })
}

fn shutdown(id: i64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "shutdown" })
}

fn exit() -> Value {
    json!({ "jsonrpc": "2.0", "method": "exit" })
}

/// The next message with `id`, or the next notification `method`, skipping the rest.
fn next_matching(reader: &mut BufReader<UnixStream>, wanted: impl Fn(&Value) -> bool) -> Value {
    loop {
        let message = read_message(reader).expect("the server answers before closing");
        if wanted(&message) {
            return message;
        }
    }
}

#[test]
fn a_session_over_a_socket_pair_is_served_like_one_over_pipes() {
    let (mut to_server, server_input) = UnixStream::pair().expect("socket pair");
    let (server_output, from_server) = UnixStream::pair().expect("socket pair");
    let mut command = Command::new(binary());
    isolate(&mut command)
        .arg("lsp")
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(server_input)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(server_output)))
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("promptforge starts");
    // A server that stops answering fails the test instead of hanging it.
    from_server
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .expect("read timeout");
    let mut reader = BufReader::new(from_server);

    to_server.write_all(&framed(&initialize(1))).expect("write");
    let answer = next_matching(&mut reader, |m| m["id"] == 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "promptforge");

    to_server.write_all(&framed(&did_open())).expect("write");
    let published = next_matching(&mut reader, |m| {
        m["method"] == "textDocument/publishDiagnostics"
    });
    let diagnostics = published["params"]["diagnostics"]
        .as_array()
        .expect("a list");
    assert_eq!(diagnostics.len(), 1, "{published}");
    assert_eq!(diagnostics[0]["range"]["start"]["line"], 8, "{published}");
    assert_eq!(
        diagnostics[0]["message"], "unexpected symbol near '='",
        "{published}"
    );

    to_server.write_all(&framed(&shutdown(2))).expect("write");
    let answer = next_matching(&mut reader, |m| m["id"] == 2);
    assert_eq!(answer["result"], Value::Null, "{answer}");
    to_server.write_all(&framed(&exit())).expect("write");
    let status = child.wait().expect("the server ends");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_request_read_from_a_file_is_answered_into_a_file_and_the_end_is_quiet() {
    let dir = Scratch::new("stdio-files");
    let input = dir.write("input", framed(&initialize(1)));
    let output = dir.path().join("output");
    let errors = dir.path().join("errors");

    let mut command = Command::new(binary());
    isolate(&mut command)
        .arg("lsp")
        .stdin(std::fs::File::open(&input).expect("open"))
        .stdout(std::fs::File::create(&output).expect("create"))
        .stderr(std::fs::File::create(&errors).expect("create"));
    let status = command.status().expect("promptforge runs");
    // The input ended at a frame boundary without `shutdown`: status 1, quietly.
    assert_eq!(status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&errors).expect("read"), "");

    let written = std::fs::read(&output).expect("read the output");
    let first = read_message(&mut std::io::Cursor::new(written)).expect("an answer");
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(
        first["result"]["serverInfo"]["name"], "promptforge",
        "{first}"
    );
}
