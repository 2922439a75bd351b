//! The scripts: `model:` rounds (also a `script` provider's whole turns file) and
//! `tools:` answers by exact tool path.

use super::model::{Answer, Round, ScriptedCall, ScriptedTool, Spanned};
use super::problem::{Place, Problem};
use super::reader::Cx;
use crate::diagnostic::{Code, Diagnostic};
use crate::frontmatter::names;
use crate::frontmatter::values::{resolve, Value};
use crate::frontmatter::yaml::Node;

/// A `model:` list: each round that reads well, in order.
pub(super) fn rounds(cx: &mut Cx<'_>, node: &Node) -> Option<Vec<Round>> {
    let items = cx.seq(node)?;
    Some(items.iter().filter_map(|item| round(cx, item)).collect())
}

/// One round: a map of exactly one of `text` (a string) or `calls` (a list of calls).
fn round(cx: &mut Cx<'_>, node: &Node) -> Option<Round> {
    let Value::Map(pairs) = resolve(node) else {
        cx.error(Problem::RoundShape, node.range.clone());
        return None;
    };
    let fields = cx.fields(pairs, Place::Round);
    match (fields.value("text"), fields.value("calls")) {
        (Some(text), None) => cx.string(text).map(|text| Round::Text(text.value)),
        (None, Some(calls)) => {
            let items = cx.seq(calls)?;
            let calls: Vec<ScriptedCall> = items.iter().filter_map(|c| call(cx, c)).collect();
            (calls.len() == items.len()).then_some(Round::Calls(calls))
        }
        _ => {
            cx.error(Problem::RoundShape, node.range.clone());
            None
        }
    }
}

/// One call: a map of one alias to its arguments.
fn call(cx: &mut Cx<'_>, node: &Node) -> Option<ScriptedCall> {
    let pair = match resolve(node) {
        Value::Map([pair]) => Some(pair),
        _ => None,
    };
    let Some((alias, arguments)) = pair else {
        cx.error(Problem::CallShape, node.range.clone());
        return None;
    };
    let alias = cx.string(alias)?;
    let arguments = cx.json_text(arguments)?;
    Some(ScriptedCall { alias, arguments })
}

/// `tools:`: each exact tool path with its answers, in file order.
pub(super) fn tools(cx: &mut Cx<'_>, node: &Node) -> Vec<ScriptedTool> {
    let entries = cx.entries(node);
    let mut out = Vec::new();
    for entry in entries {
        let valid = tool_path(cx, entry.key, &entry.name);
        let answers = cx.seq(entry.value).map(|items| {
            items
                .iter()
                .filter_map(|item| answer(cx, item))
                .collect::<Vec<_>>()
        });
        if let (true, Some(answers)) = (valid, answers) {
            out.push(ScriptedTool {
                path: entry.name,
                answers,
            });
        }
    }
    out
}

/// Checks an exact tool path as the frontmatter's `tools:` values are checked: the
/// range covers the segment the reason names, reported at the key's first character.
fn tool_path(cx: &mut Cx<'_>, key: &Node, path: &Spanned<String>) -> bool {
    let Err(error) = names::check_tool_path(&path.value) else {
        return true;
    };
    let whole = error.segment.start == 0 && error.segment.end == path.value.len();
    let range = match key.value_start() {
        Some(start) if !whole => start + error.segment.start..start + error.segment.end,
        _ => path.range.clone(),
    };
    let problem = Problem::InvalidToolPath {
        text: path.value.clone(),
        reason: error.reason,
    };
    cx.push(Diagnostic::new(Code::TestFile(problem), range).reported_at(path.range.start));
    false
}

/// One answer: a map of exactly one of `output` (text, or a map or list as JSON text)
/// or `error` (the tool's own failure text).
fn answer(cx: &mut Cx<'_>, node: &Node) -> Option<Answer> {
    let Value::Map(pairs) = resolve(node) else {
        cx.error(Problem::AnswerShape, node.range.clone());
        return None;
    };
    let fields = cx.fields(pairs, Place::Answer);
    match (fields.value("output"), fields.value("error")) {
        (Some(output), None) => cx.json_text(output).map(Answer::Output),
        (None, Some(error)) => cx.string(error).map(|e| Answer::Error(e.value)),
        _ => {
            cx.error(Problem::AnswerShape, node.range.clone());
            None
        }
    }
}
