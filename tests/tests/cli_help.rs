//! The command line's own documentation: every `--help` is a reviewed snapshot
//! (a change to a flag or its text shows up in review), `--version` names the
//! commit, and the shell completions and the manual page come from the same clap
//! definition (a completion script bash accepts, a page with every subcommand).

use promptforge_tests::{run_in, workspace_root};

const SUBCOMMANDS: [&str; 9] = [
    "check",
    "lsp",
    "dap",
    "run",
    "catalog",
    "test",
    "trust",
    "completions",
    "man",
];

#[test]
fn every_help_is_the_reviewed_text() {
    let root = workspace_root();
    let top = run_in(&root, &["--help"]);
    assert_eq!(top.code, Some(0), "{}", top.stderr);
    insta::assert_snapshot!("help", top.stdout);
    for sub in SUBCOMMANDS {
        let help = run_in(&root, &[sub, "--help"]);
        assert_eq!(help.code, Some(0), "{sub}: {}", help.stderr);
        insta::assert_snapshot!(format!("help_{sub}"), help.stdout);
    }
}

#[test]
fn the_version_names_the_commit() {
    let version = run_in(&workspace_root(), &["--version"]);
    assert_eq!(version.code, Some(0));
    let text = version.stdout.trim_end();
    let rest = text
        .strip_prefix(&format!("promptforge {} (", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{text:?}"));
    let commit = rest.split([',', ')']).next().unwrap_or_default();
    assert_eq!(commit.len(), 12, "{text:?}");
    assert!(commit.chars().all(|c| c.is_ascii_hexdigit()), "{text:?}");
}

#[test]
fn completions_and_the_manual_come_from_the_same_definition() {
    let root = workspace_root();
    let bash = run_in(&root, &["completions", "bash"]);
    assert_eq!(bash.code, Some(0));
    let script = std::env::temp_dir().join(format!("pf-completion-{}.bash", std::process::id()));
    std::fs::write(&script, &bash.stdout).unwrap();
    let registered = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p promptforge",
            script.display()
        ))
        .output()
        .expect("bash runs");
    let _ = std::fs::remove_file(&script);
    assert_eq!(
        String::from_utf8_lossy(&registered.stdout).trim(),
        "complete -o bashdefault -o default -o nosort -F _promptforge promptforge"
    );
    assert!(bash.stdout.contains("--trust"));
    for shell in ["zsh", "fish"] {
        let out = run_in(&root, &["completions", shell]);
        assert_eq!(out.code, Some(0), "{shell}");
        assert!(out.stdout.contains("record-name"), "{shell}");
    }
    let man = run_in(&root, &["man"]);
    assert_eq!(man.code, Some(0));
    assert!(man.stdout.contains(".TH promptforge 1"), "{}", man.stdout);
    for sub in SUBCOMMANDS {
        assert!(
            man.stdout.contains(&format!("promptforge\\-{sub}(1)")),
            "{sub} is missing from the manual"
        );
    }
}
