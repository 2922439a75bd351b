//! Diagnostics: what the parse reports, with the kind, exact message and byte range.

use std::fmt;
use std::ops::Range;

/// The parse error kinds of `language.md` §3.3 ("Parse (with the parse kind ...)").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParseKind {
    /// The frontmatter: its presence, YAML, keys, values and names.
    Frontmatter,
    /// The `promptforge:` version, and a Markdown file that is not a prompt.
    Version,
    /// The body: the H1, heading levels, duplicate sections, block placement.
    Structure,
    /// A Lua syntax error in an executable block.
    Lua,
}

impl ParseKind {
    /// The kind's name as printed in `error[Kind]` and used as the LSP `code`.
    pub fn as_str(self) -> &'static str {
        match self {
            ParseKind::Frontmatter => "Frontmatter",
            ParseKind::Version => "Version",
            ParseKind::Structure => "Structure",
            ParseKind::Lua => "Lua",
        }
    }
}

impl fmt::Display for ParseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A second place a two-place problem points at (the first declaration of a Plugin, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// Byte range of the other place in the file text.
    pub range: Range<usize>,
    /// What the other place is, for the editor.
    pub message: String,
}

/// One problem found by the parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The parse kind.
    pub kind: ParseKind,
    /// The exact message of the spec.
    pub message: String,
    /// Byte range in the file text the problem covers (the segment, alias, entry,
    /// key or value), for the editor.
    pub range: Range<usize>,
    /// Byte offset that `line:column` reports: the range's start, except for a name
    /// error naming a segment, which is reported at its scalar's first character.
    pub offset: usize,
    /// False for the messages the spec prints without `line:column` (a Plugin
    /// declared twice, a slot backed by an optional Plugin); the range still
    /// places them for the editor.
    pub located: bool,
    /// Other places the problem involves.
    pub related: Vec<Related>,
}

impl Diagnostic {
    /// A located diagnostic with no related places.
    pub fn new(kind: ParseKind, message: impl Into<String>, range: Range<usize>) -> Self {
        Diagnostic {
            kind,
            message: message.into(),
            offset: range.start,
            range,
            located: true,
            related: Vec::new(),
        }
    }

    /// Reports the diagnostic at `offset` while its range stays as it is.
    pub fn reported_at(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// Marks the diagnostic as printed without `line:column`.
    pub fn unlocated(mut self) -> Self {
        self.located = false;
        self
    }

    /// Adds a related place.
    pub fn with_related(mut self, range: Range<usize>, message: impl Into<String>) -> Self {
        self.related.push(Related {
            range,
            message: message.into(),
        });
        self
    }
}

/// Puts diagnostics in document order (by reported offset; ties keep their order).
pub fn sort_in_document_order(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| d.offset);
}
