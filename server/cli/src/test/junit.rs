//! The JUnit XML format of `promptforge test`, as CI test reports read it
//! (GitHub Actions' and GitLab's JUnit readers): `<testsuites>` with one
//! `<testsuite>` per test file and one `<testcase>` per case; a failed case holds
//! one `<failure>` (its first failure's message, every failure's text), a skipped
//! one `<skipped/>`; a test file with errors is one failed testcase named
//! `(test file)` holding its problems. Times are seconds. A case whose verdict
//! rests on answers a cache gave (`--cache`) says so in its `<properties>`
//! (`cache.reused`, `cache.answers`) and its `<system-out>`.
//!
//! With `--models`, the live cases' runs are in one `<testsuite>` per model,
//! named after it, after the test files' suites (which keep the scripted cases
//! and the broken files); a testcase's `classname` is still its test file.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;

use crate::output::text_line;
use crate::problem::Problem;
use crate::test::results::{CaseResult, FileResult, Status, Totals};
use crate::test::text::{failure_line, TEST_FILE_CASE};

/// Escapes text for XML 1.0 content and attribute values: `&`, `<`, `>`, `"` and
/// `'` as entities, tab, line feed and carriage return as character references
/// when `attribute` (so attribute-value normalisation keeps them), and the
/// characters XML 1.0 forbids dropped.
pub fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' if attribute => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            '\t' | '\n' | '\r' => out.push(c),
            c if allowed(c) => out.push(c),
            _ => {}
        }
    }
    out
}

/// True for the characters XML 1.0 allows (tab, line ends aside).
fn allowed(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// Seconds with millisecond precision.
fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

/// Writes the whole report; `models` are the names of `--models`.
pub fn write(files: &[FileResult], models: &[String], out: &mut impl Write) -> io::Result<()> {
    let totals = Totals::of(files);
    let tests = totals.passed + totals.failed + totals.skipped;
    let time: Duration = files.iter().map(FileResult::duration).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites tests=\"{tests}\" failures=\"{}\" skipped=\"{}\" time=\"{}\">",
        totals.failed,
        totals.skipped,
        seconds(time)
    );
    for file in files {
        let own: Vec<&CaseResult> = file.cases.iter().filter(|c| c.model.is_none()).collect();
        if file.broken || !own.is_empty() {
            let name = escape(&file.file, true);
            suite(&mut xml, &name, file.broken, &own);
            if file.broken {
                broken_case(&mut xml, &name, &file.problems);
            }
            for case in own {
                test_case(&mut xml, &name, &file.file, case);
            }
            xml.push_str("  </testsuite>\n");
        }
    }
    for model in models {
        let runs: Vec<(&FileResult, &CaseResult)> = files
            .iter()
            .flat_map(|file| file.cases.iter().map(move |case| (file, case)))
            .filter(|(_, case)| case.model.as_ref() == Some(model))
            .collect();
        let cases: Vec<&CaseResult> = runs.iter().map(|(_, case)| *case).collect();
        suite(&mut xml, &escape(model, true), false, &cases);
        for (file, case) in runs {
            test_case(&mut xml, &escape(&file.file, true), &file.file, case);
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    out.write_all(xml.as_bytes())?;
    out.flush()
}

/// Opens a `<testsuite>` named `name` (escaped) of `cases`, and of one failed
/// testcase more when `broken`.
fn suite(xml: &mut String, name: &str, broken: bool, cases: &[&CaseResult]) {
    let count = |status: Status| cases.iter().filter(|c| c.status == status).count();
    let failures = count(Status::Failed) + usize::from(broken);
    let tests = cases.len() + usize::from(broken);
    let time: Duration = cases.iter().map(|c| c.duration).sum();
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{}\" time=\"{}\">",
        count(Status::Skipped),
        seconds(time)
    );
}

/// The testcase standing for a test file that could not run.
fn broken_case(xml: &mut String, classname: &str, problems: &[Problem]) {
    let first = problems
        .iter()
        .find(|p| p.severity == promptforge_syntax::Severity::Error)
        .or(problems.first());
    let message = first.map_or("", |p| p.message.as_str());
    let kind = first.map_or("", |p| p.kind);
    let text: Vec<String> = problems.iter().map(text_line).collect();
    let _ = writeln!(
        xml,
        "    <testcase name=\"{}\" classname=\"{classname}\" time=\"0.000\">",
        escape(TEST_FILE_CASE, true)
    );
    let _ = writeln!(
        xml,
        "      <failure message=\"{}\" type=\"{}\">{}</failure>",
        escape(message, true),
        escape(kind, true),
        escape(&text.join("\n"), false)
    );
    xml.push_str("    </testcase>\n");
}

/// One case's `<testcase>`.
fn test_case(xml: &mut String, classname: &str, file: &str, case: &CaseResult) {
    let _ = write!(
        xml,
        "    <testcase name=\"{}\" classname=\"{classname}\" time=\"{}\"",
        escape(&case.label(), true),
        seconds(case.duration)
    );
    // Properties first, output last, as JUnit readers expect them.
    let cached = case.rests_on_cache().then(|| {
        (
            format!(
                "      <properties>\n        <property name=\"cache.reused\" value=\"{}\"/>\n        <property name=\"cache.answers\" value=\"{}\"/>\n      </properties>\n",
                case.cache.reused, case.cache.answers,
            ),
            format!("      <system-out>{}</system-out>\n", escape(&case.cache.text(), false)),
        )
    });
    match (case.status, cached) {
        (Status::Ok, None) => xml.push_str("/>\n"),
        (Status::Ok, Some((properties, out))) => {
            let _ = write!(xml, ">\n{properties}{out}    </testcase>\n");
        }
        (Status::Skipped, _) => xml.push_str(">\n      <skipped/>\n    </testcase>\n"),
        (Status::Failed, cached) => {
            let (properties, out) = cached.unwrap_or_default();
            let first = case.failures.first();
            let message = first.map_or("", |p| p.failure.message.as_str());
            let what = first.map_or("", |p| p.failure.what.as_str());
            let text: Vec<String> = case
                .failures
                .iter()
                .map(|placed| failure_line(file, placed))
                .collect();
            let _ = write!(
                xml,
                ">\n{properties}      <failure message=\"{}\" type=\"{}\">{}</failure>\n{out}    </testcase>\n",
                escape(message, true),
                escape(what, true),
                escape(&text.join("\n"), false),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_forbidden_characters() {
        assert_eq!(
            escape("a & b < c > \"d\" 'e'", false),
            "a &amp; b &lt; c &gt; &quot;d&quot; &apos;e&apos;"
        );
        assert_eq!(escape("x\u{0}y\u{1b}z\u{FFFE}", false), "xyz");
        assert_eq!(escape("l1\nl2\tt\r", false), "l1\nl2\tt\r");
        assert_eq!(escape("l1\nl2\t", true), "l1&#10;l2&#9;");
        assert_eq!(escape("é ✓ 𝄞", true), "é ✓ 𝄞");
    }

    #[test]
    fn seconds_have_three_decimals() {
        assert_eq!(seconds(Duration::from_millis(1234)), "1.234");
        assert_eq!(seconds(Duration::ZERO), "0.000");
    }
}
