//! How a run's outcome is printed: the text format (the result alone on stdout,
//! the problem on stderr) and the JSON object.

use std::io::{self, Write};

use std::collections::BTreeMap;

use promptforge_engine::{Outcome, RunError};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The problem line of a run error: `path:line:col: error[Kind]: message`, as
/// `check` prints its problems (one printer, [`crate::output::text_line`]).
pub fn problem_line(path: &str, error: &RunError) -> String {
    crate::output::text_line(&crate::problem::Problem::of_run_error(path, error))
}

/// Writes the result alone, with a newline added when it does not end with one;
/// nothing for no result.
pub fn write_result(result: Option<&str>, out: &mut impl Write) -> io::Result<()> {
    if let Some(result) = result {
        out.write_all(result.as_bytes())?;
        if !result.ends_with('\n') {
            out.write_all(b"\n")?;
        }
    }
    out.flush()
}

/// The JSON object of `--format json`, its keys in the order `host.md` §4 lists them.
#[derive(Debug, Serialize)]
pub struct JsonOutcome<'a> {
    ok: bool,
    result: Option<&'a str>,
    error: Option<Value>,
    calls: &'a BTreeMap<String, u64>,
    log: &'a [String],
    duration_ms: u64,
}

/// The `error` of the JSON object: `kind`, `message` and, when there is a place,
/// `line` and `column`.
fn error_value(kind: &str, message: &str, position: Option<(u32, u32)>) -> Value {
    let mut object = Map::new();
    object.insert("kind".into(), json!(kind));
    object.insert("message".into(), json!(message));
    if let Some((line, column)) = position {
        object.insert("line".into(), json!(line));
        object.insert("column".into(), json!(column));
    }
    Value::Object(object)
}

/// The JSON object of `--format json`.
pub fn json_object(outcome: &Outcome) -> JsonOutcome<'_> {
    let error = outcome.error.as_ref().map(|error| {
        let position = error.position.map(|p| (p.line, p.column));
        error_value(error.kind.as_str(), &error.message, position)
    });
    JsonOutcome {
        ok: outcome.error.is_none(),
        result: outcome.result.as_deref(),
        error,
        calls: &outcome.calls,
        log: &outcome.log,
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
    }
}

/// No calls: what a refused run made.
static NO_CALLS: BTreeMap<String, u64> = BTreeMap::new();

/// The JSON object of a run refused before it started (a usage error, a file
/// that is not a prompt): the shape of a run's, `ok` false, with the refusal as
/// its `error`.
pub fn json_refusal(
    kind: &str,
    message: &str,
    position: Option<(u32, u32)>,
) -> JsonOutcome<'static> {
    JsonOutcome {
        ok: false,
        result: None,
        error: Some(error_value(kind, message, position)),
        calls: &NO_CALLS,
        log: &[],
        duration_ms: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptforge_engine::{Position, RunErrorKind};

    #[test]
    fn results_get_one_newline() {
        let mut out = Vec::new();
        write_result(Some("a"), &mut out).unwrap();
        write_result(Some("b\n"), &mut out).unwrap();
        write_result(None, &mut out).unwrap();
        assert_eq!(out, b"a\nb\n");
    }

    #[test]
    fn problem_lines() {
        let error =
            RunError::new(RunErrorKind::Lua, "boom").at(Some(Position { line: 3, column: 1 }));
        assert_eq!(problem_line("x.md", &error), "x.md:3:1: error[Lua]: boom");
        let error = RunError::new(RunErrorKind::RequirementsUnmet, "a\nb");
        assert_eq!(
            problem_line("x.md", &error),
            "x.md: error[RequirementsUnmet]: a\nb"
        );
    }
}
