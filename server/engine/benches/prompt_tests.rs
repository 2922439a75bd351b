//! Prompt tests: a 200-case suite (pure-Lua cases and scripted-model cases) run
//! concurrently on the two-worker runtime, one case alone, and the bare run of the
//! same prompt, so the per-case overhead of the runner over `run` shows.

use std::fmt::Write;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use promptforge_engine::prompt_tests::{run_case, CaseOptions};
use promptforge_engine::testing::runtime;
use promptforge_engine::{run_text, Host, NoEvents, RunOptions, Store};
use promptforge_syntax::test_file::{self, Case};

const PURE: &str = "---
name: words
description: Counts words
promptforge: 0
---

# Words

```lua
local n = 0
for _ in string.gmatch(args, '%S+') do n = n + 1 end
var.n = n
```

## Report

```lua
return var.n .. ' words'
```
";

const MODEL: &str = "---
name: asker
description: Asks a model
promptforge: 0
models:
  writer: {}
---

# Asker

```lua
models.default('writer')
```

## Ask

```lua
return models.infer('hello ' .. args)
```
";

/// 100 cases of each prompt, every one passing.
fn suite() -> (Vec<Case>, Vec<Case>) {
    let mut pure = String::from("cases:\n");
    let mut model = String::from("cases:\n");
    for i in 0..100 {
        let _ = write!(
            pure,
            "  - name: pure {i}\n    args: a b c {i}\n    expect:\n      result: 4 words\n"
        );
        let _ = write!(
            model,
            "  - name: model {i}\n    args: \"{i}\"\n    model:\n      - text: hi {i}\n    expect:\n      result: hi {i}\n      rounds: 1\n"
        );
    }
    (
        test_file::parse(&pure).0.cases,
        test_file::parse(&model).0.cases,
    )
}

fn prompt_tests(c: &mut Criterion) {
    let rt = runtime();
    let host = Arc::new(Host::offline());
    let (pure, model) = suite();
    assert_eq!((pure.len(), model.len()), (100, 100));
    let cases: Vec<(&'static str, Case)> = pure
        .iter()
        .map(|c| (PURE, c.clone()))
        .chain(model.iter().map(|c| (MODEL, c.clone())))
        .collect();
    let cases = Arc::new(cases);
    c.bench_function(
        "suite of 200 cases (100 pure Lua, 100 scripted model)",
        |b| {
            b.iter(|| {
                rt.block_on(async {
                    let tasks: Vec<_> = (0..cases.len())
                        .map(|i| {
                            let cases = cases.clone();
                            let host = host.clone();
                            tokio::spawn(async move {
                                let (prompt, case) = &cases[i];
                                run_case(&host, prompt, case, CaseOptions::default()).await
                            })
                        })
                        .collect();
                    for task in tasks {
                        let report = task.await.expect("the case task ends");
                        assert!(report.passed(), "{:?}", report.failures);
                    }
                })
            })
        },
    );
    let one = pure[0].clone();
    c.bench_function("one pure-Lua case", |b| {
        b.iter(|| {
            let report = rt.block_on(run_case(&host, PURE, &one, CaseOptions::default()));
            assert!(report.passed());
        })
    });
    c.bench_function("bare run of the same prompt", |b| {
        b.iter(|| {
            let outcome = rt.block_on(run_text(
                PURE,
                host.clone(),
                Arc::new(Store::in_memory()),
                RunOptions {
                    args: "a b c 0".into(),
                    seed: Some(1),
                    ..Default::default()
                },
                Arc::new(NoEvents),
            ));
            assert_eq!(outcome.result.as_deref(), Some("4 words"));
        })
    });
}

criterion_group!(benches, prompt_tests);
criterion_main!(benches);
