//! Helpers of the run suites: run a prompt's text on a Host and read the outcome.
#![allow(dead_code)]

use std::sync::Arc;

use promptforge_engine::host::Limits;
use promptforge_engine::{run_text, Host, NoEvents, Outcome, RunOptions, Store};

/// A prompt with a standard frontmatter plus `extra` keys, and `body` after the H1.
pub fn prompt(extra: &str, body: &str) -> String {
    format!("---\nname: p\ndescription: d\npromptforge: 0\n{extra}---\n\n# Title\n\n{body}")
}

/// A prompt whose one section `## Main` holds `code` as its block.
pub fn section(code: &str) -> String {
    prompt("", &format!("## Main\n\n{}", lua(code)))
}

/// The offline Host with `limits`.
pub fn limited(limits: Limits) -> Host {
    let mut host = Host::offline();
    host.set_limits(limits);
    host
}

/// A ```lua block.
pub fn lua(code: &str) -> String {
    format!("```lua\n{code}\n```\n\n")
}

/// Runs `text` offline with `args`.
pub fn run(text: &str, args: &str) -> Outcome {
    run_on(text, Host::offline(), args, Some(1))
}

/// Runs `text` on `host`.
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

/// Runs `text` with everything given.
pub fn run_with(text: &str, host: Host, store: Arc<Store>, options: RunOptions) -> Outcome {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(run_text(
        text,
        Arc::new(host),
        store,
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
