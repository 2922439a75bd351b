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
use tokio_util::sync::CancellationToken;
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
    /// Fires when the session ends: every snapshot's analysis stops then.
    session: CancellationToken,
}

impl Documents {
    /// No document open; the analyses of their versions stop when `session` fires.
    pub fn new(session: CancellationToken) -> Self {
        Documents {
            open: Mutex::default(),
            session,
        }
    }

    /// A token for a new version's analysis: fired when the session ends.
    fn abandon_token(&self) -> CancellationToken {
        self.session.child_token()
    }

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
            (Arc::clone(&facts), self.abandon_token()),
            from_the_start,
        ));
        let document = OpenDocument {
            facts,
            parsed,
            version,
            stays_prompt: snapshot.is_prompt,
            snapshot: Arc::clone(&snapshot),
        };
        if let Some(reopened) = self.lock().insert(uri, document) {
            reopened.snapshot.abandon();
        }
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
            (Arc::clone(&document.facts), self.abandon_token()),
            document.stays_prompt,
        ));
        document.stays_prompt |= snapshot.is_prompt;
        let older = std::mem::replace(&mut document.snapshot, Arc::clone(&snapshot));
        older.abandon();
        Ok(Changed {
            snapshot,
            protocol_errors,
        })
    }

    /// Closes a document; its last snapshot (abandoned) when it was open.
    pub fn close(&self, uri: &Url) -> Option<Arc<Snapshot>> {
        let closed = self.lock().remove(uri).map(|d| d.snapshot);
        if let Some(snapshot) = &closed {
            snapshot.abandon();
        }
        closed
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

#[cfg(test)]
mod tests {
    use super::*;

    fn full(text: &str) -> Vec<TextDocumentContentChangeEvent> {
        vec![TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: text.to_owned(),
        }]
    }

    /// The callees the model of `snapshot` read.
    fn callees(snapshot: &Snapshot) -> Vec<String> {
        let model = snapshot.model();
        model
            .blocks
            .iter()
            .flat_map(|facts| facts.calls.iter().map(|c| c.callee.clone()))
            .collect()
    }

    #[test]
    fn a_version_nobody_needs_is_not_analysed() {
        let session = CancellationToken::new();
        let documents = Documents::new(session.clone());
        let uri = Url::parse("file:///p.pf.md").expect("a URI");
        let text = |call: &str| {
            format!("---\nname: p\npromptforge: 0\n---\n# T\n```lua\n{call}('## T')\n```\n")
        };
        let encoding = PositionEncoding::default();
        let first = documents.open(uri.clone(), "promptforge", text("jump"), 1, encoding);
        let second = documents
            .change(&uri, 2, full(&text("call")), encoding)
            .expect("open")
            .snapshot;
        // A newer version arrived: the first one's blocks are left unread.
        assert!(callees(&first).is_empty());
        assert_eq!(callees(&second), ["call"]);
        // The session ended: so did the analysis of every version.
        let third = documents
            .change(&uri, 3, full(&text("fanout")), encoding)
            .expect("open")
            .snapshot;
        session.cancel();
        assert!(callees(&third).is_empty());
        // A closed document's last version too.
        let documents = Documents::new(CancellationToken::new());
        let last = documents.open(uri.clone(), "promptforge", text("jump"), 1, encoding);
        documents.close(&uri);
        assert!(callees(&last).is_empty());
    }
}
