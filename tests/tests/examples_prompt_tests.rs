//! Every example prompt has its prompt tests (`testing.md`) beside it, and they all
//! pass offline with no configuration: `promptforge test examples`, run by the real
//! binary from the workspace root with no `PROMPTFORGE_CONFIG` and no user
//! configuration, only the `promptforge.toml` files of the example folders; and
//! `promptforge check examples` finds no problem in the prompts or their tests.

use std::path::{Path, PathBuf};
use std::process::Command;

use promptforge_tests::{binary, workspace_root, Scratch};

/// Every `.md` file under `dir`, recursively, in path order.
fn prompts(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            prompts(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            out.push(path);
        }
    }
}

/// The number of cases of the test file beside `prompt`, which must exist, parse
/// without problems and hold at least two named cases.
fn cases_beside(prompt: &Path) -> usize {
    let stem = prompt
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a prompt file name");
    let tests = prompt.with_file_name(format!("{stem}.test.yaml"));
    let text = std::fs::read_to_string(&tests)
        .unwrap_or_else(|e| panic!("{} has no test file beside it ({e})", prompt.display()));
    let (file, problems) = promptforge_syntax::test_file::parse(&text);
    assert!(
        problems.is_empty(),
        "{} has problems: {problems:?}",
        tests.display()
    );
    assert!(
        file.prompt.is_none(),
        "{} names its prompt: the default name is the one meant",
        tests.display()
    );
    assert!(
        file.cases.len() >= 2,
        "{} holds {} case(s), at least two are wanted",
        tests.display(),
        file.cases.len()
    );
    assert!(
        file.cases.iter().all(|case| case.name.is_some()),
        "{} has a case without a name",
        tests.display()
    );
    file.cases.len()
}

#[test]
fn every_example_prompt_has_prompt_tests_and_they_pass_offline() {
    let root = workspace_root();
    let mut found = Vec::new();
    prompts(&root.join("examples"), &mut found);
    assert!(
        found.len() >= 14,
        "only {} example prompts found",
        found.len()
    );
    let total: usize = found.iter().map(|prompt| cases_beside(prompt)).sum();

    // No configuration but the example folders' own: no PROMPTFORGE_CONFIG, and a
    // user configuration folder that does not exist.
    let no_user_config = Scratch::new("examples-prompt-tests");
    let promptforge = |args: &[&str]| {
        Command::new(binary())
            .current_dir(&root)
            .args(args)
            .env_remove("PROMPTFORGE_CONFIG")
            .env("XDG_CONFIG_HOME", no_user_config.path().join("none"))
            .env("HOME", no_user_config.path())
            .output()
            .expect("the promptforge binary can be started")
    };

    // The test files (and the prompts, on their folders' own configuration) have
    // no problem, not even a warning.
    let check = promptforge(&["check", "examples"]);
    assert_eq!(
        (
            String::from_utf8_lossy(&check.stdout).as_ref(),
            check.status.code()
        ),
        ("", Some(0)),
        "promptforge check examples: {}",
        String::from_utf8_lossy(&check.stderr)
    );

    let output = promptforge(&["test", "examples"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "promptforge test examples failed:\n{stdout}\n{stderr}"
    );
    let verdicts: Vec<&str> = stdout.lines().filter(|line| !line.is_empty()).collect();
    let (closing, cases) = verdicts
        .split_last()
        .expect("promptforge test printed nothing");
    assert_eq!(
        *closing,
        format!("{total} passed, 0 failed"),
        "the closing line:\n{stdout}\n{stderr}"
    );
    assert_eq!(cases.len(), total, "one line per case:\n{stdout}");
    assert!(
        cases.iter().all(|line| line.starts_with("ok ")),
        "every case passes:\n{stdout}"
    );
}
