//! One failed expectation of a case, and its text: the message, then the expected
//! and actual text (a line diff when either spans several lines). The CLI and the
//! language server print this one rendering.

use std::fmt::Write as _;
use std::ops::Range;

use similar::{ChangeTag, TextDiff};

/// One side of a comparison: a text, or the absence of one (`(no result)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A text, shown quoted.
    Text(String),
    /// No text, shown as the marker (`messages::NO_RESULT`, ...).
    Absent(&'static str),
}

impl Shown {
    /// The text, or the marker.
    pub fn as_str(&self) -> &str {
        match self {
            Shown::Text(text) => text,
            Shown::Absent(marker) => marker,
        }
    }

    fn body(&self) -> &str {
        match self {
            Shown::Text(text) => text,
            Shown::Absent(_) => "",
        }
    }

    fn quoted(&self) -> String {
        match self {
            Shown::Text(text) => serde_json::to_string(text).unwrap_or_else(|_| text.clone()),
            Shown::Absent(marker) => (*marker).to_owned(),
        }
    }
}

impl From<&str> for Shown {
    fn from(text: &str) -> Self {
        Shown::Text(text.to_owned())
    }
}

impl From<String> for Shown {
    fn from(text: String) -> Self {
        Shown::Text(text)
    }
}

impl From<Option<&str>> for Shown {
    /// A result: its text, or `(no result)`.
    fn from(text: Option<&str>) -> Self {
        text.map_or(Shown::Absent(super::messages::NO_RESULT), Shown::from)
    }
}

/// Why a case failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What failed, as written in the test file: `expect.result`, `expect.calls.search`,
    /// `tools`, `model`, `run`.
    pub what: String,
    /// The one-line verdict (`the result differs`, `unscripted call to ...`).
    pub message: String,
    /// The expected text, when the failure compares texts.
    pub expected: Option<Shown>,
    /// The actual text.
    pub actual: Option<Shown>,
    /// Where in the test file the failed expectation is written.
    pub range: Option<Range<usize>>,
    /// True when the texts should be equal (a diff shows where they differ); false
    /// when the expected text is a part, a pattern or a marker.
    pub exact: bool,
}

impl Failure {
    /// A failure without texts to compare.
    pub fn new(what: impl Into<String>, message: impl Into<String>) -> Self {
        Failure {
            what: what.into(),
            message: message.into(),
            expected: None,
            actual: None,
            range: None,
            exact: false,
        }
    }

    /// The same failure comparing `expected` with `actual`.
    pub fn comparing(mut self, expected: impl Into<Shown>, actual: impl Into<Shown>) -> Self {
        self.expected = Some(expected.into());
        self.actual = Some(actual.into());
        self
    }

    /// The same failure comparing texts that should be equal.
    pub fn equal(mut self, expected: impl Into<Shown>, actual: impl Into<Shown>) -> Self {
        self.exact = true;
        self.comparing(expected, actual)
    }

    /// The same failure, written at `range` of the test file.
    pub fn at(mut self, range: Option<Range<usize>>) -> Self {
        self.range = range;
        self
    }

    /// The failure as printed: `{what}: {message}`, then `expected:`/`actual:` lines
    /// (each text quoted as JSON, so blanks and line ends show), or, for texts that
    /// should be equal and span several lines, a diff (`-` expected, `+` actual,
    /// ` ` both).
    pub fn render(&self) -> String {
        let mut text = format!("{}: {}", self.what, self.message);
        let (Some(expected), Some(actual)) = (&self.expected, &self.actual) else {
            return text;
        };
        let several_lines = expected.body().contains('\n') || actual.body().contains('\n');
        if self.exact && several_lines {
            text.push_str("\n  diff (-expected +actual):");
            let diff = TextDiff::from_lines(expected.body(), actual.body());
            for change in diff.iter_all_changes() {
                let sign = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                let line = change.value();
                let shown = line.strip_suffix('\n').unwrap_or(line);
                let _ = write!(text, "\n  {sign} {shown}");
                if change.missing_newline() {
                    text.push_str("\n  \\ no newline at the end");
                }
            }
        } else {
            let _ = write!(
                text,
                "\n  expected: {}\n  actual:   {}",
                expected.quoted(),
                actual.quoted()
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_texts_show_expected_and_actual() {
        let failure =
            Failure::new("expect.result", "the result differs").equal("4 words", "5 words");
        assert_eq!(
            failure.render(),
            "expect.result: the result differs\n  expected: \"4 words\"\n  actual:   \"5 words\""
        );
        let none = Failure::new("expect.result", "the result differs").comparing("x", None::<&str>);
        assert!(none.render().ends_with("actual:   (no result)"));
    }

    #[test]
    fn texts_of_several_lines_show_a_diff() {
        let failure =
            Failure::new("expect.result", "the result differs").equal("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            failure.render(),
            "expect.result: the result differs\n  diff (-expected +actual):\n    a\n  - b\n  + B\n    c"
        );
    }
}
