//! A case written as YAML (`promptforge run --record`): keys in `testing.md`'s
//! order, block scalars for text of several lines, JSON flow maps for tool
//! arguments, and the case appended to a test file's `cases:` list.

use std::fmt::Write as _;

use promptforge_syntax::test_file::{Answer, Case, Round};

use super::messages;

/// The text of a test file with `case` appended: a new file (`prompt:` written only
/// when `prompt` is not the default) when `existing` is None, else `existing` with
/// the case added at the end of its `cases:` block list, at that list's indentation.
/// The error says why the file cannot take the case.
pub fn append_case(
    existing: Option<&str>,
    prompt: Option<&str>,
    case: &Case,
) -> Result<String, String> {
    let Some(text) = existing else {
        let mut out = String::new();
        if let Some(prompt) = prompt {
            let _ = writeln!(out, "prompt: {}", scalar(prompt));
        }
        out.push_str("cases:\n");
        out.push_str(&case_item(case, 2));
        return Ok(out);
    };
    let (file, diagnostics) = promptforge_syntax::test_file::parse(text);
    if diagnostics
        .iter()
        .any(|d| d.severity == promptforge_syntax::Severity::Error)
    {
        return Err(messages::RECORD_FILE_HAS_PROBLEMS.to_owned());
    }
    let indent = match file.cases.first() {
        Some(first) => {
            dash_column(text, first.range.start).ok_or(messages::RECORD_NOT_BLOCK_LIST)?
        }
        None => return Err(messages::RECORD_NOT_BLOCK_LIST.to_owned()),
    };
    let last_end = file.cases.last().map_or(0, |c| c.range.end);
    let after = text.get(last_end..).unwrap_or("");
    if after.lines().any(|line| {
        let trimmed = line.trim_start();
        !trimmed.is_empty() && !trimmed.starts_with('#') && line.len() - trimmed.len() <= indent
    }) {
        // Something other than comments follows the list (another top-level key).
        return Err(messages::RECORD_NOT_BLOCK_LIST.to_owned());
    }
    let mut out = text.to_owned();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&case_item(case, indent));
    Ok(out)
}

/// The column of the `-` that opens the list item whose map starts at `at`, when
/// only blanks and that `-` stand before it on its line.
fn dash_column(text: &str, at: usize) -> Option<usize> {
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let before = text.get(line_start..at)?;
    let dash = before.find('-')?;
    let ok = before.get(..dash)?.chars().all(|c| c == ' ')
        && before.get(dash + 1..)?.chars().all(|c| c == ' ');
    ok.then_some(dash)
}

/// One list item `- name: ...` at `indent` columns, keys in `testing.md`'s order.
pub fn case_item(case: &Case, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let inner = indent + 2;
    let mut out = String::new();
    let name = case.name.as_ref().map_or("", |n| n.value.as_str());
    let _ = writeln!(out, "{pad}- name: {}", text_value(name, inner + 2));
    let key = |out: &mut String, key: &str, value: String| {
        let _ = writeln!(out, "{pad}  {key}:{value}");
    };
    if !case.args.is_empty() {
        key(
            &mut out,
            "args",
            format!(" {}", text_value(&case.args, inner + 2)),
        );
    }
    if let Some(seed) = case.seed {
        key(&mut out, "seed", format!(" {seed}"));
    }
    if !case.store.is_empty() {
        key(&mut out, "store", String::new());
        for (path, contents) in &case.store {
            let _ = writeln!(
                out,
                "{pad}    {}: {}",
                scalar(&path.value),
                text_value(contents, inner + 4)
            );
        }
    }
    if let Some(rounds) = &case.model {
        key(
            &mut out,
            "model",
            if rounds.is_empty() {
                " []".into()
            } else {
                String::new()
            },
        );
        for round in rounds {
            write_round(&mut out, round, inner);
        }
    }
    if !case.tools.is_empty() {
        key(&mut out, "tools", String::new());
        for tool in &case.tools {
            let _ = writeln!(out, "{pad}    {}:", scalar(&tool.path.value));
            for answer in &tool.answers {
                let (key, text) = match answer {
                    Answer::Output(text) => ("output", text),
                    Answer::Error(text) => ("error", text),
                };
                let _ = writeln!(out, "{pad}      - {key}: {}", text_value(text, inner + 8));
            }
        }
    }
    if !case.input.is_empty() {
        key(&mut out, "input", String::new());
        for answer in &case.input {
            let _ = writeln!(out, "{pad}    - {}", text_value(answer, inner + 4));
        }
    }
    if case.live {
        key(&mut out, "live", " true".into());
    }
    write_expect(&mut out, case, indent);
    out
}

fn write_round(out: &mut String, round: &Round, inner: usize) {
    let pad = " ".repeat(inner);
    match round {
        Round::Text(text) => {
            let _ = writeln!(out, "{pad}  - text: {}", text_value(text, inner + 6));
        }
        Round::Calls(calls) => {
            let _ = writeln!(out, "{pad}  - calls:");
            for call in calls {
                let _ = writeln!(
                    out,
                    "{pad}      - {}: {}",
                    scalar(&call.alias.value),
                    arguments(&call.arguments)
                );
            }
        }
    }
}

fn write_expect(out: &mut String, case: &Case, indent: usize) {
    let expect = &case.expect;
    let pad = " ".repeat(indent + 4);
    let inner = indent + 4;
    let mut lines = String::new();
    if let Some(result) = &expect.result {
        let _ = writeln!(
            lines,
            "{pad}result: {}",
            text_value(&result.value, inner + 2)
        );
    }
    if let Some(no_result) = &expect.no_result {
        let _ = writeln!(lines, "{pad}no_result: {}", no_result.value);
    }
    if let Some(error) = &expect.error {
        let _ = writeln!(lines, "{pad}error:");
        if let Some(kind) = &error.kind {
            let _ = writeln!(lines, "{pad}  kind: {}", scalar(&kind.value));
        }
        if let Some(message) = &error.message {
            let _ = writeln!(
                lines,
                "{pad}  message: {}",
                text_value(&message.value, inner + 4)
            );
        }
    }
    if !expect.calls.is_empty() {
        let _ = writeln!(lines, "{pad}calls:");
        for (alias, count) in &expect.calls {
            let _ = writeln!(lines, "{pad}  {}: {count}", scalar(&alias.value));
        }
    }
    if let Some(rounds) = &expect.rounds {
        let _ = writeln!(lines, "{pad}rounds: {}", rounds.value);
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "{}  expect:", " ".repeat(indent));
        out.push_str(&lines);
    }
}

/// Tool-call arguments: a JSON object or array as a flow map (JSON is YAML), any
/// other text as a string (the raw arguments the model wrote).
fn arguments(raw: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(value @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => flow(&value),
        _ => scalar(raw),
    }
}

/// A JSON value as YAML flow: JSON's own text, with a blank after each `:` and
/// `,` so that every YAML reader takes the keys (`{"a": 1, "b": [true, null]}`).
fn flow(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{}: {}", json_string(key), flow(value)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

/// A text value at a place whose block content is indented by `indent` columns: a
/// literal block scalar for text of several lines, else a one-line scalar.
fn text_value(text: &str, indent: usize) -> String {
    let multi_line = text.trim_end_matches('\n').contains('\n');
    let blockable = !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t');
    if !(multi_line && blockable) {
        return scalar(text);
    }
    let trailing = text.len() - text.trim_end_matches('\n').len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    // A first line starting with a blank needs the indentation said.
    let indicator = if text.starts_with([' ', '\t']) {
        "2"
    } else {
        ""
    };
    let pad = " ".repeat(indent);
    let mut out = format!("|{indicator}{chomp}");
    let body = if trailing > 1 {
        text.strip_suffix('\n').unwrap_or(text)
    } else {
        text.trim_end_matches('\n')
    };
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    out
}

/// A one-line scalar: plain when that reads back as the same string, else quoted
/// (a JSON string is a YAML double-quoted scalar).
pub fn scalar(text: &str) -> String {
    if is_plain_safe(text) {
        text.to_owned()
    } else {
        serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
    }
}

/// True when `text` written plain is a string holding exactly `text`.
fn is_plain_safe(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let resolves_otherwise = matches!(
        text,
        "~" | "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
    ) || text.parse::<f64>().is_ok()
        || text.starts_with("0x")
        || text.starts_with("0o")
        || text.starts_with('.');
    first.is_alphanumeric()
        && !resolves_otherwise
        && !text.ends_with(' ')
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.ends_with(':')
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || " _-./,()'?!+=@%".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_back_as_written() {
        assert_eq!(scalar("What is Rust?"), "What is Rust?");
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("12"), "\"12\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar(""), "\"\"");
        assert_eq!(scalar("promptforge/web/fetch"), "promptforge/web/fetch");
        assert_eq!(scalar("- x"), "\"- x\"");
    }

    #[test]
    fn several_lines_become_a_literal_block() {
        assert_eq!(text_value("a\nb\n", 4), "|\n    a\n    b");
        assert_eq!(text_value("a\n\nb", 2), "|-\n  a\n\n  b");
        assert_eq!(text_value("a\nb\n\n", 2), "|+\n  a\n  b\n");
        assert_eq!(text_value(" a\nb", 2), "|2-\n   a\n  b");
        assert_eq!(text_value("one line\n", 2), "\"one line\\n\"");
    }

    #[test]
    fn arguments_are_json_flow_maps_or_raw_strings() {
        assert_eq!(
            arguments(r#"{"query":"rust","n":[1,null]}"#),
            r#"{"n": [1, null], "query": "rust"}"#
        );
        assert_eq!(arguments("not json"), "not json");
        assert_eq!(arguments("\"s\""), "\"\\\"s\\\"\"");
    }

    #[test]
    fn a_written_case_reads_back_as_the_same_case() {
        use promptforge_syntax::test_file::{
            parse, ExpectError, ScriptedCall, ScriptedTool, Spanned,
        };
        let at = |text: &str| Spanned::new(text.to_owned(), 0..0);
        let mut case = Case {
            name: Some(at("What: is \"Rust\"?")),
            args: "line one\n  line two\n".into(),
            seed: Some(u64::MAX),
            model: Some(vec![
                Round::Calls(vec![
                    ScriptedCall {
                        alias: at("fetch"),
                        arguments: r#"{"url":"http://127.0.0.1:9/a?b=c#d","n":[1,{"x":null}]}"#
                            .into(),
                    },
                    ScriptedCall {
                        alias: at("search"),
                        arguments: "not json: at all".into(),
                    },
                ]),
                Round::Text("- a list\n# not a comment\n\n".into()),
            ]),
            tools: vec![ScriptedTool {
                path: at("promptforge/web/fetch"),
                answers: vec![
                    Answer::Output("<h1>x</h1>\n\ttabbed".into()),
                    Answer::Error("timed out: 5s".into()),
                ],
            }],
            input: vec!["yes".into(), "".into(), "true".into()],
            ..Case::default()
        };
        case.expect.error = Some(ExpectError {
            kind: Some(at("Tool")),
            message: Some(at("tool call failure:\ntimed out")),
            ..ExpectError::default()
        });
        let text = append_case(None, Some("../p.md"), &case).unwrap();
        let (file, problems) = parse(&text);
        assert!(problems.is_empty(), "{problems:?}\n{text}");
        assert_eq!(file.prompt.map(|p| p.value).as_deref(), Some("../p.md"));
        let read = &file.cases[0];
        assert_eq!(
            read.name.as_ref().map(|n| n.value.as_str()),
            Some("What: is \"Rust\"?")
        );
        assert_eq!(
            (read.args.as_str(), read.seed),
            (case.args.as_str(), case.seed)
        );
        assert_eq!(read.input, case.input);
        let strip = |rounds: &Option<Vec<Round>>| -> Vec<String> {
            rounds
                .iter()
                .flatten()
                .map(|r| match r {
                    Round::Text(t) => t.clone(),
                    Round::Calls(calls) => calls
                        .iter()
                        .map(|c| {
                            let args = serde_json::from_str::<serde_json::Value>(&c.arguments)
                                .map_or(c.arguments.clone(), |v| v.to_string());
                            format!("{}={}", c.alias.value, args)
                        })
                        .collect::<Vec<_>>()
                        .join(";"),
                })
                .collect()
        };
        assert_eq!(strip(&read.model), strip(&case.model), "{text}");
        assert_eq!(read.tools[0].answers, case.tools[0].answers);
        let error = read.expect.error.as_ref().unwrap();
        assert_eq!(
            error.message.as_ref().map(|m| m.value.as_str()),
            Some("tool call failure:\ntimed out")
        );
        let again = append_case(Some(&text), None, &case).unwrap();
        let (twice, problems) = parse(&again);
        assert_eq!(twice.cases.len(), 2);
        assert_eq!(
            problems.len(),
            1,
            "the one problem is the duplicate name: {problems:?}"
        );
    }
}
