//! What the `cli_test_*` suites share: the prompt-test fixtures, running the real
//! binary with no configuration of the user's reaching it, and durations made
//! comparable.
#![allow(dead_code)] // each suite uses some of the helpers

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use promptforge_tests::{binary, workspace_root, Run};

/// `tests/fixtures/prompt_tests`: prompts and their test files (`pass/`, and
/// `fail/`, a suite meant to fail).
pub fn fixtures() -> PathBuf {
    workspace_root().join("tests/fixtures/prompt_tests")
}

/// Runs `promptforge ARGS...` in `dir`, stdin closed, with neither
/// `$PROMPTFORGE_CONFIG` nor the user's configuration file.
pub fn pf(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(binary())
        .current_dir(dir)
        .args(args)
        .env_remove("PROMPTFORGE_CONFIG")
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .stdin(Stdio::null())
        .output()
        .expect("the promptforge binary can be started");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

/// `text` with every `(N ms)` of a verdict line written `(N ms)` literally.
pub fn without_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('(') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(" ms)") {
            out.push_str("(N ms)");
            rest = &after[digits + " ms)".len()..];
        } else {
            out.push('(');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}
