//! The JSON format: one pretty-printed array of problem objects.
//!
//! Each object: `path`, `line` and `column` (1-based, columns in characters; null
//! when the problem has no position), `kind`, `code` (the stable code the language
//! server publishes; for a parse problem its kind), `severity` (`error`,
//! `warning` or `info`), `message`, `range` (LSP-style: 0-based lines, UTF-16 code units),
//! `byteRange` (bytes in the file), `related` (`message`, `range`, `byteRange` of
//! each other place) and `fixes` (`title`, and `edits` with `range`, `byteRange`
//! and `newText`).

use std::io::{self, Write};

use serde::Serialize;

use promptforge_syntax::LineCol;

use crate::problem::{Problem, Span};

#[derive(Serialize)]
struct JsonPosition {
    line: u32,
    character: u32,
}

#[derive(Serialize)]
struct JsonRange {
    start: JsonPosition,
    end: JsonPosition,
}

#[derive(Serialize)]
struct JsonByteRange {
    start: usize,
    end: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonRelated<'a> {
    message: &'a str,
    range: JsonRange,
    byte_range: JsonByteRange,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonEdit<'a> {
    range: JsonRange,
    byte_range: JsonByteRange,
    new_text: &'a str,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    edits: Vec<JsonEdit<'a>>,
}

/// One problem's JSON object.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonProblem<'a> {
    path: &'a str,
    line: Option<u32>,
    column: Option<u32>,
    kind: &'a str,
    code: &'a str,
    severity: &'a str,
    message: &'a str,
    range: JsonRange,
    byte_range: JsonByteRange,
    related: Vec<JsonRelated<'a>>,
    fixes: Vec<JsonFix<'a>>,
}

fn position(p: LineCol) -> JsonPosition {
    JsonPosition {
        line: p.line,
        character: p.col,
    }
}

fn range(span: &Span) -> JsonRange {
    JsonRange {
        start: position(span.start),
        end: position(span.end),
    }
}

fn byte_range(span: &Span) -> JsonByteRange {
    JsonByteRange {
        start: span.bytes.start,
        end: span.bytes.end,
    }
}

/// The JSON object of one problem (also inside `test --format json`).
pub fn object(problem: &Problem) -> JsonProblem<'_> {
    JsonProblem {
        path: &problem.path,
        line: problem.position.map(|(line, _)| line),
        column: problem.position.map(|(_, column)| column),
        kind: problem.kind,
        code: problem.kind,
        severity: problem.severity.as_str(),
        message: &problem.message,
        range: range(&problem.span),
        byte_range: byte_range(&problem.span),
        related: problem
            .related
            .iter()
            .map(|related| JsonRelated {
                message: &related.message,
                range: range(&related.span),
                byte_range: byte_range(&related.span),
            })
            .collect(),
        fixes: problem
            .fixes
            .iter()
            .map(|fix| JsonFix {
                title: &fix.title,
                edits: fix
                    .edits
                    .iter()
                    .map(|edit| JsonEdit {
                        range: range(&edit.span),
                        byte_range: byte_range(&edit.span),
                        new_text: &edit.new_text,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Writes every problem as one JSON array (`[]` when there is none) and a newline.
pub fn write(problems: &[Problem], out: &mut impl Write) -> io::Result<()> {
    let objects: Vec<JsonProblem<'_>> = problems.iter().map(object).collect();
    serde_json::to_writer_pretty(&mut *out, &objects)?;
    writeln!(out)
}
