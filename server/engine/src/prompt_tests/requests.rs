//! `expect.requests` and `expect.tool_args` (issue 27): what the case's run sent
//! the model and the arguments its tools were called with, read from the run's
//! trace. A failure shows the requests that were seen.

use std::ops::Range;

use promptforge_syntax::test_file::{Expect, ExpectRequest, Spanned};
use serde_json::Value as Json;

use super::messages;
use crate::prompt_tests::failure::{Failure, Shown};
use crate::trace::{Round, Trace};

/// True when `expect` asks for the run's requests or tool arguments (the case's
/// run is then traced).
pub fn needs_trace(expect: &Expect) -> bool {
    !expect.requests.is_empty() || !expect.tool_args.is_empty()
}

/// Every `requests` and `tool_args` expectation that does not hold.
pub fn check(expect: &Expect, trace: Option<&Trace>, failures: &mut Vec<Failure>) {
    if !needs_trace(expect) {
        return;
    }
    let Some(trace) = trace else { return };
    let rounds: Vec<&Round> = trace.rounds().map(|(_, round)| round).collect();
    for (index, wanted) in expect.requests.iter().enumerate() {
        check_request(index, wanted, &rounds, failures);
    }
    for (alias, calls) in &expect.tool_args {
        let made: Vec<&str> = trace
            .tool_calls()
            .filter(|(_, call)| call.alias == alias.value)
            .map(|(_, call)| call.arguments.as_str())
            .collect();
        for (n, wanted) in calls.iter().enumerate() {
            let actual = made.get(n).copied();
            if actual.is_some_and(|actual| arguments_match(&wanted.value, actual)) {
                continue;
            }
            let actual = actual.map_or(Shown::Absent(messages::NO_SUCH_CALL), Shown::from);
            failures.push(
                Failure::new(
                    format!("expect.tool_args.{}[{}]", alias.value, n + 1),
                    messages::tool_arguments_differ(&alias.value, n + 1),
                )
                .comparing(wanted.value.as_str(), actual)
                .at(Some(wanted.range.clone())),
            );
        }
    }
}

/// One item of `expect.requests`: on its round, each check that fails is a
/// failure; on any round, one failure when no round holds every check.
fn check_request(index: usize, wanted: &ExpectRequest, rounds: &[&Round], out: &mut Vec<Failure>) {
    let what = format!("expect.requests[{}]", index + 1);
    let at = Some(wanted.range.clone());
    match &wanted.round {
        Some(round) => {
            let Some(request) = usize::try_from(round.value)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|n| rounds.get(n))
            else {
                out.push(
                    Failure::new(
                        format!("{what}.round"),
                        messages::no_such_round(round.value),
                    )
                    .comparing(round.value.to_string(), rounds.len().to_string())
                    .at(Some(round.range.clone())),
                );
                return;
            };
            for (key, verdict) in failed_checks(wanted, request) {
                out.push(
                    Failure::new(format!("{what}.{key}"), verdict)
                        .comparing(expected_of(wanted, key), shown(&[request]))
                        .at(range_of(wanted, key).or(at.clone())),
                );
            }
        }
        None => {
            if rounds.iter().any(|r| failed_checks(wanted, r).is_empty()) {
                return;
            }
            let expected = CHECKS
                .iter()
                .filter(|key| !expected_of(wanted, key).is_empty())
                .map(|key| format!("{key}: {}", expected_of(wanted, key)))
                .collect::<Vec<_>>()
                .join("\n");
            out.push(
                Failure::new(what, messages::NO_REQUEST_HOLDS)
                    .comparing(expected, shown(rounds))
                    .at(at),
            );
        }
    }
}

/// The checks of an item, in the order failures list them.
const CHECKS: [&str; 5] = [
    "messages_contain",
    "messages_match",
    "system_contains",
    "tools",
    "tools_include",
];

/// What an item asks for under `key`, as text (`""` when it asks nothing), and
/// where it is written.
fn asked(wanted: &ExpectRequest, key: &str) -> (String, Option<Range<usize>>) {
    let text = |s: &Option<Spanned<String>>| {
        s.as_ref().map_or((String::new(), None), |s| {
            (s.value.clone(), Some(s.range.clone()))
        })
    };
    let list = |s: &Option<Spanned<Vec<String>>>| {
        s.as_ref().map_or((String::new(), None), |s| {
            (s.value.join(", "), Some(s.range.clone()))
        })
    };
    match key {
        "messages_contain" => text(&wanted.messages_contain),
        "messages_match" => text(&wanted.messages_match),
        "system_contains" => text(&wanted.system_contains),
        "tools" => list(&wanted.tools),
        "tools_include" => list(&wanted.tools_include),
        _ => (String::new(), None),
    }
}

/// What an item asks for under `key`, as text.
fn expected_of(wanted: &ExpectRequest, key: &str) -> String {
    asked(wanted, key).0
}

/// Where the check `key` of an item is written.
fn range_of(wanted: &ExpectRequest, key: &str) -> Option<Range<usize>> {
    asked(wanted, key).1
}

/// The checks of `wanted` that `round`'s request breaks, with their verdicts.
fn failed_checks(wanted: &ExpectRequest, round: &Round) -> Vec<(&'static str, &'static str)> {
    let messages = round.request["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let text = |m: &Json| m["content"].as_str().unwrap_or_default().to_owned();
    let offered: Vec<String> = round.request["tools"]
        .as_array()
        .map(|tools| {
            let names = tools.iter().filter_map(|t| t["name"].as_str());
            names.map(str::to_owned).collect()
        })
        .unwrap_or_default();
    let mut failed = Vec::new();
    if let Some(part) = &wanted.messages_contain {
        if !messages
            .iter()
            .any(|m| text(m).contains(part.value.as_str()))
        {
            failed.push(("messages_contain", messages::MESSAGES_LACK_TEXT));
        }
    }
    if let Some(pattern) = &wanted.messages_match {
        let regex = regex::Regex::new(&pattern.value).ok();
        let matched = regex.is_some_and(|r| messages.iter().any(|m| r.is_match(&text(m))));
        if !matched {
            failed.push(("messages_match", messages::MESSAGES_DO_NOT_MATCH));
        }
    }
    if let Some(part) = &wanted.system_contains {
        let system = messages.iter().filter(|m| m["role"] == "system");
        if !system.map(text).any(|t| t.contains(part.value.as_str())) {
            failed.push(("system_contains", messages::SYSTEM_LACKS_TEXT));
        }
    }
    let mut sorted = offered.clone();
    sorted.sort();
    if let Some(tools) = &wanted.tools {
        let mut wanted = tools.value.clone();
        wanted.sort();
        if wanted != sorted {
            failed.push(("tools", messages::TOOLS_OFFERED_DIFFER));
        }
    }
    if let Some(tools) = &wanted.tools_include {
        if !tools.value.iter().all(|t| offered.contains(t)) {
            failed.push(("tools_include", messages::TOOLS_OFFERED_LACK));
        }
    }
    failed
}

/// The requests seen, as a failure shows them: per round its label, each
/// message as `role: text` and the tools offered.
fn shown(rounds: &[&Round]) -> String {
    if rounds.is_empty() {
        return messages::NO_ROUNDS.to_owned();
    }
    let mut out = Vec::new();
    for round in rounds {
        out.push(format!("round {} ({}):", round.index, round.label));
        for message in round.request["messages"].as_array().into_iter().flatten() {
            let role = message["role"].as_str().unwrap_or_default();
            let content = message["content"].as_str().unwrap_or_default();
            out.push(format!("  {role}: {content}"));
        }
        let tools = round.request["tools"].as_array().into_iter().flatten();
        let names: Vec<&str> = tools.filter_map(|t| t["name"].as_str()).collect();
        out.push(format!("  tools: [{}]", names.join(", ")));
    }
    out.join("\n")
}

/// True when the arguments `actual` (the text the model or the script sent)
/// hold `wanted`: JSON matched partially ([`holds`]), or, when `wanted` is not
/// JSON, the same text.
pub fn arguments_match(wanted: &str, actual: &str) -> bool {
    match serde_json::from_str::<Json>(wanted) {
        Ok(wanted) => {
            serde_json::from_str::<Json>(actual).is_ok_and(|actual| holds(&wanted, &actual))
        }
        Err(_) => wanted == actual,
    }
}

/// A partial JSON match: every key of a wanted object is in the actual object
/// with a value that holds; a wanted array holds its items in order, as many as
/// the actual one; anything else is equal.
pub fn holds(wanted: &Json, actual: &Json) -> bool {
    match (wanted, actual) {
        (Json::Object(wanted), Json::Object(actual)) => wanted
            .iter()
            .all(|(key, value)| actual.get(key).is_some_and(|found| holds(value, found))),
        (Json::Array(wanted), Json::Array(actual)) => {
            wanted.len() == actual.len() && wanted.iter().zip(actual).all(|(w, a)| holds(w, a))
        }
        _ => wanted == actual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_partial_match_asks_only_for_the_keys_written() {
        let actual = json!({"url": "https://x", "depth": 2, "opts": {"a": 1, "b": [1, 2]}});
        assert!(holds(&json!({"url": "https://x"}), &actual));
        assert!(holds(&json!({"opts": {"b": [1, 2]}}), &actual));
        assert!(!holds(&json!({"opts": {"b": [1]}}), &actual));
        assert!(!holds(&json!({"url": "https://y"}), &actual));
        assert!(!holds(&json!({"missing": null}), &actual));
        assert!(holds(&json!({}), &actual));
    }

    #[test]
    fn arguments_that_are_not_json_compare_as_text() {
        assert!(arguments_match("{\"a\":1}", "{\"a\": 1, \"b\": 2}"));
        assert!(arguments_match("not json", "not json"));
        assert!(!arguments_match("not json", "{\"a\":1}"));
        assert!(!arguments_match("{\"a\":1}", "not json"));
    }
}
