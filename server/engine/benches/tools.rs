//! Tool benchmarks: a script call to a local tool, a bound tool call through the
//! Harness, and a `models.loop` round of three tool calls on the script provider.
//!
//! Each figure marked "net" is one call's (or one loop's) own cost: a run doing the
//! work N times minus a run of the same loop without it, divided by N.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use promptforge_engine::harness::Trust;
use promptforge_engine::testing::{
    add_script, prepared_from, run_prepared, runtime, FixedPlugin, TestTool,
};
use promptforge_engine::{Host, Prepared};
use promptforge_syntax::test_file::{Round, ScriptedCall, Spanned};
use tokio::runtime::Runtime;

/// Calls per run in the call benches. Kept at 500: with this loop, a run of 1,000
/// direct `tools.call`s to the local tool loses the call's arguments at call 882
/// ("tools.call alias must be a string or Tool object, got nil"). The VM's periodic
/// hook yield (`run/vm.rs`, `YIELD_EVERY`) lands between a multi-value `...` and
/// the call that consumes it, and mlua 0.11.6 resets the yielded coroutine's stack
/// top between polls (mlua issue #723), so the call sees no arguments.
const CALLS: u32 = 500;
/// `models.loop` runs per run in the loop bench.
const LOOPS: u32 = 50;

const PLUGIN: &str = "bench/fixed";

/// A Host with an in-process Plugin holding the one tool `bench/fixed/fixed` (a
/// trusted plain tool answering a fixed string) and, when `turns` is given, the
/// script model as its default.
fn host(turns: Option<Vec<Round>>) -> Arc<Host> {
    let fixed = TestTool::new(&format!("{PLUGIN}/fixed"))
        .description("Answers a fixed string")
        .declares(Trust::Trusted)
        .output("fixed")
        .unlogged();
    let mut host = Host::offline();
    host.harness_mut()
        .register(Arc::new(FixedPlugin::with_tools(PLUGIN, vec![fixed])));
    if let Some(turns) = turns {
        add_script(&mut host, turns);
    }
    Arc::new(host)
}

/// A prompt with the fixed Plugin, the slot `fixed` and one section running `code`.
fn prompt(code: &str) -> String {
    format!(
        "---\nname: bench\ndescription: d\npromptforge: 0\nplugins: [{PLUGIN}]\ntools:\n  fixed: {PLUGIN}/fixed\nmodels:\n  w: {{}}\n---\n\n# Bench\n\n## Main\n\n```lua\n{code}\n```\n"
    )
}

/// One run; checks it succeeded with `expected` as its result.
fn run_once(rt: &Runtime, prepared: &Arc<Prepared>, host: &Arc<Host>, expected: &str) {
    let outcome = run_prepared(rt, prepared, host);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(outcome.result.as_deref(), Some(expected));
}

const REGISTER: &str = "tools.add_local('grab', 'Grab a value', { value = 'string' }, function(a) return a.value end)\n";

/// A section registering `grab`, then running `body` CALLS times; returns `r`.
fn call_loop(body: &str) -> String {
    prompt(&format!(
        "{REGISTER}local r = ''\nfor i = 1, {CALLS} do\n  {body}\nend\nreturn r"
    ))
}

/// Benches a loop of CALLS tool calls (`call`) against the same loop without the call
/// (`baseline`): both whole runs, then the net per-call cost.
fn call_group(c: &mut Criterion, group: &str, call: &str, baseline: &str, expected: &str) {
    let rt = runtime();
    let host = host(None);
    let with_call = prepared_from(&rt, &call_loop(call), &host);
    let without = prepared_from(&rt, &call_loop(baseline), &host);
    // Both run once before timing: a wrong result fails here, not mid-bench.
    run_once(&rt, &with_call, &host, expected);
    run_once(&rt, &without, &host, "");

    let mut g = c.benchmark_group(group);
    g.sample_size(30);
    g.measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Elements(u64::from(CALLS)));
    g.bench_function(format!("run with {CALLS} calls"), |b| {
        b.iter(|| run_once(&rt, &with_call, &host, expected))
    });
    g.bench_function("baseline run (same loop, no call)", |b| {
        b.iter(|| run_once(&rt, &without, &host, ""))
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("per call (net of the baseline)", |b| {
        b.iter_custom(|iters| {
            let mut net = Duration::ZERO;
            for _ in 0..iters {
                let started = Instant::now();
                run_once(&rt, &with_call, &host, expected);
                let call_time = started.elapsed();
                let started = Instant::now();
                run_once(&rt, &without, &host, "");
                net += call_time.saturating_sub(started.elapsed()) / CALLS;
            }
            net
        })
    });
    g.finish();
}

fn local_tool_call(c: &mut Criterion) {
    call_group(
        c,
        "script call to a local tool",
        "r = tools.call('grab', { value = 'hi' })",
        "local a = { value = 'hi' }",
        "hi",
    );
}

fn bound_tool_call(c: &mut Criterion) {
    call_group(
        c,
        "script call to a bound tool",
        "r = tools.call('fixed', {})",
        "local a = {}",
        "fixed",
    );
}

/// The turns of LOOPS `models.loop` runs: each a round of three calls (two bound, one
/// local), then a text reply.
fn loop_turns(loops: u32) -> Vec<Round> {
    let call = |alias: &str, arguments: &str| ScriptedCall {
        alias: Spanned::new(alias.to_owned(), 0..0),
        arguments: arguments.to_owned(),
    };
    let calls = Round::Calls(vec![
        call("fixed", "{}"),
        call("grab", r#"{"value":"x"}"#),
        call("fixed", "{}"),
    ]);
    (0..loops)
        .flat_map(|_| [calls.clone(), Round::Text("done".to_owned())])
        .collect()
}

fn model_loop(c: &mut Criterion) {
    let rt = runtime();
    let looped = prompt(&format!(
        "tools.add('fixed')\n{REGISTER}local n = 0\nfor i = 1, {LOOPS} do\n  local msgs = messages.new():user('go')\n  local reply = models.loop(msgs)\n  assert(#msgs == 6 and reply == 'done')\n  n = n + 1\nend\nreturn tostring(n) .. ' ' .. tools.calls.fixed .. ' ' .. tools.calls.grab"
    ));
    let baseline = prompt(&format!(
        "tools.add('fixed')\n{REGISTER}local n = 0\nfor i = 1, {LOOPS} do\n  local msgs = messages.new():user('go')\n  n = n + 1\nend\nreturn tostring(n)"
    ));
    let expected = format!("{LOOPS} {} {LOOPS}", 2 * LOOPS);
    let baseline_expected = LOOPS.to_string();
    // A fresh script per run: the prepared labels point at this host's provider.
    let fresh = |text: &str, turns: u32| {
        let host = host(Some(loop_turns(turns)));
        (prepared_from(&rt, text, &host), host)
    };
    let (p, h) = fresh(&looped, LOOPS);
    run_once(&rt, &p, &h, &expected);

    let mut g = c.benchmark_group("models.loop with 3 tool calls");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Elements(u64::from(LOOPS)));
    g.bench_function("run with 50 loops (100 rounds, 150 calls)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (p, h) = fresh(&looped, LOOPS);
                let started = Instant::now();
                run_once(&rt, &p, &h, &expected);
                total += started.elapsed();
            }
            total
        })
    });
    g.bench_function("baseline run (same loop, no models.loop)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (p, h) = fresh(&baseline, 0);
                let started = Instant::now();
                run_once(&rt, &p, &h, &baseline_expected);
                total += started.elapsed();
            }
            total
        })
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("per loop of 2 rounds (net of the baseline)", |b| {
        b.iter_custom(|iters| {
            let mut net = Duration::ZERO;
            for _ in 0..iters {
                let (p, h) = fresh(&looped, LOOPS);
                let started = Instant::now();
                run_once(&rt, &p, &h, &expected);
                let loop_time = started.elapsed();
                let (p, h) = fresh(&baseline, 0);
                let started = Instant::now();
                run_once(&rt, &p, &h, &baseline_expected);
                net += loop_time.saturating_sub(started.elapsed()) / LOOPS;
            }
            net
        })
    });
    g.finish();
}

criterion_group!(benches, local_tool_call, bound_tool_call, model_loop);
criterion_main!(benches);
