//! A problem as the output formats print it: the file's path, the kind, the
//! message and every position already converted from the library's byte ranges.

use std::ops::Range;

use promptforge_engine::RunError;
use promptforge_syntax::{ColumnUnit, Diagnostic, LineCol, LineIndex, Severity};

/// Why a file could not be checked when its parser panicked.
pub const INTERNAL_ERROR: &str = "internal error: the parser failed on this file; please report it";

/// Where a problem (or a place related to it) is, in every unit a format needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Byte range in the file's text.
    pub bytes: Range<usize>,
    /// Start of the range, LSP-style (0-based, UTF-16 columns).
    pub start: LineCol,
    /// End of the range, LSP-style.
    pub end: LineCol,
}

/// Another place a problem involves (the first declaration of a Plugin, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedPlace {
    /// What the other place is.
    pub message: String,
    /// Where it is.
    pub span: Span,
}

/// One edit of a fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOut {
    /// Where it replaces.
    pub span: Span,
    /// The new text.
    pub new_text: String,
}

/// A fix a problem offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixOut {
    /// What the fix does.
    pub title: String,
    /// Its edits.
    pub edits: Vec<EditOut>,
}

/// One problem of one file, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file's path as reached from the command line's argument.
    pub path: String,
    /// The code printed in `error[Code]` (the parse kind for a parse problem), the
    /// same the language server publishes.
    pub kind: &'static str,
    /// Error or warning.
    pub severity: Severity,
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
    /// The fixes it offers.
    pub fixes: Vec<FixOut>,
}

impl Span {
    /// The span of `bytes` in `text` (clamped to the text by the line index).
    pub fn new(text: &str, index: &LineIndex, bytes: Range<usize>) -> Self {
        Span {
            start: index.line_col_in(text, bytes.start, ColumnUnit::Utf16),
            end: index.line_col_in(text, bytes.end, ColumnUnit::Utf16),
            bytes,
        }
    }

    /// The empty span at the start of a file.
    fn file_start() -> Self {
        let origin = LineCol::default();
        Span {
            bytes: 0..0,
            start: origin,
            end: origin,
        }
    }
}

impl Problem {
    /// A path named on the command line that cannot be used (kind `Usage`, no
    /// position): what `check --format json` lists with the problems.
    pub fn usage(path: &str, reason: &str) -> Self {
        Problem {
            path: path.to_owned(),
            kind: "Usage",
            severity: Severity::Error,
            message: reason.to_owned(),
            position: None,
            span: Span::file_start(),
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// The problem a diagnostic of `text` describes.
    pub fn from_diagnostic(path: &str, text: &str, index: &LineIndex, diag: &Diagnostic) -> Self {
        Self::from_owned_diagnostic(path, text, index, diag.clone())
    }

    /// Like [`Problem::from_diagnostic`], its texts moved out of `diag` instead of
    /// copied (`check` of a large prompt holds tens of thousands).
    pub fn from_owned_diagnostic(
        path: &str,
        text: &str,
        index: &LineIndex,
        diag: Diagnostic,
    ) -> Self {
        let position = diag.located.then(|| index.position(text, diag.offset));
        Problem {
            path: path.to_owned(),
            kind: diag.code.name(),
            severity: diag.severity,
            message: diag.message,
            position,
            span: Span::new(text, index, diag.range),
            related: diag
                .related
                .into_iter()
                .map(|related| RelatedPlace {
                    message: related.message,
                    span: Span::new(text, index, related.range),
                })
                .collect(),
            fixes: diag
                .fixes
                .into_iter()
                .map(|fix| FixOut {
                    title: fix.title,
                    edits: fix
                        .edits
                        .into_iter()
                        .map(|edit| EditOut {
                            span: Span::new(text, index, edit.range),
                            new_text: edit.new_text,
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// The RequirementsUnmet refusal (`error`, the run's notice, unlocated) standing
    /// for the diagnostics `grouped` that refuse the run: each becomes one of its
    /// related places, with its own message, and its fixes become the refusal's.
    pub fn refusal(
        path: &str,
        text: &str,
        index: &LineIndex,
        error: &RunError,
        grouped: &[&Diagnostic],
    ) -> Self {
        let mut problem = Problem::from_prepare(path, text, index, error);
        for diag in grouped {
            let one = Problem::from_diagnostic(path, text, index, diag);
            problem.related.push(RelatedPlace {
                message: one.message,
                span: one.span,
            });
            problem.fixes.extend(one.fixes);
        }
        problem
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
            severity: Severity::Error,
            message: error.message.clone(),
            position,
            span,
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// The problem a run error is, for its printed line (no range: a run error
    /// knows its line and column only).
    pub fn of_run_error(path: &str, error: &RunError) -> Self {
        Problem {
            path: path.to_owned(),
            kind: error.kind.as_str(),
            severity: Severity::Error,
            message: error.message.clone(),
            position: error.position.map(|p| (p.line, p.column)),
            span: Span::file_start(),
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// An error of `path` with no place in it (a test file whose Host configuration
    /// cannot be read).
    pub fn unlocated(path: &str, kind: &'static str, message: String) -> Self {
        Problem {
            path: path.to_owned(),
            kind,
            severity: Severity::Error,
            message,
            position: None,
            span: Span::file_start(),
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// The problems of a file named on the command line whose text is not a
    /// prompt: the syntax crate's verdict
    /// ([`promptforge_syntax::Analysis::not_a_prompt_diagnostics`]), the one the
    /// language server shows for a document that stays a prompt.
    pub fn not_a_prompt(path: &str, text: &str) -> Vec<Self> {
        let analysis = promptforge_luacheck::parse(text);
        analysis
            .not_a_prompt_diagnostics(text)
            .iter()
            .map(|diag| Problem::from_diagnostic(path, text, &analysis.line_index, diag))
            .collect()
    }
}
