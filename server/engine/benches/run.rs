//! Engine benchmarks: per-section overhead of the walk, VM creation with a shared
//! library, a 1,000-arm fanout, and model rounds on the script provider.

use std::fmt::Write;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use promptforge_engine::testing::{
    prepare_text, prepared_from, replying, run_prepared, run_prepared_with, runtime,
};
use promptforge_engine::{Host, NoEvents, Prepared, RunOptions, Store};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

fn run_once(rt: &Runtime, prepared: &Arc<Prepared>, host: &Arc<Host>) {
    let outcome = run_prepared(rt, prepared, host);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
}

const HEAD: &str =
    "---\nname: bench\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Bench\n\n";

fn hundred_sections(c: &mut Criterion) {
    let rt = runtime();
    let mut text = HEAD.to_owned();
    for i in 0..100 {
        let _ = write!(text, "## S{i}\n\n```lua\nvar.n = (var.n or 0) + 1\n```\n\n");
    }
    let host = Arc::new(Host::offline());
    let prepared = prepared_from(&rt, &text, &host);
    c.bench_function("walk of 100 pure-Lua sections", |b| {
        b.iter(|| run_once(&rt, &prepared, &host))
    });
    let mut empty = HEAD.to_owned();
    for i in 0..100 {
        let _ = write!(empty, "## S{i}\n\nprose only\n\n");
    }
    let without_blocks = prepared_from(&rt, &empty, &host);
    c.bench_function("walk of 100 sections without blocks", |b| {
        b.iter(|| run_once(&rt, &without_blocks, &host))
    });
}

fn shared_library(c: &mut Criterion) {
    let rt = runtime();
    let mut text = HEAD.to_owned();
    text.push_str("```lua shared\n");
    for i in 0..50 {
        let _ = writeln!(text, "function helper{i}(s) return s .. '{i}' end");
    }
    text.push_str("```\n\n## Only\n\n```lua\nlocal x = helper1('a')\n```\n");
    let host = Arc::new(Host::offline());
    let prepared = prepared_from(&rt, &text, &host);
    c.bench_function("two VMs with a 50-function shared library", |b| {
        b.iter(|| run_once(&rt, &prepared, &host))
    });
}

fn fanout_1000(c: &mut Criterion) {
    let rt = runtime();
    let text = format!(
        "{HEAD}## Main\n\n```lua\nlocal items = {{}}\nfor i = 1, 1000 do items[i] = i end\nlocal r = fanout('### Arm', items)\nassert(#r == 1000)\n```\n\n### Arm\n\n---\n\n```lua\nreturn item * 2\n```\n"
    );
    let host = Arc::new(Host::offline());
    let prepared = prepared_from(&rt, &text, &host);
    let mut group = c.benchmark_group("fanout");
    group.sample_size(10);
    group.bench_function("1,000 arms", |b| b.iter(|| run_once(&rt, &prepared, &host)));
    group.finish();
}

fn twenty_rounds(c: &mut Criterion) {
    let rt = runtime();
    let text = format!(
        "{HEAD}## Talk\n\n```lua\nlocal msgs = messages.new():user('hi')\nfor i = 1, 20 do\n  models.loop(msgs)\n  msgs:user('again')\nend\nassert(#msgs == 41)\n```\n"
    );
    let script_host = || replying(20);
    let prepared = prepared_from(&rt, &text, &script_host());
    c.bench_function("20 model rounds on the script provider", |b| {
        b.iter_batched(
            || {
                // A fresh script per run: the prepared labels point at this host's provider.
                let host = script_host();
                let prepared = rt.block_on(prepare_text(&text, &host)).expect("prepares");
                (Arc::new(prepared), host)
            },
            |(prepared, host)| run_once(&rt, &prepared, &host),
            BatchSize::SmallInput,
        )
    });
    drop(prepared);
}

/// The cost of tracing: the same runs with the trace on (off is the benches
/// above, which must stay where they were before tracing existed).
fn traced(c: &mut Criterion) {
    let rt = runtime();
    let mut text = HEAD.to_owned();
    for i in 0..100 {
        let _ = write!(text, "## S{i}\n\n```lua\nvar.n = (var.n or 0) + 1\n```\n\n");
    }
    let host = Arc::new(Host::offline());
    let prepared = prepared_from(&rt, &text, &host);
    let on = || RunOptions {
        trace: true,
        ..RunOptions::default()
    };
    c.bench_function("walk of 100 pure-Lua sections, traced", |b| {
        b.iter(|| {
            let outcome = run_prepared_with(&rt, &prepared, &host, on());
            assert!(outcome.trace.is_some_and(|t| t.spans.len() == 102));
        })
    });
    let talk = format!(
        "{HEAD}## Talk\n\n```lua\nlocal msgs = messages.new():user('hi')\nfor i = 1, 20 do\n  models.loop(msgs)\n  msgs:user('again')\nend\nassert(#msgs == 41)\n```\n"
    );
    c.bench_function("20 model rounds on the script provider, traced", |b| {
        b.iter_batched(
            || {
                let host = replying(20);
                let prepared = rt.block_on(prepare_text(&talk, &host)).expect("prepares");
                (Arc::new(prepared), host)
            },
            |(prepared, host)| {
                let outcome = run_prepared_with(&rt, &prepared, &host, on());
                assert!(outcome.trace.is_some_and(|t| t.rounds().count() == 20));
            },
            BatchSize::SmallInput,
        )
    });
}

fn bare_vm(c: &mut Criterion) {
    use promptforge_engine::host::Limits;
    use promptforge_engine::run::vm::{new_lua, VmControl};
    let control = Arc::new(VmControl::new(CancellationToken::new(), Limits::default()));
    c.bench_function("one sandboxed VM", |b| {
        b.iter(|| new_lua(&control).expect("a VM"))
    });
    c.bench_function("mlua Lua::new", |b| b.iter(mlua::Lua::new));
    c.bench_function("mlua Lua::new and 5 async functions", |b| {
        b.iter(|| {
            let lua = mlua::Lua::new();
            for _ in 0..5 {
                let f = lua
                    .create_async_function(|_, x: i64| async move { Ok(x) })
                    .expect("a function");
                lua.globals().set("f", f).expect("set");
            }
            lua
        })
    });

    use promptforge_engine::run::context::{Chain, RunShared, SectionCtx, SectionState};
    use promptforge_engine::run::identity::RunIdentity;
    use std::sync::Mutex;
    let rt = runtime();
    let host = Arc::new(Host::offline());
    let prepared = prepared_from(&rt, &format!("{HEAD}## A\n"), &host);
    let shared = Arc::new(RunShared {
        prepared,
        host: host.clone(),
        store: Arc::new(Store::in_memory()),
        cancel: CancellationToken::new(),
        limits: Limits::default(),
        identity: RunIdentity::new(Some(1)).expect("an identity"),
        seed: Some(1),
        default_model: Mutex::new(None),
        log: Default::default(),
        notices: Mutex::new(Vec::new()),
        rounds: Default::default(),
        sections_entered: Default::default(),
        events: Arc::new(NoEvents),
        tools: Default::default(),
        debugger: None,
        trace: None,
        trace_root: None,
        token_memo: Default::default(),
    });
    let chain = Arc::new(Chain::main(String::new(), CancellationToken::new()));
    c.bench_function("one VM with the whole Lua API", |b| {
        b.iter(|| {
            let ctx = Arc::new(SectionCtx {
                run: shared.clone(),
                chain: chain.clone(),
                path: vec![0],
                heading: "A".into(),
                control: control.clone(),
                state: Mutex::new(SectionState::default()),
                trace_span: None,
            });
            let lua = new_lua(&control).expect("a VM");
            promptforge_engine::run::api::install_base(&lua, &ctx).expect("the API");
            promptforge_engine::run::api::install_handles(&lua, &ctx).expect("the handles");
        })
    });
}

criterion_group!(
    benches,
    bare_vm,
    hundred_sections,
    shared_library,
    fanout_1000,
    twenty_rounds,
    traced
);
criterion_main!(benches);
