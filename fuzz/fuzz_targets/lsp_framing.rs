//! Any bytes on the language server's input: the frame reader decides without a
//! panic, forwards only bodies tower-lsp decodes, answers the others with a
//! JSON-RPC error response, and stops at most once, last, with a one-line cause;
//! the whole service, fed the same bytes through in-memory pipes, ends.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use promptforge_transport::framing::{decide_bytes, Decision};
use serde::Deserialize;
use tower_lsp::jsonrpc::{Request, Response};

/// tower-lsp 0.20's own message type (private there), copied: what its decoder
/// accepts after checking the body is UTF-8.
#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum Message {
    Response(Response),
    Request(Request),
}

/// How long one session may take before it counts as a hang.
const SESSION_TIMEOUT: Duration = Duration::from_secs(20);

fuzz_target!(|data: &[u8]| {
    let decisions = decide_bytes(data);
    for (at, decision) in decisions.iter().enumerate() {
        match decision {
            Decision::Forward(body) => {
                let text = std::str::from_utf8(body).expect("a forwarded body is UTF-8");
                if let Err(error) = serde_json::from_str::<Message>(text) {
                    panic!("tower-lsp cannot decode a forwarded body ({error}): {text}");
                }
            }
            Decision::Answer(body) => {
                let response: Response =
                    serde_json::from_slice(body).expect("an answer is a JSON-RPC response");
                assert!(response.is_error());
            }
            Decision::Fatal(fatal) => {
                assert_eq!(
                    at + 1,
                    decisions.len(),
                    "a fatal error is the last decision"
                );
                assert!(!fatal.to_string().contains(['\n', '\r']));
            }
        }
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let input = std::io::Cursor::new(data.to_vec());
    let ended = runtime.block_on(async {
        let session = promptforge_lsp::serve(input, tokio::io::sink());
        tokio::time::timeout(SESSION_TIMEOUT, session).await
    });
    assert!(
        ended.is_ok(),
        "the session did not end within {SESSION_TIMEOUT:?}"
    );
    runtime.shutdown_background();
});
