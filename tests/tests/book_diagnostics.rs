//! The diagnostics reference (`docs/src/reference/diagnostics.md`) has a
//! `## Name` entry for every code a diagnostic can carry, and no entry for a
//! code that does not exist.

use std::fs;

use promptforge_syntax::CODE_NAMES;
use promptforge_tests::workspace_root;

#[test]
fn every_diagnostic_code_has_an_entry_in_the_reference() {
    let page = workspace_root()
        .join("docs")
        .join("src")
        .join("reference")
        .join("diagnostics.md");
    let text = fs::read_to_string(&page).expect("the diagnostics reference exists");
    let entries: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .map(str::trim)
        .collect();
    let missing: Vec<&&str> = CODE_NAMES
        .iter()
        .filter(|name| !entries.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "codes with no `## Name` entry in {}: {missing:?}",
        page.display()
    );
    let unknown: Vec<&&str> = entries
        .iter()
        .filter(|entry| !CODE_NAMES.contains(entry) && !entry.contains(' '))
        .collect();
    assert!(
        unknown.is_empty(),
        "entries for codes that do not exist: {unknown:?}"
    );
}
