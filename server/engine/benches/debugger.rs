//! The debugger's cost (the debugger issue): the same runs with no debugger (as
//! `promptforge run`), with the adapter's debugger attached but no breakpoint set
//! and no step pending (which must stay within a few percent), with a line
//! breakpoint in a block the hot code is not in (which costs the same), and with
//! one on a line of the first block that never runs (that block's VM watches
//! every line: the price of a breakpoint beside hot code).

use std::fmt::Write;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use promptforge_engine::run::{
    BlockLine, DebugListener, Debugger, LineBreakpoint, RunOptions, Stop,
};
use promptforge_engine::testing::{
    prepare_text, prepared_from, replying, run_prepared_with, runtime,
};
use promptforge_engine::{Host, Prepared};
use tokio::runtime::Runtime;

/// A listener that hears nothing worth keeping.
struct Quiet;

impl DebugListener for Quiet {
    fn stopped(&self, _thread: i64, _stop: &Stop) {}
    fn thread(&self, _thread: i64, _started: bool) {}
    fn output(&self, _text: &str) {}
}

/// How a bench run is debugged.
#[derive(Clone, Copy)]
enum Attached {
    /// No debugger: `promptforge run`.
    No,
    /// The adapter's debugger, nothing set.
    Idle,
    /// The adapter's debugger with a breakpoint in a block no VM of the run runs.
    Elsewhere,
    /// The adapter's debugger with a breakpoint on a line of the first block
    /// that never runs.
    Beside,
}

impl Attached {
    const ALL: [(Attached, &'static str); 4] = [
        (Attached::No, "run"),
        (Attached::Idle, "debugger attached, idle"),
        (Attached::Elsewhere, "breakpoint in another block"),
        (Attached::Beside, "breakpoint beside the code"),
    ];

    fn options(self) -> RunOptions {
        let with = |place: BlockLine| {
            let debugger = Debugger::new(Arc::new(Quiet));
            debugger.set_line_breakpoints([LineBreakpoint::at(place)]);
            Some(Arc::new(debugger))
        };
        let debugger = match self {
            Attached::No => None,
            Attached::Idle => Some(Arc::new(Debugger::new(Arc::new(Quiet)))),
            Attached::Elsewhere => with(BlockLine {
                block: usize::MAX,
                line: 1,
            }),
            Attached::Beside => with(BlockLine {
                block: 0,
                line: 999,
            }),
        };
        RunOptions {
            debugger,
            ..RunOptions::default()
        }
    }
}

fn run_once(rt: &Runtime, prepared: &Arc<Prepared>, host: &Arc<Host>, attached: Attached) {
    let outcome = run_prepared_with(rt, prepared, host, attached.options());
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
}

const HEAD: &str =
    "---\nname: bench\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Bench\n\n";

fn compare(c: &mut Criterion, name: &str, text: &str, host: &Arc<Host>) {
    let rt = runtime();
    let prepared = prepared_from(&rt, text, host);
    let mut group = c.benchmark_group(name);
    for (attached, label) in Attached::ALL {
        group.bench_function(label, |b| {
            b.iter(|| run_once(&rt, &prepared, host, attached))
        });
    }
    group.finish();
}

fn walk(c: &mut Criterion) {
    let mut text = HEAD.to_owned();
    for i in 0..100 {
        let _ = write!(text, "## S{i}\n\n```lua\nvar.n = (var.n or 0) + 1\n```\n\n");
    }
    compare(
        c,
        "walk of 100 pure-Lua sections",
        &text,
        &Arc::new(Host::offline()),
    );
}

fn tight_loop(c: &mut Criterion) {
    let text = format!(
        "{HEAD}## Count\n\n```lua\nlocal n = 0\nfor i = 1, 1000000 do\n  n = n + i % 7\nend\nreturn n\n```\n"
    );
    compare(
        c,
        "a Lua loop of 1,000,000 rounds",
        &text,
        &Arc::new(Host::offline()),
    );
}

fn fanout(c: &mut Criterion) {
    let text = format!(
        "{HEAD}## Main\n\n```lua\nlocal items = {{}}\nfor i = 1, 100 do items[i] = i end\nlocal r = fanout('### Arm', items)\nassert(#r == 100)\n```\n\n### Arm\n\n---\n\n```lua\nreturn item * 2\n```\n"
    );
    compare(c, "fanout of 100 arms", &text, &Arc::new(Host::offline()));
}

fn model_loop(c: &mut Criterion) {
    let rt = runtime();
    let text = format!(
        "{HEAD}## Talk\n\n```lua\nlocal msgs = messages.new():user('hi')\nfor i = 1, 20 do\n  models.loop(msgs)\n  msgs:user('again')\nend\nassert(#msgs == 41)\n```\n"
    );
    let script_host = || replying(20);
    let mut group = c.benchmark_group("20 model rounds on the script provider");
    for (attached, label) in Attached::ALL {
        group.bench_function(label, |b| {
            b.iter_batched(
                || {
                    // A fresh script per run: the prepared labels point at this host's provider.
                    let host = script_host();
                    let prepared = rt.block_on(prepare_text(&text, &host)).expect("prepares");
                    (Arc::new(prepared), host)
                },
                |(prepared, host)| run_once(&rt, &prepared, &host, attached),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, walk, model_loop, tight_loop, fanout);
criterion_main!(benches);
