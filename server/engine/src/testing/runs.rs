//! Running prompts in tests and benches: the runtime, prepare, a run on a Host,
//! and reading the outcome.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use tokio::runtime::{Builder, Runtime};
use tokio_util::sync::CancellationToken;

use crate::host::Limits;
use crate::{prepare, run_text, Host, NoEvents, Outcome, Prepared, RunError, RunOptions, Store};

/// The builder of the tests' runtime: multi-threaded, two workers, all drivers.
pub fn runtime_builder() -> Builder {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(2).enable_all();
    builder
}

/// The tests' runtime (see [`runtime_builder`]).
pub fn runtime() -> Runtime {
    runtime_builder().build().expect("a runtime")
}

/// Runs `future` to its end on a new [`runtime`].
pub fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// The offline Host with `limits`.
pub fn limited(limits: Limits) -> Host {
    let mut host = Host::offline();
    host.set_limits(limits);
    host
}

/// Runs `text` offline with `args` and seed 1.
pub fn run(text: &str, args: &str) -> Outcome {
    run_on(text, Host::offline(), args, Some(1))
}

/// Runs `text` on `host` with `args` and `seed`, on an in-memory store.
pub fn run_on(text: &str, host: Host, args: &str, seed: Option<u64>) -> Outcome {
    run_with(
        text,
        host,
        Arc::new(Store::in_memory()),
        RunOptions {
            args: args.to_owned(),
            seed,
            ..Default::default()
        },
    )
}

/// Runs `text` with everything given, on a new [`runtime`].
pub fn run_with(text: &str, host: Host, store: Arc<Store>, options: RunOptions) -> Outcome {
    block_on(run_text(
        text,
        Arc::new(host),
        store,
        options,
        Arc::new(NoEvents),
    ))
}

/// Parses `text` and prepares it on `host`, with an in-memory store.
pub async fn prepare_text(text: &str, host: &Host) -> Result<Prepared, RunError> {
    let analysis = promptforge_luacheck::parse(text);
    prepare(
        text,
        &analysis,
        host,
        Arc::new(Store::in_memory()),
        CancellationToken::new(),
    )
    .await
}

/// `text` prepared on `host` on `rt`; fails when it has diagnostics or is refused.
pub fn prepared_from(rt: &Runtime, text: &str, host: &Host) -> Arc<Prepared> {
    let analysis = promptforge_luacheck::parse(text);
    assert!(
        analysis.diagnostics.is_empty(),
        "{:?}",
        analysis.diagnostics
    );
    Arc::new(
        rt.block_on(prepare_text(text, host))
            .expect("the prompt prepares"),
    )
}

/// One run of `prepared` on `host` on `rt`, with an in-memory store and the
/// default options.
pub fn run_prepared(rt: &Runtime, prepared: &Arc<Prepared>, host: &Arc<Host>) -> Outcome {
    run_prepared_with(rt, prepared, host, RunOptions::default())
}

/// Runs a prepared prompt with `options` (a debugger attached, say) on a
/// fresh in-memory store.
pub fn run_prepared_with(
    rt: &Runtime,
    prepared: &Arc<Prepared>,
    host: &Arc<Host>,
    options: RunOptions,
) -> Outcome {
    rt.block_on(crate::run::run(
        prepared.clone(),
        host.clone(),
        Arc::new(Store::in_memory()),
        options,
        Arc::new(NoEvents),
    ))
}

/// The result, failing with the error when there is one.
pub fn result(outcome: &Outcome) -> Option<String> {
    if let Some(error) = &outcome.error {
        panic!("the run failed: {error:?}");
    }
    outcome.result.clone()
}

/// The error's kind and message.
pub fn error(outcome: &Outcome) -> (String, String) {
    let error = outcome
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("the run succeeded: {:?}", outcome.result));
    (error.kind.as_str().to_owned(), error.message.clone())
}

/// Calls per alias, as [`Outcome::calls`] holds them.
pub fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(a, n)| ((*a).to_owned(), *n)).collect()
}

/// Runs `text` on `host` with `options` and an in-memory store, on the caller's
/// runtime (for async tests).
pub async fn run_async(text: &str, host: Host, options: RunOptions) -> Outcome {
    run_text(
        text,
        Arc::new(host),
        Arc::new(Store::in_memory()),
        options,
        Arc::new(NoEvents),
    )
    .await
}
