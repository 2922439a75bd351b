//! Names the commit the binary is built from in `promptforge --version` (when the
//! source is a git checkout and git is there; else the version alone).

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .is_some_and(|out| !out.stdout.is_empty());
    let described = match commit {
        Some(commit) if dirty => format!(" ({commit}, modified)"),
        Some(commit) => format!(" ({commit})"),
        None => String::new(),
    };
    println!("cargo:rustc-env=PROMPTFORGE_COMMIT={described}");
    // Again when HEAD moves or the index changes (a commit, a checkout).
    for path in ["../../.git/HEAD", "../../.git/index"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
