//! A case's `expect:` against what the run did (`testing.md`): every expectation
//! that does not hold is one [`Failure`], in the order of `testing.md`'s keys.

use std::collections::BTreeMap;

use promptforge_syntax::test_file::Expect;

use super::messages;
use crate::prompt_tests::failure::{Failure, Shown};
use crate::run::Outcome;

/// What a finished case run is checked against.
pub struct Observed<'a> {
    /// The run's outcome.
    pub outcome: &'a Outcome,
    /// The store's files at the end.
    pub store: &'a BTreeMap<String, String>,
    /// A live case: only the `result_*`, `error`, `calls`, `store`, `requests`
    /// and `tool_args` expectations apply.
    pub live: bool,
    /// The run's trace, when it was traced.
    pub trace: Option<&'a crate::trace::Trace>,
}

/// Every expectation of `expect` that does not hold.
pub fn check(expect: &Expect, observed: &Observed<'_>) -> Vec<Failure> {
    let mut failures = Vec::new();
    check_result(expect, observed, &mut failures);
    check_error(expect, observed, &mut failures);
    check_counts(expect, observed, &mut failures);
    super::requests::check(expect, observed.trace, &mut failures);
    failures
}

fn check_result(expect: &Expect, observed: &Observed<'_>, failures: &mut Vec<Failure>) {
    let result = observed.outcome.result.as_deref();
    if let Some(wanted) = &expect.result {
        if result != Some(wanted.value.as_str()) {
            failures.push(
                Failure::new("expect.result", messages::RESULT_DIFFERS)
                    .equal(wanted.value.as_str(), result)
                    .at(Some(wanted.range.clone())),
            );
        }
    }
    if let Some(wanted) = &expect.result_contains {
        if !result.is_some_and(|r| r.contains(wanted.value.as_str())) {
            failures.push(
                Failure::new("expect.result_contains", messages::RESULT_LACKS_TEXT)
                    .comparing(wanted.value.as_str(), result)
                    .at(Some(wanted.range.clone())),
            );
        }
    }
    if let Some(pattern) = &expect.result_matches {
        let at = Some(pattern.range.clone());
        match regex::Regex::new(&pattern.value) {
            Ok(regex) => {
                if !result.is_some_and(|r| regex.is_match(r)) {
                    failures.push(
                        Failure::new("expect.result_matches", messages::RESULT_DOES_NOT_MATCH)
                            .comparing(pattern.value.as_str(), result)
                            .at(at),
                    );
                }
            }
            Err(error) => {
                let reason = error.to_string();
                let first = reason.lines().last().unwrap_or("").trim();
                failures.push(
                    Failure::new("expect.result_matches", messages::bad_result_pattern(first))
                        .at(at),
                );
            }
        }
    }
    if let Some(no_result) = &expect.no_result {
        if no_result.value {
            if let Some(result) = result {
                failures.push(
                    Failure::new("expect.no_result", messages::RESULT_GIVEN)
                        .comparing(Shown::Absent(messages::NO_RESULT), result)
                        .at(Some(no_result.range.clone())),
                );
            }
        }
    }
}

fn check_error(expect: &Expect, observed: &Observed<'_>, failures: &mut Vec<Failure>) {
    let error = observed.outcome.error.as_ref();
    let Some(wanted) = &expect.error else {
        if let Some(error) = error {
            failures.push(
                Failure::new("run", messages::RUN_FAILED)
                    .comparing(Shown::Absent(messages::NO_ERROR), described(error)),
            );
        }
        return;
    };
    let Some(error) = error else {
        failures.push(
            Failure::new("expect.error", messages::RUN_DID_NOT_FAIL)
                .comparing(expected_error(wanted), Shown::Absent(messages::NO_ERROR))
                .at(Some(wanted.range.clone())),
        );
        return;
    };
    if let Some(kind) = &wanted.kind {
        if kind.value != error.kind.as_str() {
            failures.push(
                Failure::new("expect.error.kind", messages::ERROR_KIND_DIFFERS)
                    .comparing(kind.value.as_str(), error.kind.as_str())
                    .at(Some(kind.range.clone())),
            );
        }
    }
    if let Some(message) = &wanted.message {
        if message.value != error.message {
            failures.push(
                Failure::new("expect.error.message", messages::ERROR_MESSAGE_DIFFERS)
                    .equal(message.value.as_str(), error.message.as_str())
                    .at(Some(message.range.clone())),
            );
        }
    }
    if let Some(part) = &wanted.message_contains {
        if !error.message.contains(part.value.as_str()) {
            failures.push(
                Failure::new(
                    "expect.error.message_contains",
                    messages::ERROR_MESSAGE_LACKS_TEXT,
                )
                .comparing(part.value.as_str(), error.message.as_str())
                .at(Some(part.range.clone())),
            );
        }
    }
}

/// A run error as `error[Kind]: message`.
fn described(error: &crate::RunError) -> String {
    format!("error[{}]: {}", error.kind.as_str(), error.message)
}

/// What `expect.error` asks for, as `error[Kind]: message`.
fn expected_error(wanted: &promptforge_syntax::test_file::ExpectError) -> String {
    let kind = wanted.kind.as_ref().map_or("_", |k| k.value.as_str());
    let message = wanted
        .message
        .as_ref()
        .or(wanted.message_contains.as_ref())
        .map_or("...", |m| m.value.as_str());
    format!("error[{kind}]: {message}")
}

fn check_counts(expect: &Expect, observed: &Observed<'_>, failures: &mut Vec<Failure>) {
    for (alias, wanted) in &expect.calls {
        let made = observed
            .outcome
            .calls
            .get(&alias.value)
            .copied()
            .unwrap_or(0);
        if made != *wanted {
            failures.push(
                Failure::new(
                    format!("expect.calls.{}", alias.value),
                    messages::calls_differ(&alias.value),
                )
                .comparing(wanted.to_string(), made.to_string())
                .at(Some(alias.range.clone())),
            );
        }
    }
    for (path, wanted) in &expect.store {
        let found = observed.store.get(&path.value);
        if found != Some(wanted) {
            let actual = found.map_or(Shown::Absent(messages::NO_SUCH_FILE), |t| {
                Shown::Text(t.clone())
            });
            failures.push(
                Failure::new(
                    format!("expect.store.{}", path.value),
                    messages::store_file_differs(&path.value),
                )
                .equal(wanted.as_str(), actual)
                .at(Some(path.range.clone())),
            );
        }
    }
    if observed.live {
        return;
    }
    for text in &expect.log_contains {
        let log = &observed.outcome.log;
        if !log.iter().any(|line| line.contains(text.value.as_str())) {
            failures.push(
                Failure::new("expect.log_contains", messages::LOG_LACKS_TEXT)
                    .comparing(text.value.as_str(), log.join("\n"))
                    .at(Some(text.range.clone())),
            );
        }
    }
    if let Some(rounds) = &expect.rounds {
        if observed.outcome.rounds != rounds.value {
            failures.push(
                Failure::new("expect.rounds", messages::ROUNDS_DIFFER)
                    .comparing(
                        rounds.value.to_string(),
                        observed.outcome.rounds.to_string(),
                    )
                    .at(Some(rounds.range.clone())),
            );
        }
    }
}
