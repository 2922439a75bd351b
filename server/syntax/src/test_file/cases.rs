//! The top level (`prompt:`, `cases:`) and each case: its keys, the missing and
//! duplicate names, and the keys a live case may not have.

use std::collections::HashMap;
use std::ops::Range;

use super::messages;
use super::messages::RELATED_FIRST_USED;
use super::model::{Case, MinPass, Spanned, TestFile};
use super::problem::{Place, Problem};
use super::reader::{Cx, EXPECTED_MAP};
use super::{expect, rounds};
use crate::diagnostic::{Code, Diagnostic};
use crate::frontmatter::values::{resolve, Value};
use crate::frontmatter::yaml::Node;

/// Reads the document's root (None: a stream with no document) into `file`.
pub(super) fn read_file(cx: &mut Cx<'_>, root: Option<&Node>, file: &mut TestFile) {
    let (pairs, at): (&[(Node, Node)], usize) = match root {
        None => (&[], 0),
        Some(node) => match resolve(node) {
            Value::Null => (&[], node.range.start),
            Value::Map(pairs) => (pairs, node.range.start),
            _ => return cx.type_error(node, EXPECTED_MAP),
        },
    };
    let fields = cx.fields(pairs, Place::TopLevel);
    if let Some(prompt) = fields.value("prompt") {
        file.prompt = cx.string(prompt);
    }
    let Some(cases) = fields.value("cases") else {
        return cx.error(Problem::MissingField { key: "cases" }, at..at);
    };
    let Some(items) = cx.seq(cases) else {
        return;
    };
    let mut names: HashMap<String, Range<usize>> = HashMap::new();
    for item in items {
        let Some(case) = case(cx, item) else {
            continue;
        };
        if let Some(name) = &case.name {
            match names.get(&name.value) {
                Some(first) => {
                    let problem = Problem::DuplicateCaseName {
                        name: name.value.clone(),
                    };
                    cx.push(
                        Diagnostic::new(Code::TestFile(problem), name.range.clone())
                            .with_related(first.clone(), RELATED_FIRST_USED),
                    );
                }
                None => {
                    names.insert(name.value.clone(), name.range.clone());
                }
            }
        }
        file.cases.push(case);
    }
}

/// One case (None when it is not a map).
fn case(cx: &mut Cx<'_>, node: &Node) -> Option<Case> {
    let pairs = cx.map(node)?;
    let fields = cx.fields(pairs, Place::Case);
    let mut case = Case {
        range: node.range.clone(),
        ..Case::default()
    };
    match fields.value("name") {
        Some(name) => case.name = cx.string(name),
        None => cx.error(Problem::MissingField { key: "name" }, node.range.clone()),
    }
    if let Some(args) = fields.value("args") {
        case.args = cx.string(args).map(|a| a.value).unwrap_or_default();
    }
    case.seed = fields.value("seed").and_then(|seed| cx.unsigned(seed));
    if let Some(store) = fields.value("store") {
        case.store = cx.string_map(store);
    }
    case.model = fields.value("model").and_then(|m| rounds::rounds(cx, m));
    if let Some(tools) = fields.value("tools") {
        case.tools = rounds::tools(cx, tools);
    }
    if let Some(input) = fields.value("input") {
        case.input = cx.strings(input).into_iter().map(|s| s.value).collect();
    }
    case.live = fields
        .value("live")
        .and_then(|live| cx.boolean(live))
        .unwrap_or(false);
    case.repeat = fields.value("repeat").and_then(|node| {
        let count = cx.unsigned(node)?;
        if count == 0 || count > super::MAX_REPEAT {
            let problem = Problem::InvalidValue {
                found: format!("integer `{count}`"),
                expected: messages::EXPECTED_REPEAT,
            };
            cx.error(problem, node.range.clone());
            return None;
        }
        Some(Spanned::new(count, node.range.clone()))
    });
    case.min_pass = fields.value("min_pass").and_then(|node| min_pass(cx, node));
    if let (Some(repeat), false) = (&case.repeat, case.live) {
        // A warning: the code's severity says so.
        cx.error(Problem::RepeatOnScriptedCase, repeat.range.clone());
    }
    if let (Some(min_pass), None) = (&case.min_pass, &case.repeat) {
        cx.error(Problem::MinPassWithoutRepeat, min_pass.range.clone());
    }
    if let Some((key, value)) = fields.pair("expect") {
        case.expect = expect::read(cx, key, value);
    }
    if case.live {
        for key in ["model", "tools"] {
            if let Some(written) = fields.key(key) {
                cx.error(Problem::NotOnLiveCase { key }, written.range.clone());
            }
        }
    }
    Some(case)
}

/// `min_pass:`: a share (a number with a fraction, above 0 and at most 1) or a
/// count (a whole number of 1 or more).
fn min_pass(cx: &mut Cx<'_>, node: &Node) -> Option<Spanned<MinPass>> {
    let value = match resolve(node) {
        Value::Float(share) if share > 0.0 && share <= 1.0 => {
            Some(MinPass::Share((share * 1_000_000.0).round() as u32))
        }
        Value::Int(count) if count >= 1 => u64::try_from(count).ok().map(MinPass::Count),
        Value::Float(_) | Value::Int(_) => None,
        _ => {
            cx.type_error(node, messages::EXPECTED_MIN_PASS);
            return None;
        }
    };
    if value.is_none() {
        let problem = Problem::InvalidValue {
            found: crate::frontmatter::values::found(node),
            expected: messages::EXPECTED_MIN_PASS,
        };
        cx.error(problem, node.range.clone());
    }
    Some(Spanned::new(value?, node.range.clone()))
}
