//! The diagnostics reference (`docs/src/reference/diagnostics.md`) has a
//! `## Name` entry for every code a diagnostic can carry, and no entry for a
//! code that does not exist.

use std::fs;

use promptforge_syntax::CODE_NAMES;
use promptforge_tests::workspace_root;

/// The `## ` headings of a Markdown text, outside its fenced blocks (an example
/// prompt's own `## Section` is not an entry).
fn headings(text: &str) -> Vec<&str> {
    let mut open: Option<(char, usize)> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let fence = trimmed
            .chars()
            .next()
            .filter(|c| *c == '`' || *c == '~')
            .map(|c| (c, trimmed.chars().take_while(|x| *x == c).count()))
            .filter(|(_, len)| *len >= 3);
        match (open, fence) {
            (None, Some(found)) => open = Some(found),
            (Some((c, len)), Some((found, found_len)))
                if found == c && found_len >= len && trimmed.trim_end().len() == found_len =>
            {
                open = None;
            }
            (None, None) => {
                if let Some(heading) = line.strip_prefix("## ") {
                    out.push(heading.trim());
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_diagnostic_code_has_an_entry_in_the_reference() {
    let page = workspace_root()
        .join("docs")
        .join("src")
        .join("reference")
        .join("diagnostics.md");
    let text = fs::read_to_string(&page).expect("the diagnostics reference exists");
    let entries = headings(&text);
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

#[test]
fn headings_inside_fenced_blocks_are_not_entries() {
    let text = "## Lua\n````markdown\n# T\n## Ask\n```lua\n```\n````\n## Every code\n";
    assert_eq!(headings(text), ["Lua", "Every code"]);
}
