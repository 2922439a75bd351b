//! The JSON format of `promptforge test`: one pretty-printed object,
//! `{"files": [{"file", "problems", "cases": [...]}], "passed", "failed", "skipped"}`.
//!
//! `problems` holds `check`'s JSON problem objects; each case is `name`, `status`
//! (`ok`, `failed`, `skipped`), `duration_ms`, `seed`, `runs` (a repeated live
//! case's `{passed, runs, needed}`; absent otherwise), `cache` (a live case
//! whose verdict rests on answers a cache gave: `{reused, answers}`; absent
//! otherwise) and `failures`, each failure
//! `what`, `message`, `expected` and `actual` (when it compares texts; null for an
//! absent side such as no result), `line` and `column` (1-based, columns in
//! characters) and `text` (its rendering, as the text format prints it).
//!
//! With `--models`, a live case has one entry per model, in the order of the
//! flag, each with `model` (the Host model's name) and `runs` (its pass rate on
//! that model: `{1, 1, 1}` or `{0, 1, 1}` for a case run once): the table of the
//! text format, one cell per entry.

use std::io::{self, Write};

use serde::Serialize;

use crate::files::PathError;
use crate::output::json_object;
use crate::test::results::{millis, FileResult, Totals};

#[derive(Serialize)]
struct JsonFailure<'a> {
    what: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    actual: Option<Option<&'a str>>,
    line: u32,
    column: u32,
    text: String,
}

#[derive(Serialize)]
struct JsonCase<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    status: &'static str,
    duration_ms: u64,
    seed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<promptforge_engine::prompt_tests::repeats::PassRate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache: Option<promptforge_engine::prompt_tests::answer_cache::CacheUse>,
    failures: Vec<JsonFailure<'a>>,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    file: &'a str,
    problems: Vec<crate::output::JsonProblem<'a>>,
    cases: Vec<JsonCase<'a>>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    files: Vec<JsonFile<'a>>,
    passed: usize,
    failed: usize,
    skipped: usize,
    /// The paths named that could not be used (the others still ran).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    errors: Vec<JsonPathError<'a>>,
    /// Why nothing ran, when the command was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<JsonRefusal<'a>>,
}

#[derive(Serialize)]
struct JsonPathError<'a> {
    path: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonRefusal<'a> {
    kind: &'static str,
    message: &'a str,
}

/// A compared side: its text, or None (null) when absent.
fn side(shown: &promptforge_engine::prompt_tests::Shown) -> Option<&str> {
    match shown {
        promptforge_engine::prompt_tests::Shown::Text(text) => Some(text),
        promptforge_engine::prompt_tests::Shown::Absent(_) => None,
    }
}

fn file_object(file: &FileResult) -> JsonFile<'_> {
    JsonFile {
        file: &file.file,
        problems: file.problems.iter().map(json_object).collect(),
        cases: file
            .cases
            .iter()
            .map(|case| JsonCase {
                name: &case.name,
                model: case.model.as_deref(),
                status: case.status.as_str(),
                duration_ms: millis(case.duration),
                seed: case.seed,
                runs: match case.model {
                    Some(_) => case.pass_rate(),
                    None => case.runs,
                },
                cache: case.rests_on_cache().then_some(case.cache),
                failures: case
                    .failures
                    .iter()
                    .map(|placed| JsonFailure {
                        what: &placed.failure.what,
                        message: &placed.failure.message,
                        expected: placed.failure.expected.as_ref().map(side),
                        actual: placed.failure.actual.as_ref().map(side),
                        line: placed.position.0,
                        column: placed.position.1,
                        text: placed.failure.render(),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Writes the object and a newline; `errors` are the paths named that could
/// not be used.
pub fn write(files: &[FileResult], errors: &[PathError], out: &mut impl Write) -> io::Result<()> {
    let totals = Totals::of(files);
    let object = JsonRun {
        files: files.iter().map(file_object).collect(),
        passed: totals.passed,
        failed: totals.failed,
        skipped: totals.skipped,
        errors: errors
            .iter()
            .map(|e| JsonPathError {
                path: &e.path,
                message: &e.reason,
            })
            .collect(),
        error: None,
    };
    write_object(&object, out)
}

/// Writes the object of a command refused before any case ran (a usage error):
/// no files, and the refusal as its `error`, of kind `Usage`.
pub fn write_refusal(message: &str, out: &mut impl Write) -> io::Result<()> {
    let object = JsonRun {
        files: Vec::new(),
        passed: 0,
        failed: 0,
        skipped: 0,
        errors: Vec::new(),
        error: Some(JsonRefusal {
            kind: "Usage",
            message,
        }),
    };
    write_object(&object, out)
}

fn write_object(object: &JsonRun<'_>, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, object)?;
    writeln!(out)?;
    out.flush()
}
