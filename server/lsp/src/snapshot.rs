//! An immutable view of one document version: what every request reads.

use std::sync::{Arc, Mutex, OnceLock};

use promptforge_syntax::{is_prompt, Analysis, BlockEdit, ParsedFile};
use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::Url;

use crate::convert::Positions;
use crate::encoding::PositionEncoding;
use promptforge_analysis::ide::PromptText;
use promptforge_analysis::{FactsCache, Model};
use promptforge_engine::requirements::CatalogView;
use promptforge_syntax::Diagnostic;

/// Whether a document is served as a prompt (`editor.md` §1): never a test
/// file; else when its text is a prompt, or it stays one while open.
pub fn served_as_prompt(is_test_file: bool, text_is_prompt: bool, stays_prompt: bool) -> bool {
    !is_test_file && (text_is_prompt || stays_prompt)
}

/// What a new version takes from the version it replaces ([`Snapshot::hand_over`]).
#[derive(Debug)]
pub struct Previous {
    /// The parsed file's analysis that version held.
    generation: u64,
    /// Its model, when it built a complete one.
    model: Option<Arc<Model>>,
}

/// One version of one document, never changed once built.
#[derive(Debug)]
pub struct Snapshot {
    /// The document's URI.
    pub uri: Url,
    /// The version the client gave.
    pub version: i32,
    /// Which opening of the document this version belongs to (0: none, a file
    /// read from disk): each `didOpen` starts a new one. A client gives the
    /// same version number again when it reopens a document, so the version
    /// alone does not tell a closed document's analysis from the reopened one's
    /// ([`crate::documents::Documents::is_current`]).
    pub opening: u64,
    /// The text of this version (shared with the document's parsed file until the next edit).
    pub text: Arc<String>,
    /// The syntax crate's analysis of the text (shared with the parsed file).
    pub analysis: Arc<Analysis>,
    /// True when the document is served as a prompt: it is not a test file, and its
    /// text is a prompt (a `promptforge:` key) or the document stays one while open
    /// (opened as `promptforge` or `*.pf.md`, or a prompt at some version since it
    /// opened, `editor.md` §1). The prompt features serve only prompts.
    pub is_prompt: bool,
    /// True when the text itself is a prompt (a `promptforge:` key): false for a
    /// prompt whose frontmatter an edit broke.
    pub text_is_prompt: bool,
    /// True when the document is a prompt test file (`*.test.yaml`).
    pub is_test_file: bool,
    /// The session's column unit.
    pub encoding: PositionEncoding,
    /// The parsed file's analysis this snapshot holds ([`ParsedFile::generation`]).
    generation: u64,
    model: OnceLock<Arc<Model>>,
    /// The model of the version before, when this version is it after a
    /// [`BlockEdit`]: the model is then shifted from it, not built again. Taken
    /// when the model is made, and dropped when the version is abandoned.
    base: Mutex<Option<(Arc<Model>, BlockEdit)>>,
    facts: Arc<FactsCache>,
    /// Fires when nobody needs this version's analysis any more (a newer
    /// version arrived, the document closed, the session ended): building its
    /// model stops reading blocks then.
    abandon: CancellationToken,
    /// The diagnostics last found for this version, with the catalog view they
    /// were found against: publishing and every `codeAction` share them.
    found: Mutex<Option<(CatalogView, Arc<[Diagnostic]>)>>,
}

impl Snapshot {
    /// The snapshot of a parsed file's current state; `facts` is the document's
    /// Lua facts cache, shared by its snapshots; `stays_prompt` makes it a prompt
    /// whatever its text (the document is one while it stays open); `abandon`
    /// fires when its analysis is no longer needed.
    pub fn new(
        uri: Url,
        version: i32,
        parsed: &ParsedFile,
        encoding: PositionEncoding,
        (facts, abandon): (Arc<FactsCache>, CancellationToken),
        stays_prompt: bool,
    ) -> Self {
        let text = parsed.shared_text();
        let is_test_file = crate::test_uris::is_test_uri(&uri);
        let text_is_prompt = !is_test_file && is_prompt(&text);
        Snapshot {
            uri,
            version,
            opening: 0,
            is_prompt: served_as_prompt(is_test_file, text_is_prompt, stays_prompt),
            text_is_prompt,
            is_test_file,
            analysis: parsed.shared_analysis(),
            text,
            encoding,
            generation: parsed.generation(),
            model: OnceLock::new(),
            base: Mutex::new(None),
            facts,
            abandon,
            found: Mutex::new(None),
        }
    }

    /// This snapshot as a version of the document's `opening`.
    pub fn of_opening(mut self, opening: u64) -> Self {
        self.opening = opening;
        self
    }

    /// What the next version needs of the version it replaces, before the
    /// edit is applied: which analysis it holds and its model. When nothing but
    /// `this` holds the version, its analysis and model are given up too, so
    /// that the edit moves them in place instead of copying them (`this` is
    /// then left with an empty text and analysis: it is being replaced).
    pub fn hand_over(this: &mut Arc<Snapshot>) -> Previous {
        let generation = this.generation;
        // A model built while its version was abandoned may be incomplete: it
        // is never a base.
        let complete = !this.abandon.is_cancelled();
        let model = match Arc::get_mut(this) {
            Some(only) => {
                only.text = Arc::default();
                only.analysis = Arc::default();
                only.model.take()
            }
            None => this.model.get().cloned(),
        };
        Previous {
            generation,
            model: model.filter(|_| complete),
        }
    }

    /// This snapshot of `parsed` after an edit of the version `previous` was:
    /// when the edit was a [`BlockEdit`] of the analysis `previous` held and
    /// that version had built its model, this one's model is shifted from that
    /// one instead of built again.
    pub fn after(self, parsed: &ParsedFile, previous: Previous) -> Self {
        let edit = parsed
            .last_block_edit()
            .filter(|(from, _)| *from == previous.generation);
        if let (Some((_, edit)), Some(model)) = (edit, previous.model) {
            *self.base_lock() = Some((model, edit));
        }
        self
    }

    /// Says that nobody needs this version's analysis any more.
    pub fn abandon(&self) {
        self.abandon.cancel();
        self.base_lock().take();
    }

    fn base_lock(&self) -> std::sync::MutexGuard<'_, Option<(Arc<Model>, BlockEdit)>> {
        // The base is replaced or taken whole, so a poisoned lock holds a whole value.
        self.base
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Position conversions for this text.
    pub fn positions(&self) -> Positions<'_> {
        Positions {
            text: &self.text,
            index: &self.analysis.line_index,
            encoding: self.encoding,
        }
    }

    /// This version as the analysis layer's editor features read it.
    pub fn ide(&self) -> PromptText<'_> {
        PromptText {
            text: &self.text,
            analysis: &self.analysis,
            model: self.model(),
        }
    }

    /// The diagnostics of this version against `view`: `find`'s, computed once
    /// per view (a new catalog view finds them again).
    pub fn found_against(
        &self,
        view: &CatalogView,
        find: impl FnOnce() -> Vec<Diagnostic>,
    ) -> Arc<[Diagnostic]> {
        let cached = |found: &Option<(CatalogView, Arc<[Diagnostic]>)>| {
            found
                .as_ref()
                .filter(|(seen, _)| seen == view)
                .map(|(_, diagnostics)| Arc::clone(diagnostics))
        };
        if let Some(diagnostics) = cached(&self.found_lock()) {
            return diagnostics;
        }
        // Found outside the lock: a second caller meanwhile finds the same list.
        let diagnostics: Arc<[Diagnostic]> = find().into();
        *self.found_lock() = Some((view.clone(), Arc::clone(&diagnostics)));
        diagnostics
    }

    fn found_lock(&self) -> std::sync::MutexGuard<'_, Option<(CatalogView, Arc<[Diagnostic]>)>> {
        // The cache is replaced whole, so a poisoned lock still holds a whole value.
        self.found
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The semantic model (Lua facts, section visibility), built on first use
    /// (left incomplete when the version is abandoned meanwhile).
    pub fn model(&self) -> &Model {
        self.model.get_or_init(|| {
            let document = &self.analysis.document;
            // An abandoned version reads no block, not even the edited one.
            let base = (self.base_lock().take()).filter(|_| !self.abandon.is_cancelled());
            let shifted = base.and_then(|(previous, edit)| {
                let previous = Arc::unwrap_or_clone(previous);
                previous.after_block_edit(&self.text, document, &self.facts, &edit)
            });
            let abandoned = || self.abandon.is_cancelled();
            Arc::new(shifted.unwrap_or_else(|| {
                Model::build_until(&self.text, document, &self.facts, &abandoned)
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn diagnostics_are_found_once_per_catalog_view() {
        let parsed =
            promptforge_luacheck::parsed("---\nname: p\npromptforge: 0\n---\n# T\n".to_owned());
        let snapshot = Snapshot::new(
            Url::parse("file:///p.md").expect("a URI"),
            1,
            &parsed,
            PositionEncoding::default(),
            (Arc::default(), CancellationToken::new()),
            false,
        );
        let finds = Cell::new(0);
        let find = || {
            finds.set(finds.get() + 1);
            Vec::new()
        };
        let view = CatalogView::default();
        snapshot.found_against(&view, find);
        snapshot.found_against(&view, find);
        assert_eq!(finds.get(), 1);
        let other = CatalogView {
            registered: vec!["acme/x".to_owned()],
            ..CatalogView::default()
        };
        snapshot.found_against(&other, find);
        assert_eq!(finds.get(), 2);
    }
}
