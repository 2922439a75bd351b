//! `plugins:` (Tools chapter, "Declaring Plugins", "Entry errors", "Name errors"): both entry
//! forms, entry errors, the Plugin id grammar, and Plugins declared twice.

use std::collections::HashMap;
use std::ops::Range;

use super::messages::{
    self, EXPECTED_BOOLEAN, EXPECTED_PLUGIN_ENTRY, EXPECTED_PLUGIN_ID, EXPECTED_SEQUENCE,
};
use super::model::{Frontmatter, PluginDecl, Spanned};
use super::values::{resolve, to_serde, Value};
use super::yaml::Node;
use super::{names, Cx};
use crate::diagnostic::{Code, Diagnostic, FieldPlace};

/// The keys of the map form, in the order the unknown-field message lists them.
pub const ENTRY_KEYS: &[&str] = &["ref", "optional", "config"];

/// Validates the `plugins:` value and fills `fm.plugins` in declaration order.
pub(crate) fn validate(cx: &mut Cx<'_>, node: &Node, fm: &mut Frontmatter) {
    let Value::Seq(entries) = resolve(node) else {
        return cx.type_error(node, EXPECTED_SEQUENCE);
    };
    // Each valid id's first declaration, by index into `fm.plugins`.
    let mut first_declared: HashMap<String, usize> = HashMap::new();
    for entry in entries {
        let Some(decl) = declaration(cx, entry) else {
            continue;
        };
        let first = if decl.valid {
            first_declared
                .get(&decl.id.value)
                .and_then(|&i| fm.plugins.get(i))
        } else {
            None
        };
        match first {
            Some(first) => cx.push(
                Diagnostic::new(
                    Code::PluginDeclaredTwice {
                        id: decl.id.value.clone(),
                    },
                    decl.id.range.clone(),
                )
                .unlocated()
                .with_related(first.id.range.clone(), messages::RELATED_FIRST_DECLARED),
            ),
            None => {
                if decl.valid {
                    first_declared.insert(decl.id.value.clone(), fm.plugins.len());
                }
                fm.plugins.push(decl);
            }
        }
    }
}

/// One entry: a plain Plugin id, or a map with `ref`, `optional` and `config`.
fn declaration(cx: &mut Cx<'_>, entry: &Node) -> Option<PluginDecl> {
    match resolve(entry) {
        Value::Str(id) => Some(checked(cx, entry, id, entry.range.clone())),
        Value::Map(pairs) => map_entry(cx, entry, pairs),
        _ => {
            cx.type_error(entry, EXPECTED_PLUGIN_ENTRY);
            None
        }
    }
}

fn map_entry(cx: &mut Cx<'_>, entry: &Node, pairs: &[(Node, Node)]) -> Option<PluginDecl> {
    let mut fields: [Option<&Node>; 3] = [None, None, None];
    // Entry errors are placed at the entry's first character and run to the key.
    let at_entry = |key: &Node| entry.range.start..key.range.end.max(entry.range.start);
    cx.known_keys(
        pairs,
        ENTRY_KEYS,
        FieldPlace::PluginEntry,
        at_entry,
        |_, known, value| {
            let index = ENTRY_KEYS.iter().position(|k| *k == known);
            if let Some(slot) = index.and_then(|i| fields.get_mut(i)) {
                *slot = Some(value);
            }
        },
    );
    let [reference, optional, config] = fields;
    let optional = optional.and_then(|node| match resolve(node) {
        Value::Bool(b) => Some((b, node.range.clone())),
        _ => {
            cx.type_error(node, EXPECTED_BOOLEAN);
            None
        }
    });
    let Some(reference) = reference else {
        cx.error(
            Code::MissingField {
                key: "ref".to_owned(),
            },
            entry.range.clone(),
        );
        return None;
    };
    let Value::Str(id) = resolve(reference) else {
        cx.type_error(reference, EXPECTED_PLUGIN_ID);
        return None;
    };
    let mut decl = checked(cx, reference, id, entry.range.clone());
    if let Some((optional, range)) = optional {
        decl.optional = optional;
        decl.optional_range = Some(range);
    }
    decl.config = config.map(to_serde);
    Some(decl)
}

/// A declaration of `id` (held by `node`), with the id grammar checked.
fn checked(cx: &mut Cx<'_>, node: &Node, id: &str, entry_range: Range<usize>) -> PluginDecl {
    let valid = match names::check_plugin_id(id) {
        Ok(()) => true,
        Err(error) => {
            cx.name_error(node, id, error);
            false
        }
    };
    PluginDecl {
        id: Spanned::new(id.to_owned(), node.range.clone()),
        optional: false,
        optional_range: None,
        config: None,
        entry_range,
        valid,
    }
}
