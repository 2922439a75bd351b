//! The top level: known, unknown, duplicate and missing keys, and the scalar fields
//! (`name`, `description`, `promptforge`, `max_tool_iterations`).

use std::ops::Range;

use super::messages::EXPECTED_MAP;
use super::model::{Frontmatter, KeyEntry, Spanned};
use super::scalars::{integer, string};
use super::values::{resolve, Value};
use super::yaml::Node;
use super::{models, names, plugins, tools, Cx};
use crate::diagnostic::{Code, FieldPlace};

/// The top-level keys, in the order the unknown-field message lists them.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "promptforge",
    "plugins",
    "tools",
    "models",
    "max_tool_iterations",
];

/// The required keys, in the order their missing-field errors are reported.
pub const REQUIRED_KEYS: &[&str] = &["name", "description", "promptforge"];

/// Validates the document's root node; `opening` is the range of the opening `---`, where
/// missing keys are reported.
pub(crate) fn validate_root(
    cx: &mut Cx<'_>,
    root: Option<&Node>,
    fm: &mut Frontmatter,
    opening: Range<usize>,
) {
    let pairs: &[(Node, Node)] = match root {
        None => &[],
        Some(node) => match resolve(node) {
            Value::Null => &[],
            Value::Map(pairs) => pairs,
            _ => return cx.type_error(node, EXPECTED_MAP),
        },
    };
    fm.keys.extend(pairs.iter().map(|(key, value)| KeyEntry {
        key: Spanned::new(cx.key_text(key), key.range.clone()),
        value_range: value.range.clone(),
    }));
    let mut seen: Vec<&str> = Vec::new();
    let at_key = |key: &Node| key.range.clone();
    cx.known_keys(
        pairs,
        KNOWN_KEYS,
        FieldPlace::TopLevel,
        at_key,
        |cx, known, value| {
            seen.push(known);
            match known {
                "name" => fm.name = name(cx, value),
                "description" => fm.description = description(cx, value),
                "promptforge" => fm.version = version(cx, value),
                "plugins" => plugins::validate(cx, value, fm),
                "tools" => tools::validate(cx, value, fm),
                "models" => models::validate(cx, value, fm),
                _ => fm.max_tool_iterations = max_tool_iterations(cx, value),
            }
        },
    );
    for required in REQUIRED_KEYS {
        if !seen.contains(required) {
            cx.error(
                Code::MissingField {
                    key: (*required).to_owned(),
                },
                opening.clone(),
            );
        }
    }
    tools::check_against_labels(cx, fm);
    tools::check_optional_plugins(cx, fm);
}

fn name(cx: &mut Cx<'_>, node: &Node) -> Option<Spanned<String>> {
    let text = string(cx, node)?;
    if names::is_valid_prompt_name(text) {
        Some(Spanned::new(text.to_owned(), node.range.clone()))
    } else {
        cx.error(
            Code::InvalidPromptName {
                name: text.to_owned(),
            },
            node.range.clone(),
        );
        None
    }
}

fn description(cx: &mut Cx<'_>, node: &Node) -> Option<Spanned<String>> {
    let text = string(cx, node)?;
    if text.trim().is_empty() {
        cx.error(Code::EmptyDescription, node.range.clone());
        None
    } else {
        Some(Spanned::new(text.to_owned(), node.range.clone()))
    }
}

/// `promptforge:`: any integer is kept; one other than 0 is a Version error.
fn version(cx: &mut Cx<'_>, node: &Node) -> Option<Spanned<i64>> {
    let n = integer(cx, node)?;
    if n != 0 {
        cx.error(
            Code::UnsupportedVersion {
                version: n.to_string(),
            },
            node.range.clone(),
        );
    }
    i64::try_from(n)
        .ok()
        .map(|n| Spanned::new(n, node.range.clone()))
}

fn max_tool_iterations(cx: &mut Cx<'_>, node: &Node) -> Option<Spanned<u32>> {
    let n = integer(cx, node)?;
    match u32::try_from(n) {
        Ok(n) if (1..=1000).contains(&n) => Some(Spanned::new(n, node.range.clone())),
        _ => {
            cx.error(
                Code::MaxToolIterationsOutOfRange {
                    value: n.to_string(),
                },
                node.range.clone(),
            );
            None
        }
    }
}
