//! A case's `expect:`: every key optional, each checked for its type; the error
//! kind against the run error kinds and the pattern against the `regex` crate.

use super::model::{Expect, ExpectError, ExpectJudge, ExpectRequest, Spanned};
use super::problem::{Place, Problem};
use super::reader::Cx;
use crate::api_names::RUN_ERROR_KINDS;
use crate::frontmatter::yaml::Node;

/// Reads `expect:` (its key `key`, its value `node`).
pub(super) fn read(cx: &mut Cx<'_>, key: &Node, node: &Node) -> Expect {
    let mut expect = Expect {
        range: Some(key.range.clone()),
        ..Expect::default()
    };
    let Some(pairs) = cx.map(node) else {
        return expect;
    };
    let fields = cx.fields(pairs, Place::Expect);
    let string = |cx: &mut Cx<'_>, name: &str| fields.value(name).and_then(|v| cx.string(v));
    expect.result = string(cx, "result");
    expect.result_contains = string(cx, "result_contains");
    expect.result_matches = string(cx, "result_matches").filter(|p| pattern(cx, p));
    expect.no_result = fields
        .value("no_result")
        .and_then(|v| Some(Spanned::new(cx.boolean(v)?, v.range.clone())));
    expect.error = fields
        .pair("error")
        .and_then(|(key, value)| error(cx, key, value));
    if let Some(calls) = fields.value("calls") {
        let entries = cx.entries(calls);
        expect.calls = entries
            .into_iter()
            .filter_map(|entry| Some((entry.name, cx.unsigned(entry.value)?)))
            .collect();
    }
    if let Some(store) = fields.value("store") {
        expect.store = cx.string_map(store);
    }
    if let Some(lines) = fields.value("log_contains") {
        expect.log_contains = cx.strings(lines);
    }
    expect.rounds = fields
        .value("rounds")
        .and_then(|v| Some(Spanned::new(cx.unsigned(v)?, v.range.clone())));
    if let Some(items) = fields.value("requests").and_then(|v| cx.seq(v)) {
        expect.requests = items.iter().filter_map(|item| request(cx, item)).collect();
    }
    if let Some(aliases) = fields.value("tool_args") {
        let entries = cx.entries(aliases);
        expect.tool_args = entries
            .into_iter()
            .filter_map(|entry| {
                let calls = cx.seq(entry.value)?;
                let texts = calls.iter().filter_map(|call| {
                    let text = cx.json_text(call)?;
                    Some(Spanned::new(text, call.range.clone()))
                });
                Some((entry.name, texts.collect()))
            })
            .collect();
    }
    expect.judge = fields
        .pair("judge")
        .and_then(|(key, value)| judge(cx, key, value));
    expect
}

/// `expect.judge:` (its key `key`, its value `node`): `rubric:` is required.
fn judge(cx: &mut Cx<'_>, key: &Node, node: &Node) -> Option<ExpectJudge> {
    let pairs = cx.map(node)?;
    let fields = cx.fields(pairs, Place::ExpectJudge);
    let model = fields.value("model").and_then(|v| cx.string(v));
    let Some(rubric) = fields.value("rubric") else {
        cx.error(Problem::MissingField { key: "rubric" }, node.range.clone());
        return None;
    };
    Some(ExpectJudge {
        range: key.range.clone(),
        rubric: cx.string(rubric)?,
        model,
    })
}

/// One item of `expect.requests:`.
fn request(cx: &mut Cx<'_>, node: &Node) -> Option<ExpectRequest> {
    let pairs = cx.map(node)?;
    let fields = cx.fields(pairs, Place::ExpectRequest);
    let string = |cx: &mut Cx<'_>, name: &str| fields.value(name).and_then(|v| cx.string(v));
    let aliases = |cx: &mut Cx<'_>, name: &str| {
        let node = fields.value(name)?;
        let names = cx.strings(node).into_iter().map(|s| s.value).collect();
        Some(Spanned::new(names, node.range.clone()))
    };
    Some(ExpectRequest {
        range: node.range.clone(),
        round: fields
            .value("round")
            .and_then(|v| Some(Spanned::new(cx.unsigned(v)?, v.range.clone()))),
        messages_contain: string(cx, "messages_contain"),
        messages_match: string(cx, "messages_match").filter(|p| pattern(cx, p)),
        system_contains: string(cx, "system_contains"),
        tools: aliases(cx, "tools"),
        tools_include: aliases(cx, "tools_include"),
    })
}

/// `expect.error:` (its key `key`, its value `node`).
fn error(cx: &mut Cx<'_>, key: &Node, node: &Node) -> Option<ExpectError> {
    let pairs = cx.map(node)?;
    let fields = cx.fields(pairs, Place::ExpectError);
    let string = |cx: &mut Cx<'_>, name: &str| fields.value(name).and_then(|v| cx.string(v));
    let kind = string(cx, "kind").filter(|kind| {
        let known = RUN_ERROR_KINDS.contains(&kind.value.as_str());
        if !known {
            let problem = Problem::UnknownErrorKind {
                kind: kind.value.clone(),
            };
            cx.error(problem, kind.range.clone());
        }
        known
    });
    Some(ExpectError {
        range: key.range.clone(),
        kind,
        message: string(cx, "message"),
        message_contains: string(cx, "message_contains"),
    })
}

/// True when `pattern` compiles; otherwise its problem is reported at the scalar.
fn pattern(cx: &mut Cx<'_>, pattern: &Spanned<String>) -> bool {
    let Err(reason) = compile_error(&pattern.value) else {
        return true;
    };
    cx.error(Problem::InvalidRegex { reason }, pattern.range.clone());
    false
}

/// Why the `regex` crate refuses `pattern`: the syntax error's own kind
/// (`unclosed group`), or the first line of the compile error (a size limit).
fn compile_error(pattern: &str) -> Result<(), String> {
    if let Err(error) = regex_syntax::Parser::new().parse(pattern) {
        return Err(match &error {
            regex_syntax::Error::Parse(e) => e.kind().to_string(),
            regex_syntax::Error::Translate(e) => e.kind().to_string(),
            other => first_line(&other.to_string()),
        });
    }
    match regex::Regex::new(pattern) {
        Ok(_) => Ok(()),
        Err(error) => Err(first_line(&error.to_string())),
    }
}

/// The first line of a text.
fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_owned()
}
