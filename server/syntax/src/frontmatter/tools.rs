//! `tools:` (Tools chapter, "Tool slots and Tool objects"): aliases, tool paths, and the two
//! cross-key rules (a name both an alias and a label; a slot backed by an optional Plugin).

use std::collections::{HashMap, HashSet};

use super::messages::{self, EXPECTED_MAP, EXPECTED_TOOL_PATH};
use super::model::{Frontmatter, ModelDecl, PluginDecl, Spanned, ToolSlot};
use super::values::{resolve, Value};
use super::yaml::Node;
use super::{names, Cx};
use crate::diagnostic::{Code, Diagnostic};

/// How an alias or model label key fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyCheck {
    /// A valid, first-written name.
    Valid,
    /// Broke the grammar or is reserved (reported).
    Invalid,
    /// Written before in the same map (reported).
    Duplicate,
}

/// Checks an alias or model label key, in order: grammar, reserved name, duplicate.
pub(crate) fn check_name_key(
    cx: &mut Cx<'_>,
    key: &Node,
    name: &str,
    earlier: &HashSet<String>,
) -> KeyCheck {
    if !names::is_valid_alias(name) {
        cx.error(
            Code::InvalidAliasKey {
                alias: name.to_owned(),
            },
            key.range.clone(),
        );
        KeyCheck::Invalid
    } else if names::is_reserved(name) {
        cx.error(
            Code::ReservedName {
                name: name.to_owned(),
            },
            key.range.clone(),
        );
        KeyCheck::Invalid
    } else if earlier.contains(name) {
        cx.error(
            Code::DuplicateField {
                key: name.to_owned(),
            },
            key.range.clone(),
        );
        KeyCheck::Duplicate
    } else {
        KeyCheck::Valid
    }
}

/// Validates the `tools:` value and fills `fm.tools` in declaration order (a duplicate alias
/// is reported and left out; its first slot is the one used).
pub(crate) fn validate(cx: &mut Cx<'_>, node: &Node, fm: &mut Frontmatter) {
    let Value::Map(pairs) = resolve(node) else {
        return cx.type_error(node, EXPECTED_MAP);
    };
    let mut earlier: HashSet<String> = HashSet::new();
    for (key, value) in pairs {
        let alias = cx.key_text(key);
        let check = check_name_key(cx, key, &alias, &earlier);
        let path = match resolve(value) {
            Value::Str(path) => Some(path),
            _ => {
                cx.type_error(value, EXPECTED_TOOL_PATH);
                None
            }
        };
        let path_valid = match path.map(names::check_tool_path) {
            Some(Ok(())) => true,
            Some(Err(error)) => {
                cx.name_error(value, path.unwrap_or_default(), error);
                false
            }
            None => false,
        };
        if check == KeyCheck::Duplicate {
            continue;
        }
        fm.tools.push(ToolSlot {
            alias: Spanned::new(alias.clone(), key.range.clone()),
            path: path.map(|p| Spanned::new(p.to_owned(), value.range.clone())),
            valid: check == KeyCheck::Valid && path_valid,
        });
        earlier.insert(alias);
    }
}

/// True when a slot's alias passed its own checks (the grammar and the reserved names).
fn alias_valid(slot: &ToolSlot) -> bool {
    names::is_valid_alias(&slot.alias.value) && !names::is_reserved(&slot.alias.value)
}

/// A name that is both a tool alias and a model label: reported at the later of its two keys,
/// and that later declaration is dropped (the slot marked invalid, or the label removed).
pub(crate) fn check_against_labels(cx: &mut Cx<'_>, fm: &mut Frontmatter) {
    let labels: HashMap<&str, &ModelDecl> = fm
        .models
        .iter()
        .map(|m| (m.label.value.as_str(), m))
        .collect();
    let mut dropped_labels: HashSet<String> = HashSet::new();
    for slot in fm.tools.iter_mut().filter(|s| alias_valid(s)) {
        let Some(label) = labels.get(slot.alias.value.as_str()) else {
            continue;
        };
        let (later, earlier) = if slot.alias.range.start > label.label.range.start {
            slot.valid = false;
            (&slot.alias, &label.label)
        } else {
            dropped_labels.insert(label.label.value.clone());
            (&label.label, &slot.alias)
        };
        cx.push(
            Diagnostic::new(
                Code::AliasAndLabel {
                    name: later.value.clone(),
                },
                later.range.clone(),
            )
            .with_related(earlier.range.clone(), messages::RELATED_OTHER_KEY),
        );
    }
    fm.models
        .retain(|m| !dropped_labels.contains(&m.label.value));
}

/// The optional-Plugin rule: among valid slots whose Plugin's first declaration is
/// `optional: true`, the one whose alias sorts first bytewise gets the one diagnostic.
pub(crate) fn check_optional_plugins(cx: &mut Cx<'_>, fm: &Frontmatter) {
    let optional: HashMap<&str, &PluginDecl> = fm
        .plugins
        .iter()
        .filter(|d| d.valid && d.optional)
        .map(|d| (d.id.value.as_str(), d))
        .collect();
    let first = fm
        .tools
        .iter()
        .filter(|slot| slot.valid)
        .filter_map(|slot| Some((slot, *optional.get(slot.plugin_id()?)?)))
        .min_by(|a, b| a.0.alias.value.as_bytes().cmp(b.0.alias.value.as_bytes()));
    let Some((slot, decl)) = first else { return };
    let path = slot.path.as_ref().map_or("", |p| p.value.as_str());
    cx.push(
        Diagnostic::new(
            Code::SlotNeedsRequiredPlugin {
                alias: slot.alias.value.clone(),
                path: path.to_owned(),
                id: decl.id.value.clone(),
            },
            slot.alias.range.clone(),
        )
        .unlocated()
        .with_related(decl.id.range.clone(), messages::RELATED_DECLARED_OPTIONAL),
    );
}
