//! What bounds the runs a language server session starts (`editor.md` §2, the
//! trust issue), over stdio on the real binary: a run's log lines reach the
//! editor in a few `log` events however many there are, and every line up to
//! the log limit arrives; a session runs a few runs at once and refuses more
//! with a clear `failed` event.

mod lsp_run_support;

use std::time::Instant;

use lsp_run_support::*;
use promptforge_tests::lsp_client::file_uri;
use serde_json::{json, Value};

/// How long the server lets log lines wait to go out together, in ms.
const LOG_FLUSH_MS: u128 = 200;

/// The most text one `log` event carries, in bytes.
const LOG_BATCH_BYTES: usize = 1 << 20;

/// The runs a session runs at once.
const MAX_RUNS: usize = 4;

#[test]
fn a_log_flood_arrives_in_few_events_and_complete_up_to_the_limit() {
    // Each line `000001`, `000002`, ... costs its 6 bytes and the 64 the host
    // keeps per line: 7,000,000 bytes hold exactly 100,000 of them.
    let config = "[limits]\nlog_bytes = 7000000\nlua_instructions = 100000000000\n";
    let scratch = workspace("lsp-run-log-flood", config);
    let lua = "local i = 0\nwhile true do\n  i = i + 1\n  log(string.format('%06d', i))\nend";
    let text = prompt("", lua);
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let started = Instant::now();
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let all = events(&mut client, &run_id);
    let took = started.elapsed();

    let last = all.last().cloned().unwrap_or_default();
    assert_eq!(last["type"], "failed", "{last}");
    assert_eq!(last["kind"], "Limit", "{last}");
    assert_eq!(last["message"], "run log limit of 7000000 bytes exceeded");
    let logs: Vec<&str> = all
        .iter()
        .filter(|e| e["type"] == "log")
        .filter_map(|e| e["text"].as_str())
        .collect();
    // A `log` event holds one line or several joined by newlines.
    let lines: Vec<&str> = logs.iter().flat_map(|t| t.split('\n')).collect();
    let expected: Vec<String> = (1..=100_000).map(|i| format!("{i:06}")).collect();
    assert_eq!(lines.len(), expected.len());
    assert!(lines.iter().zip(&expected).all(|(a, b)| a == b));

    // The server sends the log when a line has waited LOG_FLUSH_MS, when
    // LOG_BATCH_BYTES are waiting, before any other event (to keep the order)
    // and at the end: over this run, no more `log` events than that.
    let bytes: usize = logs.iter().map(|t| t.len()).sum();
    let others = all.len() - logs.len();
    let bound =
        took.as_millis() / LOG_FLUSH_MS + 1 + (bytes / LOG_BATCH_BYTES) as u128 + others as u128;
    println!(
        "100,000 log lines in {} log events ({others} others) in {took:?}; bound {bound}",
        logs.len()
    );
    assert!(
        (logs.len() as u128) <= bound,
        "{} log events in {took:?}",
        logs.len()
    );
}

#[test]
fn a_session_runs_a_few_runs_at_once_and_refuses_more_clearly() {
    let scratch = workspace("lsp-run-max", CONFIG);
    let spin = prompt("", "log('spinning')\nwhile true do end");
    scratch.write("spin.md", &spin);
    let uri = file_uri(&scratch, "spin.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &spin);
    let going: Vec<String> = (0..MAX_RUNS)
        .map(|_| {
            let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
            events_until(&mut client, &run_id, |e| e["text"] == "spinning");
            run_id
        })
        .collect();

    // One more: refused at once, with the reason.
    let refused = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let all = events(&mut client, &refused);
    assert_eq!(
        all,
        [json!({
            "type": "failed",
            "kind": "Limit",
            "message": "4 runs are already going on in this session, the most it runs at once: stop one or wait for one to end"
        })]
    );
    // A test run counts too.
    scratch.write("spin.test.yaml", "cases:\n  - name: spins\n");
    let refused = start_run(&mut client, "promptforge.test", json!({ "uri": uri }));
    assert_eq!(types(&events(&mut client, &refused)), ["failed"]);

    // Once one ends, a run starts again.
    execute(
        &mut client,
        "promptforge.cancel",
        json!({ "runId": going[0] }),
    )
    .expect("cancel is accepted");
    let ended = events(&mut client, &going[0]);
    assert_eq!(
        ended.last().map(|e| e["kind"].clone()),
        Some(json!("Cancelled"))
    );
    let again = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    events_until(&mut client, &again, |e| e["text"] == "spinning");
    for run_id in going.iter().skip(1).chain([&again]) {
        execute(
            &mut client,
            "promptforge.cancel",
            json!({ "runId": run_id }),
        )
        .expect("cancel is accepted");
        let ended = events(&mut client, run_id);
        assert_eq!(
            ended.last().map(|e| e["type"].clone()),
            Some(Value::from("failed"))
        );
    }
}
