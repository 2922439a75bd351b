//! The open documents: each one's text and version, and for the documents used
//! last (the hot set) its [`ParsedFile`] updated incrementally and an immutable
//! [`Snapshot`] per version that requests read.
//!
//! A document outside the hot set keeps only its text: its parse, its snapshot
//! and its Lua facts are dropped, and built again from the text the next time a
//! request or an edit needs them. An editor shows a handful of documents at once;
//! the others cost their text and nothing more.
//!
//! Every change is applied synchronously under one lock, so changes are applied
//! strictly in the order the handlers start (tower-lsp's issue #284: a
//! `didChange` handler must apply its change before its first `.await`).

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use promptforge_syntax::ParsedFile;
use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::{TextDocumentContentChangeEvent, Url};

use crate::convert::Positions;
use crate::encoding::PositionEncoding;
use crate::snapshot::{served_as_prompt, Snapshot};
use promptforge_analysis::FactsCache;

/// How many documents keep their parse, snapshot and facts between requests: the
/// ones used last.
pub const HOT_DOCUMENTS: usize = 8;

/// What a document in the hot set keeps besides its text.
struct Hot {
    parsed: ParsedFile,
    snapshot: Arc<Snapshot>,
    facts: Arc<FactsCache>,
}

/// One open document.
struct OpenDocument {
    /// The current text (shared with the hot parse, when there is one).
    text: Arc<String>,
    version: i32,
    /// Which opening of the document this is ([`Snapshot::opening`]).
    opening: u64,
    /// True once the document is a prompt: it stays one until it closes.
    stays_prompt: bool,
    /// The column unit its snapshots convert positions with.
    encoding: PositionEncoding,
    /// The parse, snapshot and facts, while the document is in the hot set.
    hot: Option<Hot>,
    /// When it was last used (a tick of [`OpenDocuments::uses`]).
    last_used: u64,
    /// For a test file: the prompt its current text names, once read (a change
    /// of the text forgets it).
    tested: Option<Arc<TestedPrompt>>,
}

/// The prompt a test file's text names ([`crate::test_files::tests_of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestedPrompt {
    /// Its path as the test file names it, against the test file's folder.
    pub path: PathBuf,
    /// The same path canonicalised, when it exists.
    pub canonical: Option<PathBuf>,
}

/// An open test file as [`Documents::open_tests`] lists it.
pub struct OpenTest {
    /// Its URI.
    pub uri: Url,
    /// Its current text.
    pub text: Arc<String>,
    /// The prompt that text names, when it was read already.
    pub tested: Option<Arc<TestedPrompt>>,
}

/// The open documents, the clock that orders their uses and the count of
/// `didOpen`s that numbers each opening.
#[derive(Default)]
struct OpenDocuments {
    by_uri: HashMap<Url, OpenDocument>,
    uses: u64,
    openings: u64,
}

impl OpenDocument {
    /// Parses the text again when the document is cold; true when it was.
    fn warm(&mut self, uri: &Url, abandon: CancellationToken) -> bool {
        if self.hot.is_some() {
            return false;
        }
        let parsed = promptforge_luacheck::parsed(self.text.as_str().to_owned());
        let facts = Arc::new(FactsCache::default());
        let snapshot = self.snapshot_of(uri, &parsed, &facts, abandon);
        self.stays_prompt |= snapshot.is_prompt;
        self.hot = Some(Hot {
            parsed,
            snapshot,
            facts,
        });
        true
    }

    /// A snapshot of `parsed` at the document's version.
    fn snapshot_of(
        &self,
        uri: &Url,
        parsed: &ParsedFile,
        facts: &Arc<FactsCache>,
        abandon: CancellationToken,
    ) -> Arc<Snapshot> {
        Arc::new(self.new_snapshot(uri, parsed, facts, abandon))
    }

    fn new_snapshot(
        &self,
        uri: &Url,
        parsed: &ParsedFile,
        facts: &Arc<FactsCache>,
        abandon: CancellationToken,
    ) -> Snapshot {
        Snapshot::new(
            uri.clone(),
            self.version,
            parsed,
            self.encoding,
            (Arc::clone(facts), abandon),
            self.stays_prompt,
        )
        .of_opening(self.opening)
    }

    /// Its snapshot when hot; else one built from its text and not kept.
    fn transient_snapshot(&self, uri: &Url, abandon: CancellationToken) -> Arc<Snapshot> {
        match &self.hot {
            Some(hot) => Arc::clone(&hot.snapshot),
            None => {
                let parsed = promptforge_luacheck::parsed(self.text.as_str().to_owned());
                self.snapshot_of(uri, &parsed, &Arc::new(FactsCache::default()), abandon)
            }
        }
    }
}

impl OpenDocuments {
    /// The next tick of the use clock.
    fn tick(&mut self) -> u64 {
        self.uses += 1;
        self.uses
    }

    /// The document at `uri`, hot and marked as used now.
    fn use_hot(&mut self, uri: &Url, abandon: CancellationToken) -> Option<&mut OpenDocument> {
        let now = self.tick();
        let document = self.by_uri.get_mut(uri)?;
        document.last_used = now;
        if document.warm(uri, abandon) {
            self.cool_down();
        }
        self.by_uri.get_mut(uri)
    }

    /// Drops the parse of every hot document but the [`HOT_DOCUMENTS`] used last.
    fn cool_down(&mut self) {
        let mut hot: Vec<(u64, &Url)> = self
            .by_uri
            .iter()
            .filter(|(_, document)| document.hot.is_some())
            .map(|(uri, document)| (document.last_used, uri))
            .collect();
        if hot.len() <= HOT_DOCUMENTS {
            return;
        }
        hot.sort_unstable();
        let coldest: Vec<Url> = hot[..hot.len() - HOT_DOCUMENTS]
            .iter()
            .map(|(_, uri)| (*uri).clone())
            .collect();
        for uri in coldest {
            if let Some(document) = self.by_uri.get_mut(&uri) {
                // A request may still hold the snapshot: it finishes with it, so it
                // is not abandoned, only no longer kept here.
                document.hot = None;
            }
        }
    }
}

/// What a document was when it closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    /// It was served as a prompt.
    pub is_prompt: bool,
    /// It was a prompt test file.
    pub is_test_file: bool,
}

/// A change for a document that is not open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotOpen(pub Url);

/// What applying a `didChange` gave.
#[derive(Debug)]
pub struct Changed {
    /// The snapshot of the new version.
    pub snapshot: Arc<Snapshot>,
    /// Protocol problems met while applying (a version that did not increase, a
    /// range past the end that was clamped); the change was applied anyway.
    pub protocol_errors: Vec<String>,
    /// The snapshot this one replaced, abandoned: the caller drops it once the new
    /// version's diagnostics are out, so freeing the old parse and facts is not
    /// part of the keystroke's latency.
    pub retired: Arc<Snapshot>,
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

/// Every open document, keyed by URI.
#[derive(Default)]
pub struct Documents {
    open: Mutex<OpenDocuments>,
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

    fn lock(&self) -> MutexGuard<'_, OpenDocuments> {
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
        let mut open = self.lock();
        open.openings += 1;
        let document = OpenDocument {
            text: Arc::new(text),
            version,
            opening: open.openings,
            stays_prompt: prompt_from_the_start(&uri, language_id),
            encoding,
            hot: None,
            last_used: 0,
            tested: None,
        };
        if let Some(reopened) = open.by_uri.insert(uri.clone(), document) {
            if let Some(hot) = reopened.hot {
                hot.snapshot.abandon();
            }
        }
        let document = open
            .use_hot(&uri, self.abandon_token())
            .expect("the document was just inserted");
        let hot = document.hot.as_ref().expect("use_hot parses the document");
        Arc::clone(&hot.snapshot)
    }

    /// Applies the changes of one `didChange` in order and returns the new snapshot.
    pub fn change(
        &self,
        uri: &Url,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: PositionEncoding,
    ) -> Result<Changed, NotOpen> {
        let abandon = self.abandon_token();
        let mut open = self.lock();
        let document = open
            .use_hot(uri, self.abandon_token())
            .ok_or_else(|| NotOpen(uri.clone()))?;
        let mut protocol_errors = Vec::new();
        if version <= document.version {
            protocol_errors.push(format!(
                "didChange for {uri}: version {version} does not increase on version {}",
                document.version
            ));
        }
        let hot = document.hot.as_mut().expect("use_hot parses the document");
        // Taken before the edit: the version replaced gives up its analysis and
        // model when nobody else reads it, so a keystroke moves them in place.
        let previous = Snapshot::hand_over(&mut hot.snapshot);
        // Set again below: meanwhile the parsed file's text is its own to edit.
        document.text = Arc::default();
        for change in changes {
            match change.range {
                None => replace_all(&mut hot.parsed, &change.text),
                Some(range) => {
                    let positions = Positions {
                        text: hot.parsed.text(),
                        index: &hot.parsed.analysis().line_index,
                        encoding,
                    };
                    let start = positions.offset(range.start);
                    let end = positions.offset(range.end);
                    if end < start {
                        protocol_errors.push(format!(
                            "didChange for {uri}: range {range:?} ends before it starts; applied as {end}..{start}"
                        ));
                    }
                    apply(
                        &mut hot.parsed,
                        start.min(end)..start.max(end),
                        &change.text,
                    );
                }
            }
        }
        document.version = version;
        document.encoding = encoding;
        document.text = hot.parsed.shared_text();
        document.tested = None;
        let hot = document.hot.as_ref().expect("use_hot parses the document");
        // A keystroke in one block shifts the model of the snapshot it replaces.
        let snapshot = (document.new_snapshot(uri, &hot.parsed, &hot.facts, abandon))
            .after(&hot.parsed, previous);
        let snapshot = Arc::new(snapshot);
        document.stays_prompt |= snapshot.is_prompt;
        let hot = document.hot.as_mut().expect("the document is hot");
        let retired = std::mem::replace(&mut hot.snapshot, Arc::clone(&snapshot));
        retired.abandon();
        Ok(Changed {
            snapshot,
            protocol_errors,
            retired,
        })
    }

    /// Closes a document: what it was, when it was open. Its snapshot, if it
    /// had one, is abandoned; a document outside the hot set is not parsed for
    /// this (its last snapshot's answer is in `stays_prompt`).
    pub fn close(&self, uri: &Url) -> Option<Closed> {
        let closed = self.lock().by_uri.remove(uri)?;
        Some(match closed.hot {
            Some(hot) => {
                hot.snapshot.abandon();
                Closed {
                    is_prompt: hot.snapshot.is_prompt,
                    is_test_file: hot.snapshot.is_test_file,
                }
            }
            None => {
                let is_test_file = crate::test_uris::is_test_uri(uri);
                Closed {
                    is_prompt: served_as_prompt(is_test_file, false, closed.stays_prompt),
                    is_test_file,
                }
            }
        })
    }

    /// The latest snapshot of a document (it joins the hot set).
    pub fn snapshot(&self, uri: &Url) -> Option<Arc<Snapshot>> {
        let mut open = self.lock();
        let document = open.use_hot(uri, self.abandon_token())?;
        document.hot.as_ref().map(|hot| Arc::clone(&hot.snapshot))
    }

    /// The latest snapshot of every open document; those outside the hot set are
    /// parsed for the caller and not kept.
    pub fn all(&self) -> Vec<Arc<Snapshot>> {
        let open = self.lock();
        open.by_uri
            .iter()
            .map(|(uri, document)| document.transient_snapshot(uri, self.abandon_token()))
            .collect()
    }

    /// The URI and text of every open document whose URI `wanted` accepts,
    /// without parsing any document.
    pub fn texts_where(&self, wanted: impl Fn(&Url) -> bool) -> Vec<(Url, Arc<String>)> {
        self.lock()
            .by_uri
            .iter()
            .filter(|(uri, _)| wanted(uri))
            .map(|(uri, document)| (uri.clone(), Arc::clone(&document.text)))
            .collect()
    }

    /// The open documents `is_test` accepts, with the prompt each one's current
    /// text names when it is known.
    pub fn open_tests(&self, is_test: impl Fn(&Url) -> bool) -> Vec<OpenTest> {
        self.lock()
            .by_uri
            .iter()
            .filter(|(uri, _)| is_test(uri))
            .map(|(uri, document)| OpenTest {
                uri: uri.clone(),
                text: Arc::clone(&document.text),
                tested: document.tested.clone(),
            })
            .collect()
    }

    /// Keeps the prompt `text` names for the test file at `uri`, while `text` is
    /// still its current text.
    pub fn remember_tested(&self, uri: &Url, text: &Arc<String>, tested: Arc<TestedPrompt>) {
        if let Some(document) = self.lock().by_uri.get_mut(uri) {
            if Arc::ptr_eq(&document.text, text) {
                document.tested = Some(tested);
            }
        }
    }

    /// The current text of an open document.
    pub fn text(&self, uri: &Url) -> Option<Arc<String>> {
        self.lock()
            .by_uri
            .get(uri)
            .map(|document| Arc::clone(&document.text))
    }

    /// True when the document is open.
    pub fn is_open(&self, uri: &Url) -> bool {
        self.lock().by_uri.contains_key(uri)
    }

    /// True when `snapshot` is of the document's current version: the document
    /// is open, at that version, and was not closed since the snapshot was
    /// taken (a reopened document starts a new opening, at whatever version the
    /// client gives, often the same number again).
    pub fn is_current(&self, snapshot: &Snapshot) -> bool {
        self.lock()
            .by_uri
            .get(&snapshot.uri)
            .is_some_and(|d| d.opening == snapshot.opening && d.version == snapshot.version)
    }
}

/// Replaces `bytes` (char boundaries inside the text, from [`Positions::offset`])
/// with `text` in the parsed file.
fn apply(parsed: &mut ParsedFile, bytes: Range<usize>, text: &str) {
    // `Positions::offset` gives char boundaries inside the same text, so `edit` does
    // not fail; should it, it left the text unchanged and reports why.
    let _ = parsed.edit(bytes, text);
}

/// Replaces the whole text of `parsed` with `new` (a full-text `didChange`) as one
/// edit of the span where the two differ, so only what changed is analysed again.
fn replace_all(parsed: &mut ParsedFile, new: &str) {
    let (old_span, new_span) = differing_span(parsed.text(), new);
    if old_span.is_empty() && new_span.is_empty() {
        return;
    }
    apply(parsed, old_span, &new[new_span]);
}

/// The byte ranges of `old` and `new` between their longest common prefix and
/// suffix (on char boundaries): replacing the first with the second turns `old`
/// into `new`.
fn differing_span(old: &str, new: &str) -> (Range<usize>, Range<usize>) {
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let most = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(most)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    (prefix..old.len() - suffix, prefix..new.len() - suffix)
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

    #[test]
    fn a_closed_documents_version_is_not_the_reopened_ones_at_the_same_number() {
        let documents = Documents::new(CancellationToken::new());
        let uri = Url::parse("file:///p.pf.md").expect("a URI");
        let text = "---\nname: p\npromptforge: 0\n---\n# T\n";
        let encoding = PositionEncoding::default();
        let closed = documents.open(uri.clone(), "promptforge", text.into(), 1, encoding);
        assert!(documents.is_current(&closed));
        documents.close(&uri);
        assert!(!documents.is_current(&closed));
        let reopened = documents.open(uri.clone(), "promptforge", text.into(), 1, encoding);
        assert_eq!((closed.version, reopened.version), (1, 1));
        assert!(documents.is_current(&reopened));
        assert!(!documents.is_current(&closed), "the closed opening's");
        // A didOpen of a document already open starts a new opening too.
        let again = documents.open(uri.clone(), "promptforge", text.into(), 1, encoding);
        assert!(documents.is_current(&again) && !documents.is_current(&reopened));
        // A snapshot of a document outside the hot set is current as well.
        for n in 0..HOT_DOCUMENTS {
            let other = Url::parse(&format!("file:///o{n}.pf.md")).expect("a URI");
            documents.open(other, "promptforge", text.into(), 1, encoding);
        }
        let cold = documents.all();
        let cold = cold.iter().find(|s| s.uri == uri).expect("still open");
        assert!(!Arc::ptr_eq(cold, &again), "parsed again");
        assert!(documents.is_current(cold));
        let edited = documents.change(&uri, 2, full("# U\n"), encoding);
        assert!(
            !documents.is_current(cold) && documents.is_current(&edited.expect("open").snapshot)
        );
    }

    fn hot_count(documents: &Documents) -> usize {
        documents
            .lock()
            .by_uri
            .values()
            .filter(|d| d.hot.is_some())
            .count()
    }

    #[test]
    fn only_the_documents_used_last_keep_their_parse() {
        let documents = Documents::new(CancellationToken::new());
        let encoding = PositionEncoding::default();
        let uri = |n: usize| Url::parse(&format!("file:///p{n}.pf.md")).expect("a URI");
        let text = |n: usize| format!("---\nname: p{n}\npromptforge: 0\n---\n# T{n}\n");
        for n in 0..HOT_DOCUMENTS + 5 {
            documents.open(uri(n), "promptforge", text(n), 1, encoding);
        }
        assert_eq!(hot_count(&documents), HOT_DOCUMENTS);
        // The first document went cold; asking for it parses its text again,
        // and it is then the one used last.
        assert!(documents.lock().by_uri[&uri(0)].hot.is_none());
        let again = documents.snapshot(&uri(0)).expect("open");
        assert_eq!(again.text.as_str(), text(0));
        assert!(again.is_prompt);
        assert!(documents.lock().by_uri[&uri(0)].hot.is_some());
        assert_eq!(hot_count(&documents), HOT_DOCUMENTS);
        // Every document answers, hot or cold, without joining the hot set.
        let all = documents.all();
        assert_eq!(all.len(), HOT_DOCUMENTS + 5);
        assert_eq!(hot_count(&documents), HOT_DOCUMENTS);
        // A cold document takes an edit: its text is parsed and edited.
        assert!(documents.lock().by_uri[&uri(1)].hot.is_none());
        let edited = documents
            .change(&uri(1), 2, full(&text(7)), encoding)
            .expect("open")
            .snapshot;
        assert_eq!(edited.text.as_str(), text(7));
        assert_eq!(edited.version, 2);
        assert_eq!(documents.text(&uri(1)).as_deref(), Some(&text(7)));
        // A cold document that was a prompt from the start stays one.
        let untitled = Url::parse("untitled:Untitled-1").expect("a URI");
        documents.open(
            untitled.clone(),
            "promptforge",
            "# no frontmatter\n".into(),
            1,
            encoding,
        );
        for n in 0..HOT_DOCUMENTS {
            documents.snapshot(&uri(n));
        }
        assert!(documents.lock().by_uri[&untitled].hot.is_none());
        assert!(documents.snapshot(&untitled).expect("open").is_prompt);
        // A cold document closes with what its last snapshot said, unparsed.
        let tests = Url::parse("file:///p0.test.yaml").expect("a URI");
        documents.open(tests.clone(), "yaml", "cases: []\n".into(), 1, encoding);
        for n in 0..HOT_DOCUMENTS {
            documents.snapshot(&uri(n));
        }
        let cold = |uri: &Url| documents.lock().by_uri[uri].hot.is_none();
        assert!(cold(&untitled) && cold(&tests) && cold(&uri(HOT_DOCUMENTS + 2)));
        let closed = |is_prompt, is_test_file| {
            Some(Closed {
                is_prompt,
                is_test_file,
            })
        };
        assert_eq!(documents.close(&untitled), closed(true, false));
        assert_eq!(documents.close(&tests), closed(false, true));
        assert_eq!(
            documents.close(&uri(HOT_DOCUMENTS + 2)),
            closed(true, false)
        );
        assert_eq!(documents.close(&uri(0)), closed(true, false));
        assert_eq!(documents.close(&uri(0)), None);
    }

    #[test]
    fn a_full_text_change_edits_only_the_span_that_differs() {
        assert_eq!(differing_span("abcdef", "abXYef"), (2..4, 2..4));
        assert_eq!(differing_span("abc", "abc"), (3..3, 3..3));
        assert_eq!(differing_span("", "new"), (0..0, 0..3));
        assert_eq!(differing_span("aaa", "aaaa"), (3..3, 3..4));
        // Shared bytes inside one character do not split it: é is C3 A9, è is C3 A8.
        assert_eq!(differing_span("xé", "xè"), (1..3, 1..3));
        assert_eq!(differing_span("éx", "èx"), (0..2, 0..2));
        // Past one compared chunk, on both sides, and a suffix that may not
        // overlap the prefix.
        let long = "x".repeat(200);
        let edited = format!("{}Y{}", &long[..130], &long[130..]);
        assert_eq!(differing_span(&long, &edited), (130..130, 130..131));
        let (a, b) = (format!("{long}ab{long}"), format!("{long}aXb{long}"));
        assert_eq!(differing_span(&a, &b), (201..201, 201..202));
        // Every one-byte insertion and deletion in a text of mixed runs: the
        // span turns the old text into the new, and the prefix is the longest.
        let base: String = (0..300)
            .map(|i| if i % 7 < 3 { 'a' } else { 'b' })
            .collect();
        for at in 0..=base.len() {
            let inserted = format!("{}c{}", &base[..at], &base[at..]);
            for (old, new) in [(&base, &inserted), (&inserted, &base)] {
                let (old_span, new_span) = differing_span(old, new);
                let mut rebuilt = old.clone();
                rebuilt.replace_range(old_span.clone(), &new[new_span]);
                assert_eq!(&rebuilt, new, "at {at}");
                assert_eq!(old_span.start, at, "at {at}");
            }
        }
        let documents = Documents::new(CancellationToken::new());
        let uri = Url::parse("file:///p.pf.md").expect("a URI");
        let encoding = PositionEncoding::default();
        let before = "---\nname: p\npromptforge: 0\n---\n# T\n```lua\nlocal a = 1\n```\n";
        let after = "---\nname: p\npromptforge: 0\n---\n# T\n```lua\nlocal ab = 1\n```\n";
        documents.open(uri.clone(), "promptforge", before.into(), 1, encoding);
        let snapshot = documents
            .change(&uri, 2, full(after), encoding)
            .expect("open")
            .snapshot;
        assert_eq!(snapshot.text.as_str(), after);
        // The same analysis as a fresh parse of the new text.
        let fresh = promptforge_luacheck::parsed(after.to_owned());
        assert_eq!(
            format!("{:?}", snapshot.analysis),
            format!("{:?}", fresh.analysis())
        );
    }

    /// A ranged change inserting `text` at `line`:`character`.
    fn typed(line: u32, character: u32, text: &str) -> Vec<TextDocumentContentChangeEvent> {
        let at = tower_lsp::lsp_types::Position { line, character };
        vec![TextDocumentContentChangeEvent {
            range: Some(tower_lsp::lsp_types::Range { start: at, end: at }),
            range_length: None,
            text: text.to_owned(),
        }]
    }

    #[test]
    fn a_keystroke_in_a_block_moves_the_model_and_spares_a_version_still_read() {
        let documents = Documents::new(CancellationToken::new());
        let uri = Url::parse("file:///p.pf.md").expect("a URI");
        let text = "---\nname: p\npromptforge: 0\nmodels:\n  writer: {}\n---\n# T\n\n## A\n\n```lua\nmodels.use('writer')\n```\n\n## B\n\n```lua\njump('## A')\n```\n";
        let encoding = PositionEncoding::default();
        let first = documents.open(uri.clone(), "promptforge", text.to_owned(), 1, encoding);
        let problems = first.model().problems.len();
        let built = |s: &Snapshot| {
            promptforge_analysis::Model::build(
                &s.text,
                &s.analysis.document,
                &FactsCache::default(),
            )
        };
        // `writer` -> `writerx` in the block of ## A, while `first` is still held.
        let second = (documents.change(&uri, 2, typed(11, 18, "x"), encoding))
            .expect("open")
            .snapshot;
        assert_eq!(second.model(), &built(&second));
        assert_eq!(second.model().problems.len(), problems + 1);
        // The version still read keeps its analysis and model.
        assert_eq!(first.analysis.document.lua_blocks.len(), 2);
        assert_eq!(first.model().problems.len(), problems);
        drop(first);
        // Nobody holds `second` now but the documents: the next keystroke takes
        // its analysis and model over, and gives the same as a new build.
        drop(second);
        let third = (documents.change(&uri, 3, typed(17, 6, "#"), encoding))
            .expect("open")
            .snapshot;
        assert!(third.text.contains("jump('### A')"));
        assert_eq!(third.model(), &built(&third));
        let parsed = promptforge_luacheck::parse(&third.text);
        assert_eq!(*third.analysis, parsed);
    }
}
