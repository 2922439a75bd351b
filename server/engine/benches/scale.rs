//! How prepare and the run grow with the frontmatter: a run of a prompt with 1k,
//! 10k and 100k model labels (every VM installs one handle per label), and the
//! refusal of a prompt with 1k, 10k and 100k `plugins:` entries the Host lacks
//! (the RequirementsUnmet notice lists them all). Both should grow linearly.
//! And a traced conversation of 10, 20 and 40 rounds of 200 KB turns, within
//! the default trace limit: each text's tokens are counted once and the rounds
//! the full trace drops cost nothing, so it grows with the conversation, not
//! with the sum of its rounds (issue 39: 20 rounds took 9 s to trace).

use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use promptforge_engine::testing::runtime;
use promptforge_engine::{run_text, Host, NoEvents, RunOptions, Store};
use tokio::runtime::Runtime;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// A prompt with `n` entries under `key` (each written by `entry`), an H1 pass
/// and one section.
fn prompt(key: &str, n: usize, entry: impl Fn(usize) -> String) -> String {
    let mut text = format!("---\nname: scale\ndescription: d\npromptforge: 0\n{key}:\n");
    for i in 0..n {
        let _ = writeln!(text, "  {}", entry(i));
    }
    text.push_str(
        "---\n\n# Scale\n\n```lua\nlocal x = 1\n```\n\n## Main\n\n```lua\nreturn 'ok'\n```\n",
    );
    text
}

fn run_prompt(rt: &Runtime, text: &str, host: &Arc<Host>) -> promptforge_engine::Outcome {
    rt.block_on(run_text(
        text,
        host.clone(),
        Arc::new(Store::in_memory()),
        RunOptions::default(),
        Arc::new(NoEvents),
    ))
}

fn labels(c: &mut Criterion) {
    let rt = runtime();
    let host = Arc::new(Host::offline());
    let mut group = c.benchmark_group("run with N model labels");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for n in SIZES {
        let text = prompt("models", n, |i| format!("m{i}: {{}}"));
        let outcome = run_prompt(&rt, &text, &host);
        assert_eq!(outcome.result.as_deref(), Some("ok"), "{:?}", outcome.error);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| run_prompt(&rt, text, &host))
        });
    }
    group.finish();
}

fn plugins(c: &mut Criterion) {
    let rt = runtime();
    let host = Arc::new(Host::offline());
    let mut group = c.benchmark_group("refusal of N missing plugins");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for n in SIZES {
        let text = prompt("plugins", n, |i| format!("- acme/p{i}"));
        let outcome = run_prompt(&rt, &text, &host);
        let error = outcome.error.expect("a refusal");
        assert_eq!(error.message.lines().count(), n + 1);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| run_prompt(&rt, text, &host))
        });
    }
    group.finish();
}

fn traced_conversation(c: &mut Criterion) {
    let rt = runtime();
    let host = Arc::new(Host::offline());
    let mut group = c.benchmark_group("traced conversation of N rounds of 200 KB turns");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for n in [10, 20, 40] {
        let text = format!(
            "---\nname: talk\ndescription: d\npromptforge: 0\nmodels:\n  w: {{}}\n---\n\n# Talk\n\n```lua\nlocal conv = messages.new()\nfor i = 1, {n} do\n  conv:user(string.rep(string.char(64 + i), 200000))\n  models.infer(conv)\n  conv:assistant('ok ' .. i)\nend\nreturn 'done'\n```\n"
        );
        let traced = || {
            let options = RunOptions {
                trace: true,
                ..RunOptions::default()
            };
            rt.block_on(run_text(
                &text,
                host.clone(),
                Arc::new(Store::in_memory()),
                options,
                Arc::new(NoEvents),
            ))
        };
        let outcome = traced();
        assert_eq!(
            outcome.result.as_deref(),
            Some("done"),
            "{:?}",
            outcome.error
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::from_parameter(n), |b| b.iter(traced));
    }
    group.finish();
}

criterion_group!(benches, labels, plugins, traced_conversation);
criterion_main!(benches);
