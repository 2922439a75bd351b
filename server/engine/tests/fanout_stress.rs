//! Stress: many 1,000-arm fanouts in one process must all finish (a watchdog fails
//! the test instead of hanging).

use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::testing::{prepare_text, prompt, runtime};
use promptforge_engine::{run, Host, NoEvents, RunOptions, Store};

#[test]
#[ignore = "stress: run with --ignored --release"]
fn many_large_fanouts_finish() {
    let text = prompt(
        "",
        "## Main\n\n```lua\nlocal items = {}\nfor i = 1, 1000 do items[i] = i end\nlocal r = fanout('### Arm', items)\nassert(#r == 1000)\n```\n\n### Arm\n\n---\n\n```lua\nreturn item * 2\n```\n",
    );
    let host = Arc::new(Host::offline());
    let rounds: usize = std::env::var("FANOUT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    for round in 0..rounds {
        let rt = runtime();
        let prepared = Arc::new(rt.block_on(prepare_text(&text, &host)).expect("prepared"));
        for i in 0..5 {
            let started = Instant::now();
            let outcome = rt.block_on(async {
                tokio::time::timeout(
                    Duration::from_secs(60),
                    run(
                        prepared.clone(),
                        host.clone(),
                        Arc::new(Store::in_memory()),
                        RunOptions::default(),
                        Arc::new(NoEvents),
                    ),
                )
                .await
            });
            let outcome = outcome.unwrap_or_else(|_| panic!("round {round} run {i} hung"));
            assert!(outcome.error.is_none(), "{:?}", outcome.error);
            eprintln!("round {round} run {i}: {:?}", started.elapsed());
        }
    }
}
