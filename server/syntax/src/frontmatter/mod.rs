//! The frontmatter validator: the YAML text between the two `---` lines to the
//! [`Frontmatter`] model, with every problem of `language.md` §1.1-§1.3 and the Tools
//! chapter's parse-time rules as a [`Diagnostic`] with its exact message and byte range.
//!
//! One module per concept: `yaml` (the position-keeping parse over saphyr-parser), `spans`
//! (corrections of the parser's spans), `values` (core-schema resolution and serde's type
//! names), [`names`] (the name grammars), `keys` (the top level), `plugins`, `tools`,
//! `models`, and [`messages`] (every message text).

mod keys;
pub mod messages;
pub mod model;
mod models;
pub mod names;
mod plugins;
mod scalars;
mod spans;
mod tools;
pub(crate) mod values;
pub(crate) mod yaml;

#[cfg(test)]
mod tests;

pub use keys::{KNOWN_KEYS, REQUIRED_KEYS};
pub use model::*;
pub use models::OPTION_KEYS;
pub use plugins::ENTRY_KEYS;

use std::ops::Range;

use crate::diagnostic::{Code, Diagnostic, FieldPlace};
use names::NameError;
use yaml::Node;

/// Validates the YAML text between the two `---` lines. `text` is the whole file,
/// `yaml` the byte range of the YAML text inside it (from the first byte of the line after the
/// opening `---` to the first byte of the closing `---` line), `frontmatter` the byte range of
/// the whole frontmatter (opening `---` to the end of the closing `---` line). Every problem
/// goes to `diagnostics` (any order; the caller sorts by range start, stable). Returns the
/// model with every valid value.
pub fn validate(
    text: &str,
    yaml: Range<usize>,
    frontmatter: Range<usize>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Frontmatter {
    let mut model = Frontmatter {
        range: frontmatter.clone(),
        yaml_range: yaml.clone(),
        ..Frontmatter::default()
    };
    match yaml::parse(text, yaml.clone()) {
        Err(error) => {
            // From the byte the parser names to the end of its line; empty at the end of the YAML.
            let at = error.offset.min(yaml.end.max(yaml.start));
            let line_end = text.get(at..yaml.end).map_or(at, |rest| {
                at + rest.find(['\n', '\r']).unwrap_or(rest.len())
            });
            let range = at..line_end;
            diagnostics.push(Diagnostic::new(
                Code::InvalidYaml {
                    reason: error.message,
                },
                range,
            ));
        }
        Ok(root) => {
            let opening_end = (frontmatter.start + 3)
                .min(text.len())
                .max(frontmatter.start);
            let mut cx = Cx { text, diagnostics };
            keys::validate_root(
                &mut cx,
                root.as_ref(),
                &mut model,
                frontmatter.start..opening_end,
            );
        }
    }
    model
}

/// What the validators share: the file text and the diagnostics.
pub(crate) struct Cx<'a> {
    /// The whole file text.
    pub text: &'a str,
    /// Where problems go.
    pub diagnostics: &'a mut Vec<Diagnostic>,
}

impl Cx<'_> {
    /// A located diagnostic of `code`.
    pub fn error(&mut self, code: Code, range: Range<usize>) {
        self.diagnostics.push(Diagnostic::new(code, range));
    }

    /// Any prepared diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// serde's `invalid type: {found}, expected {what}` at `node`.
    pub fn type_error(&mut self, node: &Node, expected: &'static str) {
        let code = Code::InvalidType {
            found: values::found(node),
            expected,
        };
        self.error(code, node.range.clone());
    }

    /// A name error reported at the scalar holding the name (its quote, if quoted), with a
    /// range covering the segment the reason names (the whole scalar for a whole-name
    /// reason, or when the written text is not the value).
    pub fn name_error(&mut self, node: &Node, name: &str, error: NameError) {
        let whole = error.segment.start == 0 && error.segment.end == name.len();
        let range = match node.value_start() {
            Some(start) if !whole => start + error.segment.start..start + error.segment.end,
            _ => node.range.clone(),
        };
        let diagnostic = Diagnostic::new(error.code, range).reported_at(node.range.start);
        self.push(diagnostic);
    }

    /// The text of a key for messages.
    pub fn key_text(&self, key: &Node) -> String {
        values::key_text(key, self.text)
    }

    /// Walks the pairs of a map whose keys must be among `known`: a key that is not
    /// (or is not written as a string) is an UnknownField at `place`, a known key
    /// written again a DuplicateField, each placed at `range_of(key)` and skipped;
    /// `on_key` gets every other key (as its `known` spelling) with its value, in order.
    pub fn known_keys<'n>(
        &mut self,
        pairs: &'n [(Node, Node)],
        known: &[&'static str],
        place: FieldPlace,
        range_of: impl Fn(&Node) -> Range<usize>,
        mut on_key: impl FnMut(&mut Self, &'static str, &'n Node),
    ) {
        let mut seen: Vec<&str> = Vec::new();
        for (key, value) in pairs {
            let text = self.key_text(key);
            let found = known.iter().copied().find(|k| *k == text);
            let Some(found) = found.filter(|_| is_string_key(key)) else {
                self.error(Code::UnknownField { place, key: text }, range_of(key));
                continue;
            };
            if seen.contains(&found) {
                let duplicate = Code::DuplicateField {
                    key: found.to_owned(),
                };
                self.error(duplicate, range_of(key));
                continue;
            }
            seen.push(found);
            on_key(self, found, value);
        }
    }
}

/// True when a map key is a string (not a number, boolean or null written bare).
fn is_string_key(key: &Node) -> bool {
    {
        matches!(
            key.scalar().map(values::resolve_scalar),
            Some(values::Value::Str(_))
        )
    }
}

/// True when `yaml` (a frontmatter's text) parses and its top level is a map with a
/// string key `promptforge`: prompt detection reads the frontmatter with the same
/// YAML reader (1.2, saphyr) and the same key rule as validation.
pub fn has_top_level_key(yaml: &str, wanted: &str) -> bool {
    let Ok(Some(root)) = yaml::parse(yaml, 0..yaml.len()) else {
        return false;
    };
    match values::resolve(&root) {
        values::Value::Map(pairs) => pairs
            .iter()
            .any(|(key, _)| is_string_key(key) && values::key_text(key, yaml) == wanted),
        _ => false,
    }
}

/// (The frontmatter owns the lists of its keys.)
impl crate::diagnostic::FieldPlace {
    /// The keys allowed at this place.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            crate::diagnostic::FieldPlace::TopLevel => KNOWN_KEYS,
            crate::diagnostic::FieldPlace::PluginEntry => messages::PLUGIN_FIELDS,
            crate::diagnostic::FieldPlace::ModelOption => messages::MODEL_OPTIONS,
        }
    }
}
