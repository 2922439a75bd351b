//! The language server's framing over stdio (`editor.md`; issues 9 and 10): a
//! well-framed message that is not valid JSON-RPC is answered with a JSON-RPC
//! error and the server goes on; a stream that cannot be re-synchronised ends
//! the server with one line on stderr and exit status 1; `shutdown` and `exit`
//! are accepted with `"params": null` or `{}`.

use promptforge_tests::lsp_client::{frame, RawServer};
use serde_json::{json, Value};

/// The error response the framing layer writes.
fn error_response(id: Value, code: i64, message: &str, data: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message, "data": data } })
}

/// Asserts that `initialize` (id 100) is still answered.
fn still_serving(server: &mut RawServer) {
    let response = server.initialize(100);
    assert_eq!(response["id"], 100, "{response}");
    assert_eq!(
        response["result"]["serverInfo"]["name"], "promptforge",
        "{response}"
    );
}

/// The server ends by itself with status 1 and exactly `line` on stderr.
fn ends_with(server: RawServer, keep_input: bool, line: &str) {
    let (code, stderr) = server.finish(keep_input);
    assert_eq!(stderr, format!("{line}\n"));
    assert_eq!(code, Some(1));
}

#[test]
fn a_body_that_is_not_json_gets_a_parse_error_and_the_server_goes_on() {
    let mut server = RawServer::start();
    server.send_body("{not json");
    assert_eq!(
        server.next_message(),
        error_response(
            Value::Null,
            -32700,
            "Parse error",
            "the body is not JSON: key must be a string at line 1 column 2"
        )
    );
    still_serving(&mut server);
    // An empty body is not JSON either.
    server.write(b"Content-Length: 0\r\n\r\n");
    assert_eq!(
        server.next_message(),
        error_response(
            Value::Null,
            -32700,
            "Parse error",
            "the body is not JSON: EOF while parsing a value at line 1 column 0"
        )
    );
    // Still serving (a second `initialize` would be refused as such).
    server.send_body(r#"{"jsonrpc":"2.0","id":101,"method":"shutdown"}"#);
    assert_eq!(
        server.next_message(),
        json!({ "jsonrpc": "2.0", "id": 101, "result": null })
    );
}

#[test]
fn a_json_array_gets_an_invalid_request_error() {
    let mut server = RawServer::start();
    server.send_body(r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]"#);
    assert_eq!(
        server.next_message(),
        error_response(
            Value::Null,
            -32600,
            "Invalid request",
            "a message is a JSON object, not an array"
        )
    );
    server.send_body("42");
    assert_eq!(
        server.next_message(),
        error_response(
            Value::Null,
            -32600,
            "Invalid request",
            "a message is a JSON object, not a number"
        )
    );
    still_serving(&mut server);
}

#[test]
fn an_object_that_is_not_a_message_gets_an_invalid_request_error_with_its_id() {
    let mut server = RawServer::start();
    server.send_body(r#"{"id":7,"params":{}}"#);
    assert_eq!(
        server.next_message(),
        error_response(
            json!(7),
            -32600,
            "Invalid request",
            r#"the message lacks "jsonrpc": "2.0""#
        )
    );
    server.send_body(r#"{"jsonrpc":"2.0","id":"eight","params":{}}"#);
    assert_eq!(
        server.next_message(),
        error_response(
            json!("eight"),
            -32600,
            "Invalid request",
            r#"the message has neither a string "method" nor a "result" or "error""#
        )
    );
    server.send_body(r#"{"jsonrpc":"2.0","id":9,"method":3}"#);
    assert_eq!(
        server.next_message(),
        error_response(
            json!(9),
            -32600,
            "Invalid request",
            r#""method" is not a string"#
        )
    );
    // tower-lsp itself would stop reading at these (an id it cannot hold, a
    // member given twice).
    server.send_body(r#"{"jsonrpc":"2.0","id":1.5,"method":"initialize"}"#);
    assert_eq!(
        server.next_message(),
        error_response(
            Value::Null,
            -32600,
            "Invalid request",
            r#""id" is not an integer, a string or null"#
        )
    );
    server.send_body(r#"{"jsonrpc":"2.0","id":10,"method":"a","method":"b"}"#);
    assert_eq!(
        server.next_message(),
        error_response(
            json!(10),
            -32600,
            "Invalid request",
            r#"the member "method" appears twice"#
        )
    );
    still_serving(&mut server);
}

#[test]
fn a_header_without_content_length_ends_the_server_with_one_line() {
    let mut server = RawServer::start();
    still_serving(&mut server);
    server.write(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
    ends_with(
        server,
        true,
        "promptforge: lsp: malformed message header: no Content-Length",
    );
}

#[test]
fn a_length_that_is_not_a_number_ends_the_server_with_one_line() {
    let mut server = RawServer::start();
    server.write(b"Content-Length: twelve\r\n\r\n{}");
    ends_with(
        server,
        true,
        r#"promptforge: lsp: malformed message header: Content-Length "twelve" is not a number"#,
    );
}

#[test]
fn a_length_over_the_cap_ends_the_server_with_one_line() {
    let mut server = RawServer::start();
    server.write(b"Content-Length: 67108865\r\n\r\n{}");
    ends_with(
        server,
        true,
        "promptforge: lsp: malformed message header: Content-Length 67108865 is over the limit of 67108864 bytes",
    );
}

#[test]
fn the_input_ending_inside_a_body_ends_the_server_with_one_line() {
    let mut server = RawServer::start();
    still_serving(&mut server);
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#;
    server.write(format!("Content-Length: 120\r\n\r\n{body}").as_bytes());
    ends_with(
        server,
        false,
        &format!(
            "promptforge: lsp: the input ended inside a message body (expected 120 bytes, got {})",
            body.len()
        ),
    );
}

#[test]
fn a_clean_end_of_the_input_still_ends_quietly_with_status_1() {
    let mut server = RawServer::start();
    still_serving(&mut server);
    let (code, stderr) = server.finish(false);
    assert_eq!(stderr, "");
    assert_eq!(code, Some(1));
}

#[test]
fn headers_are_case_insensitive_and_content_type_is_ignored() {
    let mut server = RawServer::start();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": { "processId": null, "capabilities": {} } })
    .to_string();
    server.write(
        format!(
            "content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    assert_eq!(server.next_message()["id"], 1);
}

/// `shutdown` and `exit` sent with these `params` end the session with status 0.
fn shutdown_and_exit_with(params: Value) {
    let mut server = RawServer::start();
    still_serving(&mut server);
    server.send_body(
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": params }).to_string(),
    );
    assert_eq!(
        server.next_message(),
        json!({ "jsonrpc": "2.0", "id": 2, "result": null })
    );
    server.send_body(&json!({ "jsonrpc": "2.0", "method": "exit", "params": params }).to_string());
    let (code, stderr) = server.finish(true);
    assert_eq!(stderr, "");
    assert_eq!(code, Some(0));
}

#[test]
fn shutdown_and_exit_with_null_params_end_with_status_0() {
    shutdown_and_exit_with(Value::Null);
}

#[test]
fn shutdown_and_exit_with_empty_params_end_with_status_0() {
    shutdown_and_exit_with(json!({}));
}

#[test]
fn bad_frames_between_good_ones_are_answered_in_order() {
    let mut server = RawServer::start();
    let mut bytes = frame(b"nope");
    bytes.extend(frame(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": { "processId": null, "capabilities": {} } })
        .to_string()
        .as_bytes(),
    ));
    bytes.extend(frame(b"[]"));
    server.write(&bytes);
    let first = server.next_message();
    assert_eq!(first["error"]["code"], -32700, "{first}");
    // The two other answers come in either order (tower-lsp answers on its own
    // time), each whole.
    let mut rest = [server.next_message(), server.next_message()];
    rest.sort_by_key(|m| m["id"].is_null());
    assert_eq!(rest[0]["id"], 1, "{}", rest[0]);
    assert_eq!(rest[1]["error"]["code"], -32600, "{}", rest[1]);
}
