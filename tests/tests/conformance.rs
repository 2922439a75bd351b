//! The conformance corpus: runs the real binary as `promptforge check <case>.md`
//! inside `tests/conformance` for every case and compares stdout byte for byte
//! and the exit code. See `tests/README.md` for the layout of a case.

use std::fs;
use std::path::PathBuf;

use promptforge_tests::{diff, run_in, workspace_root};

fn corpus() -> PathBuf {
    workspace_root().join("tests").join("conformance")
}

fn read(path: &PathBuf) -> Option<String> {
    fs::read_to_string(path).ok()
}

/// Runs one case and panics with a diff when the binary disagrees with it.
fn check_case(name: &str) {
    let dir = corpus();
    let file = format!("{name}.md");
    let exact = read(&dir.join(format!("{name}.expected")));
    let prefix = read(&dir.join(format!("{name}.expected-prefix")));
    let expected_exit = match read(&dir.join(format!("{name}.exit"))) {
        Some(text) => text
            .lines()
            .next()
            .and_then(|line| line.trim().parse::<i32>().ok())
            .unwrap_or_else(|| panic!("{name}.exit: the first line is not an exit code")),
        None => match (&exact, &prefix) {
            (Some(text), _) if text.is_empty() => 0,
            _ => 1,
        },
    };
    let run = run_in(&dir, &["check", &file]);
    let mut failures = Vec::new();
    match (&exact, &prefix) {
        (Some(expected), None) => {
            if run.stdout != *expected {
                failures.push(format!(
                    "stdout differs (- expected, + actual):\n{}",
                    diff::render(expected, &run.stdout)
                ));
            }
        }
        (None, Some(expected)) => {
            if !run.stdout.starts_with(expected.as_str()) || run.stdout.lines().count() != 1 {
                failures.push(format!(
                    "stdout should be one line starting with:\n  {expected}\nbut is:\n{}",
                    run.stdout
                ));
            }
        }
        _ => panic!("{name}: needs exactly one of {name}.expected and {name}.expected-prefix"),
    }
    if run.code != Some(expected_exit) {
        failures.push(format!(
            "exit code: expected {expected_exit}, got {:?}",
            run.code
        ));
    }
    if !run.stderr.is_empty() {
        failures.push(format!("unexpected stderr:\n{}", run.stderr));
    }
    assert!(
        failures.is_empty(),
        "conformance case {name} failed:\n{}",
        failures.join("\n")
    );
}

include!(concat!(env!("OUT_DIR"), "/conformance_cases.rs"));

/// Every case has its prompt and one expectation; no expectation is orphaned.
#[test]
fn corpus_is_well_formed() {
    let mut problems = Vec::new();
    let mut cases = 0;
    for entry in fs::read_dir(corpus()).expect("the corpus folder exists") {
        let name = entry.expect("a readable entry").file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let (stem, ext) = name.rsplit_once('.').unwrap_or((&name, ""));
        match ext {
            "md" => {
                cases += 1;
                let exact = corpus().join(format!("{stem}.expected")).exists();
                let prefix = corpus().join(format!("{stem}.expected-prefix")).exists();
                if exact == prefix {
                    problems.push(format!("{name}: needs exactly one expectation file"));
                }
            }
            "expected" | "expected-prefix" | "exit" => {
                if !corpus().join(format!("{stem}.md")).exists() {
                    problems.push(format!("{name}: no {stem}.md beside it"));
                }
            }
            _ => problems.push(format!("{name}: not part of a case")),
        }
    }
    assert!(cases > 0, "the corpus has no case");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
