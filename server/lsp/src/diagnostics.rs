//! `textDocument/publishDiagnostics`: the semantic layer's diagnostics
//! ([`promptforge_analysis::diagnostics`]: the parse's, the static Lua checks', the
//! requirements against the Host's catalog, the Lua uses of slots it leaves
//! unbound), rendered with exact ranges, a severity, the rule's stable code and
//! related information; and a prompt test file's own problems
//! ([`crate::test_files::load`]).

use std::sync::Arc;

use promptforge_engine::requirements::CatalogView;
use promptforge_syntax::Severity;
use std::sync::OnceLock;

use tower_lsp::lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, Url,
};

use crate::documents::Documents;
use crate::snapshot::Snapshot;

/// The `source` of every diagnostic the server publishes.
pub const SOURCE: &str = "promptforge";

/// The `initializationOptions` key giving the address of the PromptForge book;
/// with it, each diagnostic links to its code's entry in the diagnostics reference.
pub const BOOK_URL_OPTION: &str = "bookUrl";

/// The longest book address the server takes, in bytes, as given and as the
/// server writes it (percent-encoding may lengthen it): 2 KiB. Every diagnostic
/// of every publication carries a link made from it, so its length is paid once
/// per diagnostic on each edit: a 1 MiB address made each publication of a
/// prompt of 500 diagnostics 500 MB.
pub const MAX_BOOK_URL_BYTES: usize = 2048;

/// The book's address for this process's one session, when the client gave one.
static BOOK: OnceLock<Url> = OnceLock::new();

/// Takes the book's address from the `bookUrl` initialization option: an
/// `http`, `https` or `file` URL of the book's root, of at most
/// [`MAX_BOOK_URL_BYTES`]. Anything else is ignored (diagnostics then carry no
/// link); the reason is returned for the log.
pub fn set_book_url(option: &serde_json::Value) -> Result<(), String> {
    let _ = BOOK.set(book_root(option)?);
    Ok(())
}

/// The book's root `option` gives, or why it gives none (never quoting it: it
/// may be long).
fn book_root(option: &serde_json::Value) -> Result<Url, String> {
    let text = option
        .as_str()
        .ok_or_else(|| format!("{BOOK_URL_OPTION} is not a string; diagnostics carry no link"))?;
    let too_long = |len: usize| {
        format!(
            "{BOOK_URL_OPTION} is {len} bytes long, more than the {MAX_BOOK_URL_BYTES} a book's address may be; diagnostics carry no link"
        )
    };
    if text.len() > MAX_BOOK_URL_BYTES {
        return Err(too_long(text.len()));
    }
    let mut root = Url::parse(text)
        .map_err(|e| format!("{BOOK_URL_OPTION} is not a URL ({e}); diagnostics carry no link"))?;
    if !matches!(root.scheme(), "http" | "https" | "file") {
        return Err(format!(
            "{BOOK_URL_OPTION} must be an http, https or file URL; diagnostics carry no link"
        ));
    }
    if !root.path().ends_with('/') {
        root.set_path(&format!("{}/", root.path()));
    }
    if root.as_str().len() > MAX_BOOK_URL_BYTES {
        return Err(too_long(root.as_str().len()));
    }
    Ok(root)
}

/// The entry of `code` in the book's diagnostics reference: its `## Name`
/// heading, whose id mdBook makes by lowercasing the name.
pub fn book_entry(root: &Url, code: &str) -> Option<Url> {
    let mut entry = root.join("reference/diagnostics.html").ok()?;
    entry.set_fragment(Some(&code.to_ascii_lowercase()));
    Some(entry)
}

/// The semantic layer's diagnostics of a snapshot against its catalog; none for a
/// document that is not a prompt; for a prompt whose text an edit made no prompt,
/// the error `check` gives such text ([`broken_prompt`]). Found once per
/// snapshot and view: publishing and each `codeAction` share them.
pub fn found(snapshot: &Snapshot, view: &CatalogView) -> Arc<[promptforge_syntax::Diagnostic]> {
    snapshot.found_against(view, || {
        if !snapshot.is_prompt {
            return Vec::new();
        }
        if !snapshot.text_is_prompt {
            return broken_prompt(snapshot);
        }
        promptforge_analysis::diagnostics(
            &snapshot.text,
            &snapshot.analysis,
            snapshot.model(),
            view,
        )
    })
}

/// The diagnostics of a document that stays a prompt while its text is none
/// (`editor.md` §1): what `check` gives the same text named explicitly
/// ([`promptforge_syntax::Analysis::not_a_prompt_diagnostics`]).
pub fn broken_prompt(snapshot: &Snapshot) -> Vec<promptforge_syntax::Diagnostic> {
    snapshot.analysis.not_a_prompt_diagnostics(&snapshot.text)
}

/// The diagnostics of a snapshot against its catalog, as the protocol's.
pub fn diagnostics(snapshot: &Snapshot, view: &CatalogView) -> Vec<Diagnostic> {
    found(snapshot, view)
        .iter()
        .map(|d| render(snapshot, d))
        .collect()
}

/// The diagnostics of a test file: the parse's, a prompt that cannot be read, the
/// aliases its prompt does not know (the open prompt's text when it is open).
pub fn test_file_diagnostics(snapshot: &Snapshot, documents: &Documents) -> Vec<Diagnostic> {
    let loaded = crate::test_files::load(documents, &snapshot.uri, &snapshot.text);
    loaded
        .problems
        .iter()
        .map(|d| render(snapshot, d))
        .collect()
}

/// One diagnostic as the protocol's.
pub fn render(snapshot: &Snapshot, diagnostic: &promptforge_syntax::Diagnostic) -> Diagnostic {
    let positions = snapshot.positions();
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location::new(snapshot.uri.clone(), positions.range(&r.range)),
            message: r.message.clone(),
        })
        .collect();
    Diagnostic {
        range: positions.range(&diagnostic.range),
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Information => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(diagnostic.code.name().to_owned())),
        code_description: BOOK
            .get()
            .and_then(|root| book_entry(root, diagnostic.code.name()))
            .map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_owned()),
        message: diagnostic.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_book_address_longer_than_2_kib_is_refused_as_given_and_as_written() {
        let address = |len: usize| {
            let base = "https://example.org/";
            format!("{base}{}/", "b".repeat(len - base.len() - 1))
        };
        let root = book_root(&serde_json::json!(address(MAX_BOOK_URL_BYTES)));
        assert_eq!(root.map(|r| r.as_str().len()), Ok(MAX_BOOK_URL_BYTES));
        assert_eq!(
            book_root(&serde_json::json!(address(MAX_BOOK_URL_BYTES + 1))),
            Err("bookUrl is 2049 bytes long, more than the 2048 a book's address may be; diagnostics carry no link".to_owned())
        );
        let huge = book_root(&serde_json::json!(address(1 << 20))).unwrap_err();
        assert!(huge.starts_with("bookUrl is 1048576 bytes long"), "{huge}");
        // Within the bound as given, past it once spaces are percent-encoded.
        let spaced = format!("https://example.org/a{}b", " ".repeat(1000));
        assert_eq!(spaced.len(), 1022);
        assert_eq!(
            book_root(&serde_json::json!(spaced)),
            Err("bookUrl is 3023 bytes long, more than the 2048 a book's address may be; diagnostics carry no link".to_owned())
        );
    }

    #[test]
    fn a_code_links_to_its_heading_in_the_diagnostics_reference() {
        let root = Url::parse("https://example.org/promptforge/").expect("a URL");
        assert_eq!(
            book_entry(&root, "UnboundToolSlot")
                .map(String::from)
                .as_deref(),
            Some("https://example.org/promptforge/reference/diagnostics.html#unboundtoolslot")
        );
    }
}
