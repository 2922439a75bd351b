//! Limits and cancellation (§7): memory, instruction budget, pcall never catching them,
//! cancellation of a loop that never suspends within a timing bound.

use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::host::Limits;
use promptforge_engine::testing::*;
use promptforge_engine::{run_text, Host, NoEvents, RunOptions, Store};
use tokio_util::sync::CancellationToken;

#[test]
fn the_instruction_budget_is_a_limit_pcall_cannot_catch() {
    let host = limited(Limits {
        lua_instructions: 100_000,
        ..Limits::default()
    });
    let outcome = run_on(
        &section("pcall(function() while true do end end)\nreturn 'escaped'"),
        host,
        "",
        None,
    );
    assert_eq!(
        error(&outcome),
        (
            "Limit".into(),
            "Lua instruction budget of 100000 exceeded".into()
        )
    );
}

#[test]
fn the_memory_ceiling_is_a_limit_pcall_cannot_catch() {
    let host = limited(Limits {
        lua_memory_mib: 4,
        ..Limits::default()
    });
    let code = "local ok = pcall(function() local t = {} for i = 1, 1e8 do t[i] = string.rep('x', 64) .. i end end)\nreturn 'escaped'";
    let outcome = run_on(&section(code), host, "", None);
    assert_eq!(
        error(&outcome),
        ("Limit".into(), "Lua memory limit of 4 MiB exceeded".into())
    );
}

#[test]
fn fanout_concurrency_and_call_depth_come_from_the_host() {
    let host = limited(Limits {
        call_depth: 2,
        ..Limits::default()
    });
    let body = format!(
        "## Main\n\n{}## R\n\n---\n\n{}",
        lua("return call('## R', '1')"),
        lua("return call('## R', args .. '1')")
    );
    assert_eq!(
        error(&run_on(&prompt("", &body), host, "", None)).1,
        "call depth limit of 2 reached"
    );
    let host = limited(Limits {
        fanout_concurrency: 1,
        ..Limits::default()
    });
    let body = format!(
        "## Main\n\n{}## Arm\n\n---\n\n{}",
        lua("local r = fanout('## Arm', {1, 2, 3})\nreturn table.concat(r, ',')"),
        lua("store.append('order.md', tostring(item))\nreturn store.read('order.md')")
    );
    assert_eq!(
        result(&run_on(&prompt("", &body), host, "", None)).as_deref(),
        Some("1,12,123")
    );
}

#[test]
fn cancellation_stops_a_loop_that_never_suspends() {
    let runtime = runtime();
    let cancel = CancellationToken::new();
    let text = section("local ok = pcall(function() while true do end end)\nreturn 'escaped'");
    let options = RunOptions {
        cancel: cancel.clone(),
        ..Default::default()
    };
    let started = Instant::now();
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
        since_cancel < Duration::from_millis(500),
        "stopped {since_cancel:?} after the cancel"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn cancellation_stops_fanout_arms_and_input() {
    let runtime = runtime();
    let cancel = CancellationToken::new();
    let body = format!(
        "## Main\n\n{}## Arm\n\n---\n\n{}",
        lua("fanout('## Arm', {1, 2, 3})"),
        lua("while true do end")
    );
    let text = prompt("", &body);
    let options = RunOptions {
        cancel: cancel.clone(),
        ..Default::default()
    };
    let outcome = runtime.block_on(async move {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        });
        tokio::time::timeout(
            Duration::from_secs(5),
            run_text(
                &text,
                Arc::new(Host::offline()),
                Arc::new(Store::in_memory()),
                options,
                Arc::new(NoEvents),
            ),
        )
        .await
    });
    let outcome = outcome.expect("the run stopped");
    assert_eq!(error(&outcome).0, "Cancelled");
}

#[test]
fn a_run_cancelled_before_it_starts_is_cancelled() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = run_with(
        &section("return 1"),
        Host::offline(),
        Arc::new(Store::in_memory()),
        RunOptions {
            cancel,
            ..Default::default()
        },
    );
    assert_eq!(error(&outcome).0, "Cancelled");
}

#[test]
fn limits_and_jumps_reach_through_coroutines() {
    let host = limited(Limits {
        lua_instructions: 100_000,
        ..Limits::default()
    });
    let code = "local co = coroutine.create(function() while true do end end)\nlocal ok = coroutine.resume(co)\nreturn 'escaped ' .. tostring(ok)";
    assert_eq!(error(&run_on(&section(code), host, "", None)).0, "Limit");
    let body = format!(
        "## A\n\n{}## B\n\n{}## C\n\n{}",
        lua("coroutine.resume(coroutine.create(function() jump('## C') end))\nreturn 'not jumped'"),
        lua("return 'B'"),
        lua("return 'C'")
    );
    assert_eq!(result(&run(&prompt("", &body), "")).as_deref(), Some("C"));
}

/// The hook that lets other chains run (a yield every few thousand instructions)
/// must not disturb the block it interrupts: a vararg forwarder called in a long
/// loop keeps its arguments and locals (mlua issue #723, fixed by mlua 0.12).
#[test]
fn a_long_loop_interrupted_by_the_scheduler_keeps_its_arguments() {
    let text = prompt(
        "",
        &format!(
            "## S\n\n{}",
            lua("local function w(...) return string.rep(...) end\nlocal n = 0\nfor i = 1, 200000 do\n  local s = w('ab', 2)\n  local t = {}\n  n = n + #s\nend\nreturn n")
        ),
    );
    assert_eq!(result(&run(&text, "")).as_deref(), Some("800000"));
}

/// Walks whose sections never suspend nor reach the instruction budget: a
/// section jumping to itself, two jumping to each other, a jump loop in a
/// fanout arm, and one in a `call` chain (the line of the section each loop
/// enters first, where the walk limit names it).
fn jump_loops() -> Vec<(&'static str, String, u32)> {
    vec![
        (
            "self",
            prompt("", &format!("## Self\n\n{}", lua("jump('## Self')"))),
            9,
        ),
        (
            "mutual",
            prompt(
                "",
                &format!(
                    "## A\n\n{}## B\n\n{}",
                    lua("jump('## B')"),
                    lua("jump('## A')")
                ),
            ),
            15,
        ),
        (
            "fanout arm",
            prompt(
                "",
                &format!(
                    "## Main\n\n{}## Arm\n\n---\n\n{}",
                    lua("fanout('## Arm', {1, 2})"),
                    lua("jump('## Arm')")
                ),
            ),
            15,
        ),
        (
            "call chain",
            prompt(
                "",
                &format!(
                    "## Main\n\n{}## Loop\n\n---\n\n{}",
                    lua("return call('## Loop')"),
                    lua("jump('## Loop')")
                ),
            ),
            15,
        ),
    ]
}

#[test]
fn a_walk_that_never_reaches_the_instruction_budget_ends_at_the_walk_limit() {
    for (name, text, line) in jump_loops() {
        let host = limited(Limits {
            walk_sections: 1000,
            ..Limits::default()
        });
        let outcome = run_on(&text, host, "", None);
        assert_eq!(
            error(&outcome),
            (
                "Limit".into(),
                "walk limit of 1000 sections exceeded".into()
            ),
            "{name}"
        );
        let position = outcome.error.as_ref().and_then(|e| e.position);
        assert_eq!(position.map(|p| p.line), Some(line), "{name}");
    }
    // A walk of exactly the limit's sections (the H1 pass and two sections) ends.
    let host = limited(Limits {
        walk_sections: 3,
        ..Limits::default()
    });
    let body = format!("## A\n\n{}## B\n\n{}", lua("log('a')"), lua("return 'b'"));
    let outcome = run_on(&prompt("", &body), host, "", None);
    assert_eq!(result(&outcome).as_deref(), Some("b"));
}

/// Cancels the run once it has entered `after` sections; counts those entered
/// after that.
struct CancelAfter {
    after: usize,
    entered: std::sync::atomic::AtomicUsize,
    cancel: CancellationToken,
}

impl promptforge_engine::RunEvents for CancelAfter {
    fn section(&self, _heading: &str) {
        let entered = self
            .entered
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        if entered == self.after {
            self.cancel.cancel();
        }
    }
}

/// Each jump loop, cancelled once it is well under way, on the runtime given:
/// the run ends Cancelled, and enters at most one section per chain after the
/// cancel (each step of the walk checks it).
fn jump_loops_stop_at_a_cancel(runtime: &tokio::runtime::Runtime) {
    for (name, text, _) in jump_loops() {
        let cancel = CancellationToken::new();
        let events = Arc::new(CancelAfter {
            after: 500,
            entered: Default::default(),
            cancel: cancel.clone(),
        });
        let options = RunOptions {
            cancel: cancel.clone(),
            ..Default::default()
        };
        let outcome = runtime.block_on(run_text(
            &text,
            Arc::new(Host::offline()),
            Arc::new(Store::in_memory()),
            options,
            events.clone(),
        ));
        assert_eq!(
            error(&outcome),
            ("Cancelled".into(), "the run was cancelled".into()),
            "{name}"
        );
        let entered = events.entered.load(std::sync::atomic::Ordering::SeqCst);
        assert!((500..=502).contains(&entered), "{name}: {entered} sections");
    }
}

#[test]
fn a_cancel_stops_jump_loops_at_their_next_step() {
    jump_loops_stop_at_a_cancel(&runtime());
}

/// On a runtime of one thread the cancel comes from another task: the walk
/// must yield for it to run at all.
#[test]
fn a_cancel_from_another_task_stops_jump_loops_on_one_thread() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    for (name, text, _) in jump_loops() {
        let cancel = CancellationToken::new();
        let entered = Arc::new(tokio::sync::Notify::new());
        struct Notifying(Arc<tokio::sync::Notify>);
        impl promptforge_engine::RunEvents for Notifying {
            fn section(&self, _heading: &str) {
                self.0.notify_one();
            }
        }
        let options = RunOptions {
            cancel: cancel.clone(),
            ..Default::default()
        };
        let outcome = runtime.block_on(async {
            let canceller = tokio::spawn({
                let entered = entered.clone();
                async move {
                    entered.notified().await;
                    cancel.cancel();
                }
            });
            let outcome = run_text(
                &text,
                Arc::new(Host::offline()),
                Arc::new(Store::in_memory()),
                options,
                Arc::new(Notifying(entered)),
            )
            .await;
            canceller.await.expect("the canceller ran");
            outcome
        });
        assert_eq!(error(&outcome).0, "Cancelled", "{name}");
    }
}
