//! A problem as the output formats print it: the file's path, the kind, the
//! message and every position already converted from the library's byte ranges.

use std::ops::Range;

use promptforge_engine::RunError;
use promptforge_syntax::{Diagnostic, LineCol, LineIndex, ParseKind, NOT_A_PROMPT};

/// A 0-based line and a column in UTF-16 code units (LSP's `Position`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utf16Position {
    /// 0-based line.
    pub line: u32,
    /// 0-based column in UTF-16 code units.
    pub character: u32,
}

/// Where a problem (or a place related to it) is, in every unit a format needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Byte range in the file's text.
    pub bytes: Range<usize>,
    /// Start of the range, LSP-style.
    pub start: Utf16Position,
    /// End of the range, LSP-style.
    pub end: Utf16Position,
}

/// Another place a problem involves (the first declaration of a Plugin, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedPlace {
    /// What the other place is.
    pub message: String,
    /// Where it is.
    pub span: Span,
}

/// One problem of one file, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file's path as reached from the command line's argument.
    pub path: String,
    /// The kind printed in `error[Kind]`.
    pub kind: &'static str,
    /// The exact message; it may span several lines.
    pub message: String,
    /// 1-based line and column (in characters) of the place the spec reports (for a
    /// name error, the scalar's first character even when the range is one
    /// segment), or None where the spec prints none.
    pub position: Option<(u32, u32)>,
    /// The range the problem covers.
    pub span: Span,
    /// Other places the problem involves.
    pub related: Vec<RelatedPlace>,
}

impl Span {
    /// The span of `bytes` in `text` (clamped to the text by the line index).
    pub fn new(text: &str, index: &LineIndex, bytes: Range<usize>) -> Self {
        let start = index.line_col_utf16(text, bytes.start);
        let end = index.line_col_utf16(text, bytes.end);
        Span {
            bytes,
            start: Utf16Position {
                line: start.line,
                character: start.col,
            },
            end: Utf16Position {
                line: end.line,
                character: end.col,
            },
        }
    }

    /// The empty span at the start of a file.
    fn file_start() -> Self {
        let origin = Utf16Position {
            line: 0,
            character: 0,
        };
        Span {
            bytes: 0..0,
            start: origin,
            end: origin,
        }
    }
}

impl Problem {
    /// The problem a diagnostic of `text` describes.
    pub fn from_diagnostic(path: &str, text: &str, index: &LineIndex, diag: &Diagnostic) -> Self {
        let position = diag.located.then(|| index.position(text, diag.offset));
        Problem {
            path: path.to_owned(),
            kind: diag.kind.as_str(),
            message: diag.message.clone(),
            position,
            span: Span::new(text, index, diag.range.clone()),
            related: diag
                .related
                .iter()
                .map(|related| RelatedPlace {
                    message: related.message.clone(),
                    span: Span::new(text, index, related.range.clone()),
                })
                .collect(),
        }
    }

    /// The problem prepare found (a RequirementsUnmet notice, a label that cannot be
    /// bound): its range is empty, at its position (or the file's start when it has none).
    pub fn from_prepare(path: &str, text: &str, index: &LineIndex, error: &RunError) -> Self {
        let position = error.position.map(|p| (p.line, p.column));
        let span = match error.position {
            Some(p) => {
                let offset = index.offset(
                    text,
                    LineCol {
                        line: p.line.saturating_sub(1),
                        col: p.column.saturating_sub(1),
                    },
                );
                Span::new(text, index, offset..offset)
            }
            None => Span::file_start(),
        };
        Problem {
            path: path.to_owned(),
            kind: error.kind.as_str(),
            message: error.message.clone(),
            position,
            span,
            related: Vec::new(),
        }
    }

    /// The problem of a file named on the command line that is not a prompt.
    pub fn not_a_prompt(path: &str) -> Self {
        Problem {
            path: path.to_owned(),
            kind: ParseKind::Version.as_str(),
            message: NOT_A_PROMPT.to_owned(),
            position: None,
            span: Span::file_start(),
            related: Vec::new(),
        }
    }
}
