//! Computing and publishing diagnostics: for a handler (after an edit) and
//! outside any handler (when a Plugin's background activation finishes, or the
//! configuration changes). Cheap to clone: every part is shared.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;
use tower_lsp::lsp_types::MessageType;
use tower_lsp::Client;

use promptforge_engine::requirements::CatalogView;
use promptforge_transport::payload_text;

use crate::catalog::Catalogs;
use crate::documents::Documents;
use crate::publish_order::PublishOrder;
use crate::run_failures::RunFailures;
use crate::snapshot::Snapshot;

/// A prompt up to this size has its diagnostics computed on the handler's own
/// thread once its folder's Host is loaded (a few milliseconds at most, even all
/// Lua read afresh): handing the work to the blocking pool and back cost a
/// keystroke on a 4,000-line prompt 12% of its time. A larger prompt, a test
/// file (which reads its prompt from disk) and a folder seen first (which loads
/// its configuration) go to the blocking pool.
const INLINE_BYTES: usize = 128 * 1024;

/// What publishing needs, shared by the server and its background tasks.
#[derive(Clone)]
pub struct Publisher {
    /// The client.
    pub client: Client,
    /// The open documents.
    pub documents: Arc<Documents>,
    /// The Hosts' catalogs.
    pub catalogs: Arc<Catalogs>,
    /// The runs' failures shown in place, merged into every publication.
    pub failures: Arc<RunFailures>,
    /// Serialises publishing, so a stale version is never published after a
    /// newer one, nor a publication that read state earlier (a Plugin still
    /// activating) over one that read it later.
    order: Arc<PublishOrder>,
}

/// The catalog view of a snapshot: its declared Plugins and model labels (none for
/// a document whose text is not a prompt or has no frontmatter).
pub fn catalog_view(catalogs: &Catalogs, snapshot: &Snapshot) -> CatalogView {
    let frontmatter = snapshot
        .analysis
        .document
        .frontmatter
        .as_ref()
        .filter(|_| snapshot.text_is_prompt);
    catalogs.view(&snapshot.uri, frontmatter)
}

impl Publisher {
    /// A publisher for `client`'s documents.
    pub fn new(client: Client, documents: Arc<Documents>, catalogs: Arc<Catalogs>) -> Self {
        Publisher {
            client,
            documents,
            catalogs,
            failures: Arc::new(RunFailures::default()),
            order: Arc::new(PublishOrder::default()),
        }
    }

    /// Computes and publishes the diagnostics of `snapshot` (a prompt's, or a test
    /// file's) with the runs' failures shown in place, unless a newer version
    /// arrived meanwhile (then the newer one publishes) or a publication of the
    /// same document that started later, so read newer state, already published.
    /// `was_prompt` makes a document that stopped being a prompt get an empty
    /// list once.
    pub async fn publish(&self, snapshot: Arc<Snapshot>, was_prompt: bool) {
        if !snapshot.is_prompt && !snapshot.is_test_file && !was_prompt {
            return;
        }
        let ticket = self.order.ticket();
        let work = Arc::clone(&snapshot);
        let catalogs = Arc::clone(&self.catalogs);
        let documents = Arc::clone(&self.documents);
        let compute = move || {
            if work.is_test_file {
                return crate::diagnostics::test_file_diagnostics(&work, &documents);
            }
            let catalog = catalog_view(&catalogs, &work);
            crate::diagnostics::diagnostics(&work, &catalog)
        };
        let inline = snapshot.text.len() <= INLINE_BYTES
            && !snapshot.is_test_file
            && self.catalogs.is_loaded(&snapshot.uri);
        let computed = if inline {
            std::panic::catch_unwind(AssertUnwindSafe(compute))
                .map_err(|payload| payload_text(payload.as_ref()))
        } else {
            tokio::task::spawn_blocking(compute)
                .await
                .map_err(crate::panics::panic_text)
        };
        let mut diagnostics = match computed {
            Ok(diagnostics) => diagnostics,
            Err(error) => {
                let message = format!("diagnostics of {} failed: {}", snapshot.uri, error);
                self.client.log_message(MessageType::ERROR, message).await;
                return;
            }
        };
        diagnostics.extend(self.failures.shown(&snapshot.uri, Some(snapshot.version)));
        let mut published = self.order.lock().await;
        // Checked under the publishing lock, which a close's empty list takes
        // too: a version that is no longer current (edited, or its document
        // closed, reopened since at the same version number) publishes nothing.
        if !self.documents.is_current(&snapshot) || !published.admit(&snapshot.uri, ticket) {
            return;
        }
        self.client
            .publish_diagnostics(snapshot.uri.clone(), diagnostics, Some(snapshot.version))
            .await;
    }

    /// Re-publishes the open test files of the prompt at `prompt` (its text changed,
    /// or it opened or closed: they read it).
    pub async fn publish_tests_of(&self, prompt: &tower_lsp::lsp_types::Url) {
        for test in crate::test_files::tests_of(&self.documents, prompt) {
            self.publish(test, false).await;
        }
    }

    /// Publishes an empty list for a document that closed.
    pub async fn clear(&self, uri: tower_lsp::lsp_types::Url) {
        let mut published = self.order.lock().await;
        published.forget(&uri);
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    /// Re-publishes `uri` after a run changed its failures: the open document with
    /// its own diagnostics, or a document that is not open with its failures alone.
    pub async fn refresh(&self, uri: &tower_lsp::lsp_types::Url) {
        match self.documents.snapshot(uri) {
            Some(snapshot) => self.publish(snapshot, true).await,
            None => {
                let shown = self.failures.shown(uri, None);
                let _order = self.order.lock().await;
                self.client
                    .publish_diagnostics(uri.clone(), shown, None)
                    .await;
            }
        }
    }

    /// Re-publishes every open prompt (the configuration changed).
    pub async fn republish_all(&self) {
        for snapshot in self.documents.all() {
            self.publish(snapshot, false).await;
        }
    }

    /// Re-publishes the open prompts that declare `id`.
    pub async fn republish_declaring(&self, id: &str) {
        for snapshot in self.documents.all() {
            let declares = snapshot
                .analysis
                .document
                .frontmatter
                .as_ref()
                .is_some_and(|f| f.plugins.iter().any(|d| d.id.value == id));
            if declares {
                self.publish(snapshot, false).await;
            }
        }
    }

    /// Re-publishes the documents of every Plugin whose activation finished, until
    /// the catalogs are dropped.
    pub async fn follow_activations(self, mut ready: UnboundedReceiver<String>) {
        while let Some(id) = ready.recv().await {
            let mut ids = vec![id];
            while let Ok(more) = ready.try_recv() {
                if !ids.contains(&more) {
                    ids.push(more);
                }
            }
            for id in ids {
                self.republish_declaring(&id).await;
            }
        }
    }
}
