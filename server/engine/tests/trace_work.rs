//! Hostile probe (issue 39): tracing was quadratic in the conversation. Each
//! round's request holds the conversation so far, and each round counted the
//! tokens of all of it again, even for a round whose span the full trace then
//! dropped (20 rounds of 200 KB turns: 0.05 s to run, 9 s to trace). The work
//! is bounded here by the bytes whose tokens are counted, not by wall time: a
//! run's texts are counted once each, and a dropped round not at all.
//!
//! One test in this binary: the count is the process's.

use std::sync::Arc;

use promptforge_engine::host::Limits;
use promptforge_engine::testing::*;
use promptforge_engine::{Host, RunOptions, Store};

/// Rounds of the conversation, and the bytes of each user turn.
const ROUNDS: usize = 12;
const TURN: usize = 20_000;

/// A conversation of `ROUNDS` rounds on the echo model, each adding a user
/// turn of `TURN` bytes (its own text) and the model's short answer.
fn conversation() -> String {
    let code = format!(
        "local conv = messages.new()\nfor i = 1, {ROUNDS} do\n  conv:user(string.rep(string.char(96 + i), {TURN}))\n  models.infer(conv)\n  conv:assistant('ok ' .. i)\nend\nreturn 'done'"
    );
    prompt("models:\n  w: {}\n", &section_body(&code))
}

/// The bytes counted by a traced run of the conversation with `trace_bytes`.
fn counted(trace_bytes: u64) -> (u64, usize) {
    let mut host = Host::offline();
    host.set_limits(Limits {
        trace_bytes,
        ..host.limits()
    });
    let options = RunOptions {
        seed: Some(1),
        trace: true,
        ..Default::default()
    };
    let before = promptforge_tokens::bytes_counted();
    let outcome = run_with(&conversation(), host, Arc::new(Store::in_memory()), options);
    assert_eq!(
        result(&outcome).as_deref(),
        Some("done"),
        "{:?}",
        outcome.error
    );
    let rounds = outcome.trace.expect("a trace").rounds().count();
    (promptforge_tokens::bytes_counted() - before, rounds)
}

#[test]
fn counting_a_traced_conversation_is_linear_and_skips_dropped_rounds() {
    // Every round kept: each turn is counted once as a request's message and
    // once as the echo's reply (the sum of the requests would be 78 turns).
    let (all, rounds) = counted(u64::MAX);
    assert_eq!(rounds, ROUNDS);
    let conversation = (ROUNDS * TURN) as u64;
    assert!(
        all <= 2 * conversation + 10_000,
        "{all} bytes counted for a conversation of {conversation}"
    );
    // A trace of 100 kB keeps the first rounds only; the others are dropped
    // before their tokens are counted.
    let (bounded, rounds) = counted(100_000);
    assert!(rounds < 4, "{rounds} rounds kept");
    assert!(
        bounded <= 2 * (4 * TURN) as u64,
        "{bounded} bytes counted for {rounds} rounds kept"
    );
}
