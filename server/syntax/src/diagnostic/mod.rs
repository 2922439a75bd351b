//! Diagnostics: one type for every problem of the workspace (the parse, the static
//! checks, prepare against a catalog), made where the rule lives: its [`Code`] with
//! the facts it found, a severity, the exact byte range, related places, the message
//! built from the code, and the fixes that apply.

pub mod code;
pub mod test_file_rules;

use std::fmt;
use std::ops::Range;

pub use code::{Code, FieldPlace, ScopeFunction, Severity, CODE_NAMES};

/// The parse error kinds of `language.md` §3.3 ("Parse (with the parse kind ...)").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParseKind {
    /// The frontmatter: its presence, YAML, keys, values and names.
    Frontmatter,
    /// The `promptforge:` version, and a Markdown file that is not a prompt.
    Version,
    /// The body: the H1, heading levels and titles, duplicate sections, blocks
    /// never closed, block placement.
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

/// One replacement in the file text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TextEdit {
    /// Byte range of the text replaced.
    pub range: Range<usize>,
    /// The new text.
    pub new_text: String,
}

/// A fix a diagnostic offers: a title for the editor's menu and the edits it makes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fix {
    /// What the fix does, as a menu entry.
    pub title: String,
    /// The edits, in the file's text.
    pub edits: Vec<TextEdit>,
}

/// One problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule and what it found.
    pub code: Code,
    /// How serious it is (the rule's severity).
    pub severity: Severity,
    /// The exact message of the spec, built from the code.
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
    /// The fixes that apply (filled by the semantic layer, which sees the text).
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    /// A located diagnostic of `code` with no related places.
    pub fn new(code: Code, range: Range<usize>) -> Self {
        Diagnostic {
            severity: code.severity(),
            message: code.message(),
            code,
            offset: range.start,
            range,
            located: true,
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// The parse kind, for a parse diagnostic.
    pub fn parse_kind(&self) -> Option<ParseKind> {
        self.code.parse_kind()
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
