//! Lua patterns inside the engine's VMs: a backtracking pattern obeys the
//! instruction budget and the cancellation, and ordinary uses still work.

use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::host::Limits;
use promptforge_engine::testing::*;
use promptforge_engine::{run_text, Host, NoEvents, RunOptions, Store};
use tokio_util::sync::CancellationToken;

const BACKTRACK: &str =
    "local ok = pcall(function() return string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b') end)\nreturn 'escaped'";

#[test]
fn a_backtracking_pattern_hits_the_instruction_budget() {
    let mut host = Host::offline();
    host.set_limits(Limits {
        lua_instructions: 1_000_000,
        ..Limits::default()
    });
    let started = Instant::now();
    let outcome = run_on(&section(BACKTRACK), host, "", None);
    assert_eq!(
        error(&outcome),
        (
            "Limit".into(),
            "Lua instruction budget of 1000000 exceeded".into()
        )
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_backtracking_method_call_hits_the_instruction_budget() {
    let mut host = Host::offline();
    host.set_limits(Limits {
        lua_instructions: 1_000_000,
        ..Limits::default()
    });
    let code = "pcall(function() return (('a'):rep(40)):match(('a*'):rep(40) .. 'b') end)\nreturn 'escaped'";
    let outcome = run_on(&section(code), host, "", None);
    assert_eq!(
        error(&outcome),
        (
            "Limit".into(),
            "Lua instruction budget of 1000000 exceeded".into()
        )
    );
}

#[test]
fn a_backtracking_pattern_is_stopped_by_cancellation() {
    let runtime = runtime();
    let cancel = CancellationToken::new();
    let text = section(BACKTRACK);
    let options = RunOptions {
        cancel: cancel.clone(),
        ..Default::default()
    };
    let outcome = runtime.block_on(async move {
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
            Instant::now()
        });
        let outcome = run_text(
            &text,
            Arc::new(Host::offline()),
            Arc::new(Store::in_memory()),
            options,
            Arc::new(NoEvents),
        )
        .await;
        let cancelled_at = canceller.await.unwrap();
        (outcome, cancelled_at.elapsed())
    });
    let (outcome, since_cancel) = outcome;
    assert_eq!(
        error(&outcome),
        ("Cancelled".into(), "the run was cancelled".into())
    );
    assert!(
        since_cancel < Duration::from_secs(1),
        "stopped {since_cancel:?} after the cancel"
    );
}

#[test]
fn ordinary_patterns_still_work() {
    let code = r#"
local k, v = ('key=val'):match('(%w+)=(%w+)')
local up, n = string.gsub('hello world', '%w+', function(w) return w:upper() end)
local words = {}
for w in string.gmatch('one two  three', '%a+') do words[#words + 1] = w end
local i, j = ('x = 10'):find('%d+')
return table.concat({k, v, up, n, table.concat(words, ','), i, j}, '|')
"#;
    let outcome = run(&section(code), "");
    assert_eq!(
        result(&outcome).as_deref(),
        Some("key|val|HELLO WORLD|2|one,two,three|5|6")
    );
}

#[test]
fn pattern_errors_are_lua_errors() {
    let code = "local ok, e = pcall(string.find, 'a', '[a')\nreturn e";
    let outcome = run(&section(code), "");
    assert_eq!(
        result(&outcome).as_deref(),
        Some("malformed pattern (missing ']')")
    );
    let code = "local ok, e = pcall(function() return ('a'):find('(') end)\nreturn e";
    let outcome = run(&section(code), "");
    assert_eq!(
        result(&outcome).as_deref(),
        Some("line 12: unfinished capture")
    );
}
