//! What the readers of a test file share: the text, the diagnostics, and the value
//! readers that report serde's type errors at the node.

use std::collections::HashMap;
use std::ops::Range;

use super::messages::RELATED_FIRST_WRITTEN;
use super::model::Spanned;
use super::problem::{Place, Problem};
use crate::diagnostic::{Code, Diagnostic};
use crate::frontmatter::values::{self, resolve, Value};
use crate::frontmatter::yaml::{Node, YamlError};

/// `{what}` of a string.
pub(super) const EXPECTED_STRING: &str = "a string";
/// `{what}` of a map.
pub(super) const EXPECTED_MAP: &str = "a map";
/// `{what}` of a sequence.
pub(super) const EXPECTED_SEQUENCE: &str = "a sequence";
/// `{what}` of a boolean.
pub(super) const EXPECTED_BOOLEAN: &str = "a boolean";
/// `{what}` of a count or seed.
pub(super) const EXPECTED_U64: &str = "u64";

/// The file text and the problems found so far.
pub(super) struct Cx<'a> {
    /// The whole file text.
    pub text: &'a str,
    /// Where problems go.
    pub diagnostics: Vec<Diagnostic>,
}

/// One pair of a free map whose key is a string.
pub(super) struct Entry<'n> {
    /// The key's text and range.
    pub name: Spanned<String>,
    /// The key node.
    pub key: &'n Node,
    /// The value node.
    pub value: &'n Node,
}

/// The known keys found in one map: each key's first pair, in file order.
pub(super) struct Fields<'n> {
    found: Vec<(&'static str, &'n Node, &'n Node)>,
}

impl<'n> Fields<'n> {
    /// The value of `key`, when written.
    pub fn value(&self, key: &str) -> Option<&'n Node> {
        self.pair(key).map(|(_, value)| value)
    }

    /// The key node of `key`, when written.
    pub fn key(&self, key: &str) -> Option<&'n Node> {
        self.pair(key).map(|(key, _)| key)
    }

    /// The key and value nodes of `key`, when written.
    pub fn pair(&self, key: &str) -> Option<(&'n Node, &'n Node)> {
        self.found
            .iter()
            .find(|(name, _, _)| *name == key)
            .map(|(_, key, value)| (*key, *value))
    }
}

impl<'a> Cx<'a> {
    /// A reader of `text`.
    pub fn new(text: &'a str) -> Self {
        Cx {
            text,
            diagnostics: Vec::new(),
        }
    }

    /// The diagnostics, by range start (ties keep their order).
    pub fn finish(mut self) -> Vec<Diagnostic> {
        self.diagnostics.sort_by_key(|d| d.range.start);
        self.diagnostics
    }

    /// A problem at `range`.
    pub fn error(&mut self, problem: Problem, range: Range<usize>) {
        self.push(Diagnostic::new(Code::TestFile(problem), range));
    }

    /// Any prepared diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// YAML that does not parse: from the byte the parser names to the end of its line.
    pub fn yaml_error(&mut self, error: YamlError, problem: fn(String) -> Problem) {
        let at = error.offset.min(self.text.len());
        let end = self.text.get(at..).map_or(at, |rest| {
            at + rest.find(['\n', '\r']).unwrap_or(rest.len())
        });
        self.error(problem(error.message), at..end);
    }

    /// serde's `invalid type: {found}, expected {what}` at `node`.
    pub fn type_error(&mut self, node: &Node, expected: &'static str) {
        let found = values::found(node);
        self.error(Problem::InvalidType { found, expected }, node.range.clone());
    }

    /// The text of a key for messages.
    pub fn key_text(&self, key: &Node) -> String {
        values::key_text(key, self.text)
    }

    /// The pairs of a map, or a type error (`expected a map`).
    pub fn map<'n>(&mut self, node: &'n Node) -> Option<&'n [(Node, Node)]> {
        match resolve(node) {
            Value::Map(pairs) => Some(pairs),
            _ => {
                self.type_error(node, EXPECTED_MAP);
                None
            }
        }
    }

    /// The items of a sequence, or a type error (`expected a sequence`).
    pub fn seq<'n>(&mut self, node: &'n Node) -> Option<&'n [Node]> {
        match resolve(node) {
            Value::Seq(items) => Some(items),
            _ => {
                self.type_error(node, EXPECTED_SEQUENCE);
                None
            }
        }
    }

    /// A string with where it was written, or a type error (`expected a string`).
    pub fn string(&mut self, node: &Node) -> Option<Spanned<String>> {
        match resolve(node) {
            Value::Str(s) => Some(Spanned::new(s.to_owned(), node.range.clone())),
            _ => {
                self.type_error(node, EXPECTED_STRING);
                None
            }
        }
    }

    /// A boolean, or a type error (`expected a boolean`).
    pub fn boolean(&mut self, node: &Node) -> Option<bool> {
        match resolve(node) {
            Value::Bool(b) => Some(b),
            _ => {
                self.type_error(node, EXPECTED_BOOLEAN);
                None
            }
        }
    }

    /// A `u64`: a negative integer is serde's invalid value, anything else not an
    /// integer its invalid type.
    pub fn unsigned(&mut self, node: &Node) -> Option<u64> {
        match resolve(node) {
            Value::Int(n) => match u64::try_from(n) {
                Ok(n) => Some(n),
                Err(_) => {
                    let problem = Problem::InvalidValue {
                        found: values::found(node),
                        expected: EXPECTED_U64,
                    };
                    self.error(problem, node.range.clone());
                    None
                }
            },
            _ => {
                self.type_error(node, EXPECTED_U64);
                None
            }
        }
    }

    /// The known keys of a map at `place`; an unknown key, or one written twice, is
    /// reported at the key (the second of two with the first as related place).
    pub fn fields<'n>(&mut self, pairs: &'n [(Node, Node)], place: Place) -> Fields<'n> {
        let mut fields = Fields { found: Vec::new() };
        for (key, value) in pairs {
            let text = self.key_text(key);
            let known = place.keys().iter().copied().find(|k| *k == text);
            let Some(known) = known.filter(|_| is_string_key(key)) else {
                let problem = Problem::UnknownField { place, key: text };
                self.error(problem, key.range.clone());
                continue;
            };
            match fields.key(known) {
                Some(first) => {
                    let problem = Problem::DuplicateField { key: text };
                    let diagnostic = Diagnostic::new(Code::TestFile(problem), key.range.clone())
                        .with_related(first.range.clone(), RELATED_FIRST_WRITTEN);
                    self.push(diagnostic);
                }
                None => fields.found.push((known, key, value)),
            }
        }
        fields
    }

    /// The pairs of a free map (store paths, tool paths, aliases): each key a string
    /// (else a type error at the key), one written twice reported and left out.
    pub fn entries<'n>(&mut self, node: &'n Node) -> Vec<Entry<'n>> {
        let Some(pairs) = self.map(node) else {
            return Vec::new();
        };
        let mut first: HashMap<String, Range<usize>> = HashMap::new();
        let mut out = Vec::new();
        for (key, value) in pairs {
            let Some(name) = self.string(key) else {
                continue;
            };
            if let Some(earlier) = first.get(&name.value) {
                let problem = Problem::DuplicateEntry {
                    key: name.value.clone(),
                };
                let diagnostic = Diagnostic::new(Code::TestFile(problem), key.range.clone())
                    .with_related(earlier.clone(), RELATED_FIRST_WRITTEN);
                self.push(diagnostic);
                continue;
            }
            first.insert(name.value.clone(), name.range.clone());
            out.push(Entry { name, key, value });
        }
        out
    }

    /// A map of string to string (`store:`), in file order.
    pub fn string_map(&mut self, node: &Node) -> Vec<(Spanned<String>, String)> {
        let entries = self.entries(node);
        entries
            .into_iter()
            .filter_map(|entry| Some((entry.name, self.string(entry.value)?.value)))
            .collect()
    }

    /// A sequence of strings.
    pub fn strings(&mut self, node: &Node) -> Vec<Spanned<String>> {
        let Some(items) = self.seq(node) else {
            return Vec::new();
        };
        items.iter().filter_map(|item| self.string(item)).collect()
    }

    /// A value as text: a string as written, anything else as compact JSON text (map
    /// keys in file order; a key written twice keeps its first value).
    pub fn json_text(&mut self, node: &Node) -> Option<String> {
        if let Value::Str(s) = resolve(node) {
            return Some(s.to_owned());
        }
        match serde_json::to_string(&values::to_serde(node)) {
            Ok(json) => Some(json),
            Err(error) => {
                let reason = error.to_string();
                self.error(Problem::NotJson { reason }, node.range.clone());
                None
            }
        }
    }
}

/// True when a map key is a string (not a number, boolean or null written bare).
fn is_string_key(key: &Node) -> bool {
    matches!(
        key.scalar().map(values::resolve_scalar),
        Some(Value::Str(_))
    )
}
