//! `promptforge check` on prompt test files (`testing.md`): found in folders and
//! named, checked in path order with the prompts, their problems in every format
//! and under check's exit rules; a `prompt:` that is a device or a pipe refused
//! without reading it (by `test` too).

mod cli_test_support;

use std::process::Stdio;
use std::time::Duration;

use cli_test_support::{fixtures, pf};
use promptforge_tests::{run_bounded, Scratch};
use serde_json::Value;

const UNKNOWN_CASE_KEY: &str = "unknown field `expct`, expected one of `name`, `args`, `seed`, `store`, `model`, `tools`, `input`, `live`, `repeat`, `min_pass`, `expect`";

#[test]
fn the_passing_fixtures_check_clean() {
    let run = pf(&fixtures(), &["check", "pass"]);
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    assert_eq!(run.code, Some(0));
}

#[test]
fn a_folder_walk_checks_test_files_in_path_order_with_the_prompts() {
    let s = Scratch::new("check-tests");
    let words = std::fs::read_to_string(fixtures().join("pass/words.md")).expect("fixture");
    s.write("p/words.md", &words);
    s.write(
        "p/b.md",
        "---\nname: Bad\ndescription: d\npromptforge: 0\n---\n\n# T\n",
    );
    s.write("p/words.test.yaml", "cases:\n  - name: a\n    expct: {}\n");
    s.write("p/a.test.yaml", "cases:\n  - args: x\n");
    s.write("p/notes.yaml", "not: [a test file\n");
    let run = pf(s.path(), &["check", "p"]);
    assert_eq!(
        run.stdout,
        format!(
            "p/a.test.yaml:1:1: error[TestFile]: the prompt p/a.md cannot be read: no such file\n\
             p/a.test.yaml:2:5: error[TestFile]: missing field `name`\n\
             p/b.md:2:7: error[Frontmatter]: invalid prompt name `Bad`: expected [a-z0-9][a-z0-9_-]{{0,63}}\n\
             p/words.test.yaml:3:5: error[TestFile]: {UNKNOWN_CASE_KEY}\n"
        )
    );
    assert_eq!(run.code, Some(1));

    // Named explicitly, in every format.
    let json = pf(
        s.path(),
        &["check", "--format", "json", "p/words.test.yaml"],
    );
    let problems: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(problems[0]["path"], "p/words.test.yaml");
    assert_eq!(problems[0]["kind"], "TestFile");
    assert_eq!(problems[0]["message"], UNKNOWN_CASE_KEY);
    assert_eq!(
        (&problems[0]["line"], &problems[0]["column"]),
        (&Value::from(3), &Value::from(5))
    );
    assert_eq!(json.code, Some(1));
    let github = pf(
        s.path(),
        &["check", "--format", "github", "p/words.test.yaml"],
    );
    assert_eq!(
        github.stdout,
        format!("::error file=p/words.test.yaml,line=3,col=5,title=TestFile::{UNKNOWN_CASE_KEY}\n")
    );
}

#[test]
fn warnings_of_a_test_file_exit_zero_unless_denied() {
    let s = Scratch::new("check-test-warning");
    let ask = std::fs::read_to_string(fixtures().join("pass/ask.md")).expect("fixture");
    s.write("ask.md", ask);
    s.write(
        "ask.test.yaml",
        "cases:\n  - name: a\n    model:\n      - text: x\n      - text: y\n    expect:\n      calls: { nosuch: 0 }\n",
    );
    let warning = "ask.test.yaml:7:16: warning[UnknownAlias]: the prompt neither binds nor registers a tool named \"nosuch\"; the engine decides at run time\n";
    let run = pf(s.path(), &["check"]);
    assert_eq!((run.stdout.as_str(), run.code), (warning, Some(0)));
    let denied = pf(s.path(), &["check", "--deny", "warnings"]);
    assert_eq!((denied.stdout.as_str(), denied.code), (warning, Some(1)));
}

/// A test file whose `prompt:` is a device or a pipe: `check` and `test` refuse
/// that prompt without opening it (reading `/dev/zero` never ends, opening a pipe
/// waits for a writer), at once and in bounded memory.
#[test]
#[cfg(unix)]
fn a_prompt_that_is_a_device_or_a_pipe_is_refused_without_reading_it() {
    const LIMIT: Duration = Duration::from_secs(20);
    let s = Scratch::new("check-test-device");
    let made = std::process::Command::new("mkfifo")
        .arg(s.path().join("pipe.md"))
        .status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo makes a pipe");
    s.write("zero.test.yaml", "prompt: /dev/zero\ncases:\n  - name: a\n");
    s.write("pipe.test.yaml", "prompt: pipe.md\ncases:\n  - name: a\n");
    for (file, prompt) in [
        ("zero.test.yaml", "/dev/zero"),
        ("pipe.test.yaml", "pipe.md"),
    ] {
        let line = format!(
            "{file}:1:9: error[TestFile]: the prompt {prompt} cannot be read: not a regular file\n"
        );
        let (run, took) = run_bounded(s.path(), &["check", file], Stdio::null(), LIMIT);
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str(), run.code),
            (line.as_str(), "", Some(1)),
            "check {file} took {took:?}"
        );
        let (run, took) = run_bounded(s.path(), &["test", file], Stdio::null(), LIMIT);
        let report = format!(
            "FAILED  {file}: (test file)\n\n\
             ---- {file}: (test file) ----\n\
             {line}\n\
             0 passed, 1 failed\n"
        );
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str(), run.code),
            (report.as_str(), "", Some(1)),
            "test {file} took {took:?}"
        );
    }
}
