//! One shape for what the language server publishes and what `promptforge check
//! --format json` prints, so the suites can assert that they agree on every
//! diagnostic: `(code, severity, message, range)`, sorted.
//!
//! `check` prints the problems that refuse the run at prepare as the run's one
//! RequirementsUnmet notice (the spec's run format), with each refusing
//! diagnostic as one of its related places; those places are the diagnostics the
//! server publishes one by one. A file named explicitly whose text is not a prompt
//! gets what the server shows for a document that stays a prompt (the syntax
//! crate's one verdict: the Frontmatter or the Version error).

use serde_json::Value;

use crate::{run_in, Scratch};

/// One diagnostic: its stable code, `error`, `warning` or `info`, its message and its
/// LSP range (UTF-16 columns).
pub type Agreed = (String, String, String, Value);

/// The first line of the RequirementsUnmet notice.
const NOTICE_HEADER: &str = "the environment cannot satisfy this prompt:";

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// A publication's diagnostics in the agreed shape.
pub fn published(diagnostics: &[Value]) -> Vec<Agreed> {
    let mut out: Vec<Agreed> = diagnostics
        .iter()
        .map(|d| {
            let severity = match d["severity"].as_i64() {
                Some(2) => "warning",
                Some(3) => "info",
                _ => "error",
            };
            (
                text(&d["code"]),
                severity.to_owned(),
                text(&d["message"]),
                d["range"].clone(),
            )
        })
        .collect();
    out.sort_by_key(|a| format!("{a:?}"));
    out
}

/// `check --format json` problems in the agreed shape.
pub fn checked(problems: &[Value]) -> Vec<Agreed> {
    let mut out = Vec::new();
    for problem in problems {
        let message = text(&problem["message"]);
        let notice = problem["code"] == "RequirementsUnmet"
            && problem["line"].is_null()
            && message.starts_with(NOTICE_HEADER);
        if notice {
            let related = problem["related"].as_array().cloned().unwrap_or_default();
            for place in related {
                out.push((
                    "RequirementsUnmet".to_owned(),
                    "error".to_owned(),
                    text(&place["message"]),
                    place["range"].clone(),
                ));
            }
        } else {
            out.push((
                text(&problem["code"]),
                text(&problem["severity"]),
                message,
                problem["range"].clone(),
            ));
        }
    }
    out.sort_by_key(|a| format!("{a:?}"));
    out
}

/// What `check --format json NAME` prints for `text` written as `NAME` in
/// `scratch`, in the agreed shape, with its exit code.
pub fn check_text(scratch: &Scratch, name: &str, text: &str) -> (Vec<Agreed>, Option<i32>) {
    scratch.write(name, text);
    // The language server of the suites is trusted by its client (`lsp_client`).
    let run = run_in(
        scratch.path(),
        &["check", "--trust", "--format", "json", name],
    );
    let problems: Vec<Value> = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("check prints JSON ({e}): {}{}", run.stdout, run.stderr));
    (checked(&problems), run.code)
}
