//! `models:` (`language.md` §4): labels and their options `model`, `temperature`, `max_tokens`.

use std::collections::HashSet;

use super::messages::{EXPECTED_MAP, EXPECTED_NUMBER};
use super::model::{Frontmatter, ModelDecl, Spanned};
use super::scalars::{integer, string};
use super::tools::{check_name_key, KeyCheck};
use super::values::{resolve, Value};
use super::yaml::Node;
use super::Cx;
use crate::diagnostic::{Code, FieldPlace};

/// The option keys, in the order the unknown-field message lists them.
pub const OPTION_KEYS: &[&str] = &["model", "temperature", "max_tokens"];

/// Validates the `models:` value and fills `fm.models` with the valid labels in declaration
/// order (each with its valid options).
pub(crate) fn validate(cx: &mut Cx<'_>, node: &Node, fm: &mut Frontmatter) {
    let Value::Map(pairs) = resolve(node) else {
        return cx.type_error(node, EXPECTED_MAP);
    };
    let mut earlier: HashSet<String> = HashSet::new();
    for (key, value) in pairs {
        let label = cx.key_text(key);
        let check = check_name_key(cx, key, &label, &earlier);
        let decl = options(cx, Spanned::new(label.clone(), key.range.clone()), value);
        if check == KeyCheck::Valid {
            fm.models.push(decl);
        }
        if check != KeyCheck::Duplicate {
            earlier.insert(label);
        }
    }
}

/// A label's options: null means none; otherwise a map of known, single keys.
fn options(cx: &mut Cx<'_>, label: Spanned<String>, node: &Node) -> ModelDecl {
    let mut decl = ModelDecl {
        label,
        model: None,
        temperature: None,
        max_tokens: None,
        options_range: node.range.clone(),
    };
    let pairs = match resolve(node) {
        Value::Null => return decl,
        Value::Map(pairs) => pairs,
        _ => {
            cx.type_error(node, EXPECTED_MAP);
            return decl;
        }
    };
    let at_key = |key: &Node| key.range.clone();
    cx.known_keys(
        pairs,
        OPTION_KEYS,
        FieldPlace::ModelOption,
        at_key,
        |cx, known, value| {
            let range = value.range.clone();
            match known {
                "model" => {
                    decl.model = string(cx, value).map(|m| Spanned::new(m.to_owned(), range))
                }
                "temperature" => {
                    decl.temperature = temperature(cx, value).map(|t| Spanned::new(t, range))
                }
                _ => decl.max_tokens = max_tokens(cx, value).map(|n| Spanned::new(n, range)),
            }
        },
    );
    decl
}

/// A number from 0 to 2; an integer is accepted.
fn temperature(cx: &mut Cx<'_>, node: &Node) -> Option<f64> {
    let value = match resolve(node) {
        #[allow(clippy::cast_precision_loss)]
        Value::Int(n) => n as f64,
        Value::Float(f) => f,
        _ => {
            cx.type_error(node, EXPECTED_NUMBER);
            return None;
        }
    };
    if (0.0..=2.0).contains(&value) {
        Some(value)
    } else {
        let written = node.scalar().map_or_else(String::new, |s| s.value.clone());
        cx.error(
            Code::TemperatureOutOfRange { value: written },
            node.range.clone(),
        );
        None
    }
}

/// An integer of at least 1.
fn max_tokens(cx: &mut Cx<'_>, node: &Node) -> Option<u64> {
    let n = integer(cx, node)?;
    match u64::try_from(n) {
        Ok(n) if n >= 1 => Some(n),
        _ => {
            cx.error(
                Code::MaxTokensOutOfRange {
                    value: n.to_string(),
                },
                node.range.clone(),
            );
            None
        }
    }
}
