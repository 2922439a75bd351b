//! The server's prompt detection ([`promptforge_syntax::is_prompt`]) against the
//! shared corpus `tests/detection/` that the editors' early checks are tested on
//! too: every file the index names gets the answer the index gives, and the index
//! names every file of the folder.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use promptforge_syntax::is_prompt;

/// The corpus folder at the repository's root.
fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/detection")
}

/// The index's entries: (file, is a prompt), in order.
fn index() -> Vec<(String, bool)> {
    let text =
        fs::read_to_string(corpus_dir().join("index.txt")).expect("tests/detection/index.txt");
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut words = line.split_whitespace();
            let file = words.next().expect("a file name").to_string();
            let prompt = match words.next() {
                Some("prompt") => true,
                Some("not-a-prompt") => false,
                other => panic!("{file}: the answer is `prompt` or `not-a-prompt`, not {other:?}"),
            };
            // The editors' generous answer is only ever `prompt`, and only where the server says no.
            if let Some(editors) = words.next().and_then(|word| word.strip_prefix("editors:")) {
                assert!(editors == "prompt" && !prompt, "{file}: editors:{editors}");
            }
            (file, prompt)
        })
        .collect()
}

#[test]
fn the_server_agrees_with_every_entry_of_the_corpus() {
    let entries = index();
    assert!(
        entries.len() >= 50,
        "the corpus has {} entries",
        entries.len()
    );
    assert!(entries.iter().any(|(_, prompt)| *prompt));
    assert!(entries.iter().any(|(_, prompt)| !*prompt));
    let wrong: Vec<String> = entries
        .iter()
        .filter_map(|(file, expected)| {
            let text = fs::read_to_string(corpus_dir().join(file))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            (is_prompt(&text) != *expected).then(|| {
                let said = if *expected {
                    "not a prompt"
                } else {
                    "a prompt"
                };
                format!("{file}: the server says {said}")
            })
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_index_names_every_file_of_the_corpus_once() {
    let named: Vec<String> = index().into_iter().map(|(file, _)| file).collect();
    let unique: BTreeSet<&String> = named.iter().collect();
    assert_eq!(
        unique.len(),
        named.len(),
        "a file is named twice in index.txt"
    );
    let on_disk: BTreeSet<String> = fs::read_dir(corpus_dir())
        .expect("tests/detection")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name != "index.txt" && name != ".gitattributes")
        .collect();
    assert_eq!(
        on_disk,
        unique.into_iter().cloned().collect::<BTreeSet<_>>()
    );
}
