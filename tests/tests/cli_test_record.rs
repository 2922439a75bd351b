//! `promptforge run FILE --record CASE.test.yaml` on the offline Host
//! (`testing.md`): the case written (its exact YAML), names made unique, the
//! prompt's path when it is not the default, and `promptforge test` replaying it.

mod cli_test_support;

use cli_test_support::{pf, without_times};
use promptforge_tests::Scratch;

const ECHO_NOTICE: &str = "note: no model is configured; every model label uses the built-in echo model (configure one in promptforge.toml: see the book, docs/src/configuration.md)\n";

/// A prompt whose one model call the built-in echo model answers.
const ECHO_PROMPT: &str = "---
name: echo
description: Asks the writer model
promptforge: 0
models:
  writer: {}
---

# Echo

```lua
models.default('writer')
```

## Ask

```lua
log('asking')
return models.infer(args)
```
";

#[test]
fn a_recorded_run_replays_offline() {
    let s = Scratch::new("record");
    s.write("echo.md", ECHO_PROMPT);
    let run = pf(
        s.path(),
        &[
            "run",
            "echo.md",
            "--record",
            "echo.test.yaml",
            "--seed",
            "42",
            "hello",
            "world",
        ],
    );
    assert_eq!(run.stdout, "hello world\n");
    assert_eq!(
        run.stderr,
        format!("log: asking\n{ECHO_NOTICE}recorded case \"hello world\" in echo.test.yaml\n")
    );
    assert_eq!(run.code, Some(0));
    let written = std::fs::read_to_string(s.path().join("echo.test.yaml")).expect("written");
    assert_eq!(
        written,
        "cases:\n  - name: hello world\n    args: hello world\n    seed: 42\n    model:\n      - text: hello world\n    expect:\n      result: hello world\n"
    );

    // The same arguments again: the name gets a number; then a name of its own.
    let again = pf(
        s.path(),
        &[
            "run",
            "echo.md",
            "--record",
            "echo.test.yaml",
            "--seed",
            "7",
            "hello",
            "world",
        ],
    );
    assert!(again
        .stderr
        .ends_with("recorded case \"hello world (2)\" in echo.test.yaml\n"));
    let named = pf(
        s.path(),
        &[
            "run",
            "echo.md",
            "--record",
            "echo.test.yaml",
            "--record-name",
            "greets",
            "--seed",
            "1",
        ],
    );
    assert!(named
        .stderr
        .ends_with("recorded case \"greets\" in echo.test.yaml\n"));
    let written = std::fs::read_to_string(s.path().join("echo.test.yaml")).expect("written");
    assert!(
        written.ends_with(
            "  - name: hello world (2)\n    args: hello world\n    seed: 7\n    model:\n      - text: hello world\n    expect:\n      result: hello world\n  - name: greets\n    seed: 1\n    model:\n      - text: \"\"\n    expect:\n      result: \"\"\n"
        ),
        "{written}"
    );

    let test = pf(s.path(), &["test", "echo.test.yaml"]);
    assert_eq!(
        without_times(&test.stdout),
        "ok      echo.test.yaml: hello world (N ms)\n\
         ok      echo.test.yaml: hello world (2) (N ms)\n\
         ok      echo.test.yaml: greets (N ms)\n\
         3 passed, 0 failed\n"
    );
    assert_eq!(test.code, Some(0));
}

#[test]
fn a_test_file_elsewhere_names_its_prompt_and_an_unnamed_run_is_no_arguments() {
    let s = Scratch::new("record-elsewhere");
    s.write("prompts/echo.md", ECHO_PROMPT);
    std::fs::create_dir_all(s.path().join("tests")).expect("folder");
    let run = pf(
        s.path(),
        &[
            "run",
            "prompts/echo.md",
            "--record",
            "tests/greeting.test.yaml",
            "--seed",
            "3",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run
        .stderr
        .ends_with("recorded case \"no arguments\" in tests/greeting.test.yaml\n"));
    let written =
        std::fs::read_to_string(s.path().join("tests/greeting.test.yaml")).expect("written");
    assert!(
        written.starts_with("prompt: \"../prompts/echo.md\"\ncases:\n  - name: no arguments\n"),
        "{written}"
    );
    let test = pf(s.path(), &["test", "tests"]);
    assert_eq!(
        without_times(&test.stdout),
        "ok      tests/greeting.test.yaml: no arguments (N ms)\n1 passed, 0 failed\n"
    );
}

#[test]
fn a_failed_run_records_its_error_and_keeps_its_exit_code() {
    let s = Scratch::new("record-error");
    s.write(
        "boom.md",
        "---\nname: boom\ndescription: d\npromptforge: 0\n---\n\n# Boom\n\n```lua\nerror('no')\n```\n",
    );
    let run = pf(
        s.path(),
        &[
            "run",
            "boom.md",
            "--record",
            "boom.test.yaml",
            "--seed",
            "5",
        ],
    );
    assert_eq!(run.code, Some(1));
    assert!(run
        .stderr
        .ends_with("recorded case \"no arguments\" in boom.test.yaml\n"));
    let written = std::fs::read_to_string(s.path().join("boom.test.yaml")).expect("written");
    assert!(
        written.contains("    expect:\n      error:\n        kind: Lua\n"),
        "{written}"
    );
    let test = pf(s.path(), &["test"]);
    assert_eq!(test.code, Some(0), "{}", test.stdout);
}

#[test]
fn a_test_file_that_cannot_take_the_case_is_refused_before_the_run() {
    let s = Scratch::new("record-refused");
    s.write("echo.md", ECHO_PROMPT);
    s.write("other.md", ECHO_PROMPT);
    s.write(
        "bad.test.yaml",
        "prompt: echo.md\ncases:\n  - name: a\n    nope: 1\n",
    );
    let run = pf(
        s.path(),
        &["run", "echo.md", "--record", "bad.test.yaml", "hi"],
    );
    assert_eq!(
        run.stderr,
        "promptforge: bad.test.yaml: the test file has problems; fix them (promptforge check) before recording into it\n"
    );
    assert_eq!((run.stdout.as_str(), run.code), ("", Some(2)));

    s.write("echo.test.yaml", "cases:\n  - name: a\n");
    let run = pf(
        s.path(),
        &["run", "other.md", "--record", "echo.test.yaml", "hi"],
    );
    assert_eq!(
        run.stderr,
        "promptforge: echo.test.yaml: it tests the prompt echo.md, not other.md\n"
    );
    assert_eq!(run.code, Some(2));
    assert_eq!(
        std::fs::read_to_string(s.path().join("echo.test.yaml")).expect("kept"),
        "cases:\n  - name: a\n"
    );
    assert!(pf(s.path(), &["run", "echo.md", "--record-name", "x"]).code == Some(2));
}

/// The case an echo recording of `args` with seed 7 appends.
fn echo_case(args: &str) -> String {
    format!(
        "  - name: {args}\n    args: {args}\n    seed: 7\n    model:\n      - text: {args}\n    expect:\n      result: {args}\n"
    )
}

/// A test file of `count` cases, each with a name only.
fn named_cases(count: usize) -> String {
    let mut text = String::from("cases:\n");
    for n in 0..count {
        text.push_str(&format!("  - name: case {n}\n"));
    }
    text
}

/// Records an echo run of `args` (seed 7) into `echo.test.yaml` in `dir`.
fn record(dir: &std::path::Path, args: &str) -> promptforge_tests::Run {
    let record = ["run", "echo.md", "--record", "echo.test.yaml"];
    pf(dir, &[&record[..], &["--seed", "7", args]].concat())
}

/// Two recordings into one test file at once both land, in one order or the
/// other: each holds a lock beside the file while it reads, extends and replaces
/// it. The file has 2,000 cases, so that their reads and writes overlap (without
/// the lock, one case was lost at every try).
#[test]
fn two_recordings_at_once_into_one_file_both_land() {
    let s = Scratch::new("record-concurrent");
    s.write("echo.md", ECHO_PROMPT);
    let original = named_cases(2000);
    let orders = [
        format!("{original}{}{}", echo_case("one"), echo_case("two")),
        format!("{original}{}{}", echo_case("two"), echo_case("one")),
    ];
    for round in 1..=5 {
        s.write("echo.test.yaml", &original);
        let runs = std::thread::scope(|scope| {
            let one = scope.spawn(|| record(s.path(), "one"));
            let two = scope.spawn(|| record(s.path(), "two"));
            [one.join(), two.join()]
        });
        for run in runs {
            let run = run.expect("the recording thread ends");
            assert_eq!(run.code, Some(0), "round {round}: {}", run.stderr);
        }
        let written = std::fs::read_to_string(s.path().join("echo.test.yaml")).expect("written");
        let cases = written.matches("  - name: ").count();
        assert!(
            orders.contains(&written),
            "round {round}: {cases} cases, ending {:?}",
            &written[written.len().saturating_sub(200)..]
        );
        assert!(!s.path().join("echo.test.yaml.lock").exists());
    }
}

/// A recording into a folder that does not exist is refused before the run.
#[test]
fn a_recording_into_a_missing_folder_is_refused_before_the_run() {
    let s = Scratch::new("record-missing-folder");
    s.write("echo.md", ECHO_PROMPT);
    let record = ["run", "echo.md", "--record", "nowhere/echo.test.yaml"];
    let run = pf(s.path(), &[&record[..], &["hi"]].concat());
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str(), run.code),
        (
            "",
            "promptforge: nowhere/echo.test.yaml: cannot create its lock file nowhere/echo.test.yaml.lock: no such file or folder\n",
            Some(2)
        )
    );
    assert!(!s.path().join("nowhere").exists());
}

/// A recording into a read-only folder is refused before the run, and the test
/// file stays byte for byte as it was (it is replaced by a new file, which the
/// folder must take). Skipped when the folder takes files anyway (as root).
#[test]
#[cfg(unix)]
fn a_recording_into_a_read_only_folder_is_refused_and_the_file_kept() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("record-read-only");
    s.write("ro/echo.md", ECHO_PROMPT);
    let original = named_cases(3);
    let file = s.write("ro/echo.test.yaml", &original);
    let folder = s.path().join("ro");
    let mode = |mode| std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode));
    mode(0o555).expect("the folder's mode is set");
    if std::fs::write(folder.join("probe"), "").is_ok() {
        eprintln!("skipped: this user writes into a read-only folder (root)");
        mode(0o755).expect("the folder's mode is set back");
        return;
    }
    let run = pf(
        s.path(),
        &["run", "ro/echo.md", "--record", "ro/echo.test.yaml", "hi"],
    );
    mode(0o755).expect("the folder's mode is set back");
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str(), run.code),
        (
            "",
            "promptforge: ro/echo.test.yaml: cannot create its lock file ro/echo.test.yaml.lock: permission denied\n",
            Some(2)
        )
    );
    assert_eq!(std::fs::read(&file).expect("kept"), original.as_bytes());
}

#[test]
fn a_recording_with_a_store_on_disk_keeps_the_files_the_run_started_with() {
    // Issue 23, item 8: the case used to replay against an empty store and pass.
    let s = Scratch::new("record-store");
    s.write(
        "notes.md",
        "---\nname: notes\ndescription: d\npromptforge: 0\n---\n\n# Notes\n\n```lua\nlocal text = store.read('facts.md')\nstore.write('seen.md', 'yes')\nreturn #text\n```\n",
    );
    s.write("data/facts.md", "alpha\nbeta\n");
    let run = pf(
        s.path(),
        &[
            "run",
            "notes.md",
            "--store",
            "data",
            "--record",
            "notes.test.yaml",
            "--seed",
            "1",
        ],
    );
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "11\n"),
        "{}",
        run.stderr
    );
    let written = std::fs::read_to_string(s.path().join("notes.test.yaml")).expect("written");
    assert!(
        written.contains("    store:\n      facts.md: |\n        alpha\n        beta\n"),
        "{written}"
    );
    assert!(
        !written.contains("seen.md"),
        "only the starting files: {written}"
    );
    let test = pf(s.path(), &["test"]);
    assert_eq!(test.code, Some(0), "{}", test.stdout);

    // A store too large for a case is refused before the run, and nothing is written.
    for n in 0..1001 {
        s.write(&format!("big/f{n}.md"), "x");
    }
    let run = pf(
        s.path(),
        &[
            "run",
            "notes.md",
            "--store",
            "big",
            "--record",
            "big.test.yaml",
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "promptforge: big.test.yaml: the store holds 1001 files, more than a recorded case keeps as its starting store (1000 files, 1048576 bytes)\n"
    );
    assert!(!s.path().join("big.test.yaml").exists());
}
