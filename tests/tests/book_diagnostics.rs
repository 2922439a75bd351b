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

/// The id mdBook gives a heading: lowercased, spaces as dashes, other
/// punctuation dropped (a repeated id gets a `-N` suffix, which a link would miss).
fn heading_id(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

#[test]
fn each_entry_has_the_anchor_the_language_server_links_to() {
    // The server links a code to `reference/diagnostics.html#` + its name in lower
    // case: that must be the entry's own id, not taken by an earlier heading.
    let page = workspace_root().join("docs/src/reference/diagnostics.md");
    let text = fs::read_to_string(&page).expect("the diagnostics reference exists");
    let ids: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| heading_id(line.trim_start_matches('#')))
        .collect();
    for name in CODE_NAMES {
        let anchor = name.to_ascii_lowercase();
        assert_eq!(heading_id(name), anchor);
        assert_eq!(
            ids.iter().filter(|id| **id == anchor).count(),
            1,
            "{name}: the anchor #{anchor} must belong to one heading"
        );
    }
}

#[test]
fn headings_inside_fenced_blocks_are_not_entries() {
    let text = "## Lua\n````markdown\n# T\n## Ask\n```lua\n```\n````\n## Every code\n";
    assert_eq!(headings(text), ["Lua", "Every code"]);
}
