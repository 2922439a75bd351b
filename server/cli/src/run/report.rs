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

/// The JSON object of `--format json`.
pub fn json_object(outcome: &Outcome) -> JsonOutcome<'_> {
    let error = outcome.error.as_ref().map(|error| {
        let mut object = Map::new();
        object.insert("kind".into(), json!(error.kind.as_str()));
        object.insert("message".into(), json!(error.message));
        if let Some(position) = error.position {
            object.insert("line".into(), json!(position.line));
            object.insert("column".into(), json!(position.column));
        }
        Value::Object(object)
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
