//! Tests of the frontmatter validator, written from the sentences of `language.md` §1 and the
//! Tools chapter. Each builds a whole file, validates its frontmatter, and checks the exact
//! message, the 1-based `line:column` and the byte range of every diagnostic.

mod entries;
mod positions;
mod slots;
mod top_level;

use std::ops::Range;

use super::{validate, Frontmatter};
use crate::diagnostic::{Diagnostic, ParseKind};

/// A validated file: its text, model and diagnostics (sorted in document order).
pub(super) struct Checked {
    pub text: String,
    pub fm: Frontmatter,
    pub diags: Vec<Diagnostic>,
}

/// Validates `---\n{yaml}---\n\n# T\n`.
pub(super) fn check(yaml: &str) -> Checked {
    check_with_newline(yaml, "\n")
}

/// Validates a file whose `---` lines end with `nl` (`yaml` must use the same line ends).
pub(super) fn check_with_newline(yaml: &str, nl: &str) -> Checked {
    let text = format!("---{nl}{yaml}---{nl}{nl}# T{nl}");
    let yaml_range = 3 + nl.len()..3 + nl.len() + yaml.len();
    let fm_range = 0..yaml_range.end + 3 + nl.len();
    let mut diags = Vec::new();
    let fm = validate(&text, yaml_range, fm_range, &mut diags);
    crate::diagnostic::sort_in_document_order(&mut diags);
    Checked { text, fm, diags }
}

/// The 1-based line and column (in Unicode scalar values) of a byte offset; CRLF is one line end.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let mut line = 1;
    let mut line_start = 0;
    let bytes = before.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        let ends = *b == b'\n' || (*b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
        if ends {
            line += 1;
            line_start = i + 1;
        }
    }
    (line, before[line_start..].chars().count() + 1)
}

impl Checked {
    /// The messages, in document order.
    pub fn messages(&self) -> Vec<&str> {
        self.diags.iter().map(|d| d.message.as_str()).collect()
    }

    /// Asserts there is no diagnostic.
    pub fn assert_clean(&self) {
        assert!(
            self.diags.is_empty(),
            "unexpected diagnostics: {:#?}",
            self.diags
        );
    }

    /// Asserts exactly one diagnostic, with this message, position and covered text.
    pub fn assert_one(&self, message: &str, at: (usize, usize), covers: &str) -> &Diagnostic {
        assert_eq!(
            self.diags.len(),
            1,
            "expected one diagnostic: {:#?}",
            self.diags
        );
        self.assert_diag(0, message, at, covers)
    }

    /// Asserts diagnostic `i` (in document order): message, kind Frontmatter unless Version,
    /// `line:column` of its start, and the text its range covers.
    pub fn assert_diag(
        &self,
        i: usize,
        message: &str,
        at: (usize, usize),
        covers: &str,
    ) -> &Diagnostic {
        let d = &self.diags[i];
        assert_eq!(d.message, message);
        assert_eq!(
            line_col(&self.text, d.offset),
            at,
            "position of {message:?}"
        );
        assert_eq!(&self.text[d.range.clone()], covers, "range of {message:?}");
        d
    }

    /// The byte range of the `n`th (0-based) occurrence of `needle` in the text.
    pub fn find(&self, needle: &str, n: usize) -> Range<usize> {
        let start = self
            .text
            .match_indices(needle)
            .nth(n)
            .map(|(i, _)| i)
            .expect("needle");
        start..start + needle.len()
    }
}

/// Asserts a diagnostic's kind.
pub(super) fn assert_kind(d: &Diagnostic, kind: ParseKind) {
    assert_eq!(d.parse_kind(), Some(kind), "kind of {:?}", d.message);
}
