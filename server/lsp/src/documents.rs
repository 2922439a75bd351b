//! The open documents: each one's [`ParsedFile`] (its one mutable text) updated
//! incrementally, its version, and an immutable [`Snapshot`] per version that
//! requests read.
//!
//! Every change is applied synchronously under one lock, so changes are applied
//! strictly in the order the handlers start (tower-lsp's issue #284: a
//! `didChange` handler must apply its change before its first `.await`).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use promptforge_syntax::ParsedFile;
use tower_lsp::lsp_types::{TextDocumentContentChangeEvent, Url};

use crate::encoding::{PositionEncoding, Positions};
use crate::snapshot::Snapshot;
use promptforge_analysis::FactsCache;

/// One open document.
struct OpenDocument {
    parsed: ParsedFile,
    version: i32,
    snapshot: Arc<Snapshot>,
    facts: Arc<FactsCache>,
    /// True once the document is a prompt: it stays one until it closes.
    stays_prompt: bool,
}

/// The language id of a prompt (`editor.md` §1): a document opened with it is a
/// prompt from the start.
pub const PROMPT_LANGUAGE_ID: &str = "promptforge";

/// The file name ending of a prompt that is one from the start.
pub const PROMPT_SUFFIX: &str = ".pf.md";

/// True when a document opened as `uri` with `language_id` is a prompt whatever its
/// text: the language id `promptforge`, or a name ending in `.pf.md`.
pub fn prompt_from_the_start(uri: &Url, language_id: &str) -> bool {
    language_id == PROMPT_LANGUAGE_ID || uri.path().ends_with(PROMPT_SUFFIX)
}

/// What applying a `didChange` gave.
#[derive(Debug)]
pub struct Changed {
    /// The snapshot of the new version.
    pub snapshot: Arc<Snapshot>,
    /// Protocol problems met while applying (a version that did not increase, a
    /// range past the end that was clamped); the change was applied anyway.
    pub protocol_errors: Vec<String>,
}

/// A change for a document that is not open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotOpen(pub Url);

/// Every open document, keyed by URI.
#[derive(Default)]
pub struct Documents {
    open: Mutex<HashMap<Url, OpenDocument>>,
}

impl Documents {
    fn lock(&self) -> MutexGuard<'_, HashMap<Url, OpenDocument>> {
        // A panic while the lock was held leaves each document whole (every update
        // replaces fields only after it succeeded), so a poisoned lock is still usable.
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens (or reopens) a document and returns its first snapshot; one opened
    /// with `language_id` `promptforge` or named `*.pf.md` is a prompt from the start.
    pub fn open(
        &self,
        uri: Url,
        language_id: &str,
        text: String,
        version: i32,
        encoding: PositionEncoding,
    ) -> Arc<Snapshot> {
        let parsed = ParsedFile::new(text);
        let facts = Arc::new(FactsCache::default());
        let from_the_start = prompt_from_the_start(&uri, language_id);
        let snapshot = Arc::new(Snapshot::new(
            uri.clone(),
            version,
            &parsed,
            encoding,
            Arc::clone(&facts),
            from_the_start,
        ));
        let document = OpenDocument {
            facts,
            parsed,
            version,
            stays_prompt: snapshot.is_prompt,
            snapshot: Arc::clone(&snapshot),
        };
        self.lock().insert(uri, document);
        snapshot
    }

    /// Applies the changes of one `didChange` in order and returns the new snapshot.
    pub fn change(
        &self,
        uri: &Url,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: PositionEncoding,
    ) -> Result<Changed, NotOpen> {
        let mut open = self.lock();
        let document = open.get_mut(uri).ok_or_else(|| NotOpen(uri.clone()))?;
        let mut protocol_errors = Vec::new();
        if version <= document.version {
            protocol_errors.push(format!(
                "didChange for {uri}: version {version} does not increase on version {}",
                document.version
            ));
        }
        for change in changes {
            match change.range {
                None => document.parsed = ParsedFile::new(change.text),
                Some(range) => {
                    let positions = Positions {
                        text: document.parsed.text(),
                        index: &document.parsed.analysis().line_index,
                        encoding,
                    };
                    let start = positions.offset(range.start);
                    let end = positions.offset(range.end);
                    if end < start {
                        protocol_errors.push(format!(
                            "didChange for {uri}: range {range:?} ends before it starts; applied as {end}..{start}"
                        ));
                    }
                    let bytes = start.min(end)..start.max(end);
                    apply(document, bytes, &change.text);
                }
            }
        }
        document.version = version;
        let snapshot = Arc::new(Snapshot::new(
            uri.clone(),
            version,
            &document.parsed,
            encoding,
            Arc::clone(&document.facts),
            document.stays_prompt,
        ));
        document.stays_prompt |= snapshot.is_prompt;
        document.snapshot = Arc::clone(&snapshot);
        Ok(Changed {
            snapshot,
            protocol_errors,
        })
    }

    /// Closes a document; its last snapshot when it was open.
    pub fn close(&self, uri: &Url) -> Option<Arc<Snapshot>> {
        self.lock().remove(uri).map(|d| d.snapshot)
    }

    /// The latest snapshot of a document.
    pub fn snapshot(&self, uri: &Url) -> Option<Arc<Snapshot>> {
        self.lock().get(uri).map(|d| Arc::clone(&d.snapshot))
    }

    /// The latest snapshot of every open document.
    pub fn all(&self) -> Vec<Arc<Snapshot>> {
        self.lock()
            .values()
            .map(|d| Arc::clone(&d.snapshot))
            .collect()
    }

    /// The latest version of a document.
    pub fn version(&self, uri: &Url) -> Option<i32> {
        self.lock().get(uri).map(|d| d.version)
    }
}

/// Replaces `bytes` (char boundaries inside the text, from [`Positions::offset`])
/// with `text` in the parsed file.
fn apply(document: &mut OpenDocument, bytes: Range<usize>, text: &str) {
    // `Positions::offset` gives char boundaries inside the same text, so `edit` does
    // not fail; should it, it left the text unchanged and reports why.
    let _ = document.parsed.edit(bytes, text);
}
