//! How prepare and the run grow with the frontmatter: a run of a prompt with 1k,
//! 10k and 100k model labels (every VM installs one handle per label), and the
//! refusal of a prompt with 1k, 10k and 100k `plugins:` entries the Host lacks
//! (the RequirementsUnmet notice lists them all). Both should grow linearly.

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

criterion_group!(benches, labels, plugins);
criterion_main!(benches);
