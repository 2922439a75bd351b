//! Each diagnostic links to its code's entry in the book's diagnostics reference
//! (`codeDescription.href`) when the editor gives the book's address as
//! `initializationOptions.bookUrl`; without it, or with an address that is not
//! one, diagnostics carry no link and the server goes on.

use promptforge_tests::lsp_client::{uri, LspClient};
use serde_json::{json, Value};

/// A prompt with two problems of two codes.
const DOC: &str = "---
name: links
description: Links to the book
promptforge: 0
---

# Links

```lua
jump('## Nowhere')
tools.call('missing', {})
```
";

/// The `(code, href)` of each diagnostic of `DOC` in a session started with `options`.
fn links(options: Value) -> Vec<(String, Value)> {
    let mut client = LspClient::start_with_env(&[]);
    client.initialize_with(json!({}), options);
    let doc = uri("links.md");
    client.open(&doc, 1, DOC);
    let found = client
        .diagnostics(&doc, 1)
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_owned(),
                d["codeDescription"]["href"].clone(),
            )
        })
        .collect();
    assert_eq!(client.shutdown(), Some(0));
    found
}

#[test]
fn each_diagnostic_links_to_its_entry_in_the_book() {
    let found = links(json!({ "trusted": true, "bookUrl": "https://example.org/pf" }));
    assert!(found.len() >= 2, "{found:?}");
    for (code, href) in &found {
        assert_eq!(
            href,
            &json!(format!(
                "https://example.org/pf/reference/diagnostics.html#{}",
                code.to_ascii_lowercase()
            )),
            "{code}"
        );
    }
}

#[test]
fn without_a_book_address_diagnostics_carry_no_link() {
    let found = links(json!({ "trusted": true }));
    assert!(!found.is_empty());
    assert!(found.iter().all(|(_, href)| href.is_null()), "{found:?}");
}

#[test]
fn an_address_that_is_not_one_is_ignored() {
    for hostile in [json!(42), json!("not a url"), json!("javascript:alert(1)")] {
        let found = links(json!({ "trusted": true, "bookUrl": hostile }));
        assert!(!found.is_empty());
        assert!(
            found.iter().all(|(_, href)| href.is_null()),
            "{hostile}: {found:?}"
        );
    }
}

/// An address longer than 2 KiB is ignored, with one warning in the log that
/// does not quote it: every diagnostic of every publication carries the link,
/// so a 1 MiB address made a publication of 500 diagnostics 500 MB.
#[test]
fn an_address_longer_than_2_kib_is_ignored_with_a_warning() {
    let base = "https://example.org/";
    let address = |len: usize| format!("{base}{}/", "b".repeat(len - base.len() - 1));
    for (len, linked) in [(2048, true), (2049, false), (1 << 20, false)] {
        let mut client = LspClient::start_with_env(&[]);
        client.initialize_with(
            json!({}),
            json!({ "trusted": true, "bookUrl": address(len) }),
        );
        let doc = uri("links.md");
        client.open(&doc, 1, DOC);
        let found = client.diagnostics(&doc, 1);
        assert!(found.len() >= 2, "{len}");
        for diagnostic in &found {
            let href = diagnostic["codeDescription"]["href"].as_str();
            assert_eq!(href.is_some(), linked, "{len}");
            if let Some(href) = href {
                assert!(href.starts_with(&address(len)), "{len}");
            }
        }
        let warnings: Vec<String> = client
            .log_messages()
            .into_iter()
            .filter(|m| m.starts_with("bookUrl"))
            .collect();
        let expected = if linked {
            Vec::new()
        } else {
            vec![format!("bookUrl is {len} bytes long, more than the 2048 a book's address may be; diagnostics carry no link")]
        };
        assert_eq!(warnings, expected);
        assert_eq!(client.shutdown(), Some(0));
    }
}
