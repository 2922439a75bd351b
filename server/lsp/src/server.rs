//! The `LanguageServer` implementation: the session state (documents, the
//! Hosts' catalogs, the negotiated position encoding) and one thin handler per
//! protocol method, each delegating to its module under `features`.
//!
//! `$/cancelRequest` needs nothing here: tower-lsp 0.20 drops the cancelled
//! request's handler future and answers it with RequestCancelled (-32800).
//! `window/workDoneProgress/cancel`, which tower-lsp 0.20 does not know, is a
//! custom method ([`Server::work_done_progress_cancel`]).

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, LanguageServer};

use crate::catalog::Catalogs;
use crate::documents::Documents;
use crate::encoding::PositionEncoding;
use crate::fault::{Faults, PANIC_ENV, SLOW_DELAY};
use crate::features;
use crate::features::test_file_features;
use crate::publisher::{catalog_view, Publisher};
use crate::run::gate::Gates;
use crate::run::Runner;
use crate::snapshot::Snapshot;
use crate::trust::{SessionTrust, TRUSTED_OPTION};
use promptforge_engine::requirements::CatalogView;
use promptforge_transport::payload_text;

/// The `initializationOptions` key that sets how long an MCP server may take to
/// list its tools for the editor, in milliseconds (default
/// [`crate::catalog::ACTIVATION_TIMEOUT`]).
pub const ACTIVATION_TIMEOUT_OPTION: &str = "activationTimeoutMs";

/// The glob of the configuration files the server asks the client to watch.
pub const CONFIG_GLOB: &str = "**/promptforge.toml";

/// The notification a client sends to cancel a work-done progress (a run's).
pub const PROGRESS_CANCEL: &str = "window/workDoneProgress/cancel";

/// The server's state for one session.
pub struct Server {
    client: Client,
    documents: Arc<Documents>,
    encoding: OnceLock<PositionEncoding>,
    publisher: Publisher,
    faults: Faults,
    /// True when the client registers file watchers dynamically.
    watch_dynamically: OnceLock<bool>,
    /// The workspace folders (from `initialize`), where `promptforge/tests` looks.
    roots: OnceLock<Vec<std::path::PathBuf>>,
    /// The runs started from the editor.
    runner: Arc<Runner>,
    /// The token counts the inlay hints made.
    token_counts: Arc<features::inlay_hints::TokenCounts>,
}

impl Server {
    /// A server talking to `client`; Plugin activations that finish in the
    /// background re-publish the documents that declare the Plugin. `gates` are
    /// those the framing layer opens when a run's response is written.
    pub fn new(client: Client, gates: Gates, runs: crate::run::SessionRuns) -> Self {
        let (ready, activations) = tokio::sync::mpsc::unbounded_channel();
        let documents = Arc::new(Documents::new(runs.ended()));
        let trust = Arc::new(SessionTrust::default());
        let catalogs = Arc::new(Catalogs::new(ready, Arc::clone(&trust)));
        let publisher = Publisher::new(client.clone(), Arc::clone(&documents), catalogs);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(publisher.clone().follow_activations(activations));
        }
        let runner = Arc::new(Runner::new(
            client.clone(),
            Arc::clone(&documents),
            publisher.clone(),
            gates,
            runs,
            trust,
        ));
        Server {
            client,
            documents,
            encoding: OnceLock::new(),
            publisher,
            faults: Faults::from_env(),
            watch_dynamically: OnceLock::new(),
            roots: OnceLock::new(),
            runner,
            token_counts: Arc::default(),
        }
    }

    /// `window/workDoneProgress/cancel`: cancels the run whose progress it is.
    pub async fn work_done_progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        if let Some(run_id) = crate::run::progress::run_of(&params.token) {
            self.runner.cancel(run_id);
        }
    }

    /// `promptforge/trace`: the trace of a run the session keeps, or an
    /// invalid-params error saying it keeps none.
    pub async fn trace(
        &self,
        params: crate::run::protocol::TraceParams,
    ) -> Result<serde_json::Value> {
        let kept = self.runner.traces.get(&params.run_id);
        let trace = kept.and_then(|json| serde_json::from_str(&json).ok());
        trace.ok_or_else(|| Error::invalid_params(crate::run::traces::no_trace(&params.run_id)))
    }

    /// `promptforge/tests`: the test file at `uri` (its open text if open) or,
    /// without one, every test file under the workspace folders, with their cases
    /// ([`crate::test_listing`]); the walk runs off the request thread.
    pub async fn tests(
        &self,
        params: crate::test_listing::TestsParams,
    ) -> Result<crate::test_listing::TestsAnswer> {
        let roots = self.roots.get().cloned().unwrap_or_default();
        crate::test_listing::answer(&self.documents, roots, params, self.encoding())
            .await
            .ok_or_else(Error::internal_error)
    }

    /// True when the open document at `uri` is a prompt test file.
    fn is_test_file(&self, uri: &Url) -> bool {
        self.documents.snapshot(uri).is_some_and(|s| s.is_test_file)
    }

    fn catalogs(&self) -> &Catalogs {
        &self.publisher.catalogs
    }

    /// Drops the cached Hosts and activations and re-publishes every open prompt.
    async fn configuration_changed(&self) {
        self.catalogs().reset();
        guarded(self, "configuration change", self.publisher.republish_all()).await;
    }

    fn encoding(&self) -> PositionEncoding {
        self.encoding.get().copied().unwrap_or_default()
    }

    async fn log(&self, kind: MessageType, message: String) {
        self.client.log_message(kind, message).await;
    }

    async fn publish(&self, snapshot: Arc<Snapshot>, was_prompt: bool) {
        self.publisher.publish(snapshot, was_prompt).await;
    }

    /// Runs a request on the latest snapshot of `uri`: None for a document that is not
    /// open or not a prompt; a panic is caught, logged and answered with an error.
    async fn request<T>(
        &self,
        name: &str,
        uri: &Url,
        run: impl FnOnce(&Snapshot) -> Option<T>,
    ) -> Result<Option<T>> {
        self.request_where(name, uri, |s| s.is_prompt, run).await
    }

    /// [`Server::request`] on the documents `serves` accepts.
    async fn request_where<T>(
        &self,
        name: &str,
        uri: &Url,
        serves: impl FnOnce(&Snapshot) -> bool,
        run: impl FnOnce(&Snapshot) -> Option<T>,
    ) -> Result<Option<T>> {
        let Some(snapshot) = self.documents.snapshot(uri).filter(|s| serves(s)) else {
            return Ok(None);
        };
        if self.faults.slow(name) {
            tokio::time::sleep(SLOW_DELAY).await;
        }
        let inject = self.faults.panics(name);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if inject {
                panic!("{PANIC_ENV} asked {name} to panic");
            }
            run(&snapshot)
        }));
        match outcome {
            Ok(value) => Ok(value),
            Err(payload) => {
                let text = payload_text(payload.as_ref());
                self.log(
                    MessageType::ERROR,
                    format!("{name} on {uri} panicked: {text}"),
                )
                .await;
                let mut error = Error::internal_error();
                error.message = format!("{name} failed: {text}").into();
                Err(error)
            }
        }
    }
}

impl Server {
    /// Runs a request that reads the Host's catalog: as [`Server::request`], with
    /// the catalog view of the snapshot (never waiting for an activation).
    async fn catalog_request<T>(
        &self,
        name: &str,
        uri: &Url,
        run: impl FnOnce(&Snapshot, &CatalogView) -> Option<T>,
    ) -> Result<Option<T>> {
        let catalogs = self.catalogs();
        self.request(name, uri, |s| run(s, &catalog_view(catalogs, s)))
            .await
    }
}

/// Runs a notification's follow-up work, logging a panic instead of losing the server.
async fn guarded(server: &Server, what: &str, work: impl Future<Output = ()>) {
    use futures_util::FutureExt;
    if let Err(payload) = AssertUnwindSafe(work).catch_unwind().await {
        let text = payload_text(payload.as_ref());
        server
            .log(MessageType::ERROR, format!("{what} panicked: {text}"))
            .await;
    }
}

#[tower_lsp::async_trait]
impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref());
        let encoding = PositionEncoding::negotiate(offered);
        let _ = self.encoding.set(encoding);
        let progress = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        self.runner.initialized(encoding, progress);
        let dynamic = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        let _ = self.watch_dynamically.set(dynamic);
        let _ = self
            .roots
            .set(crate::test_listing::workspace_roots(&params));
        let trusted = params
            .initialization_options
            .as_ref()
            .and_then(|o| o.get(TRUSTED_OPTION))
            .and_then(serde_json::Value::as_bool);
        self.runner.trust.set(trusted);
        let timeout = params
            .initialization_options
            .as_ref()
            .and_then(|o| o.get(ACTIVATION_TIMEOUT_OPTION))
            .and_then(serde_json::Value::as_u64);
        let book = params
            .initialization_options
            .as_ref()
            .and_then(|o| o.get(crate::diagnostics::BOOK_URL_OPTION));
        if let Some(Err(why)) = book.map(crate::diagnostics::set_book_url) {
            self.log(MessageType::WARNING, why).await;
        }
        if let Some(ms) = timeout {
            self.catalogs()
                .set_timeout(std::time::Duration::from_millis(ms));
        }
        Ok(InitializeResult {
            capabilities: features::capabilities(encoding),
            server_info: Some(ServerInfo {
                name: "promptforge".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if self.watch_dynamically.get() != Some(&true) {
            return;
        }
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![FileSystemWatcher {
                glob_pattern: GlobPattern::String(CONFIG_GLOB.to_owned()),
                kind: None,
            }],
        };
        let registration = Registration {
            id: "promptforge.toml".to_owned(),
            method: "workspace/didChangeWatchedFiles".to_owned(),
            register_options: serde_json::to_value(options).ok(),
        };
        // Not awaited here: a client slow to answer must not hold a handler slot.
        let client = self.client.clone();
        tokio::spawn(async move {
            if let Err(error) = client.register_capability(vec![registration]).await {
                let message = format!("watching {CONFIG_GLOB} failed: {error}");
                client.log_message(MessageType::WARNING, message).await;
            }
        });
    }

    async fn shutdown(&self) -> Result<()> {
        self.catalogs().shutdown();
        self.runner.cancel_all();
        Ok(())
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        // A project file, or the user's file (`promptforge/config.toml`).
        let configuration = params.changes.iter().any(|change| {
            let path = change.uri.path();
            path.ends_with("/promptforge.toml") || path.ends_with("/promptforge/config.toml")
        });
        if configuration {
            self.configuration_changed().await;
        }
    }

    async fn did_change_configuration(&self, _: DidChangeConfigurationParams) {
        self.configuration_changed().await;
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let uri = document.uri.clone();
        let opened = catch_unwind(AssertUnwindSafe(|| {
            self.documents.open(
                document.uri,
                &document.language_id,
                document.text,
                document.version,
                self.encoding(),
            )
        }));
        match opened {
            Ok(snapshot) => {
                let is_prompt = snapshot.is_prompt;
                guarded(self, "didOpen", self.publish(snapshot, false)).await;
                if is_prompt {
                    guarded(self, "didOpen", self.publisher.publish_tests_of(&uri)).await;
                }
            }
            Err(payload) => {
                let text = payload_text(payload.as_ref());
                let message = format!("didOpen on {uri} panicked: {text}");
                self.log(MessageType::ERROR, message).await;
            }
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        // Applied before the first `.await`: changes apply in the order received.
        let uri = params.text_document.uri;
        let was_prompt = self.documents.snapshot(&uri).is_some_and(|s| s.is_prompt);
        let changed = catch_unwind(AssertUnwindSafe(|| {
            self.documents.change(
                &uri,
                params.text_document.version,
                params.content_changes,
                self.encoding(),
            )
        }));
        match changed {
            Ok(Ok(changed)) => {
                // A run's failures describe the text before this edit.
                self.publisher.failures.forget(&uri);
                for error in changed.protocol_errors {
                    self.log(MessageType::ERROR, format!("protocol error: {error}"))
                        .await;
                }
                let is_prompt = changed.snapshot.is_prompt;
                guarded(
                    self,
                    "didChange",
                    self.publish(changed.snapshot, was_prompt),
                )
                .await;
                if is_prompt {
                    let tests = self.publisher.publish_tests_of(&uri);
                    guarded(self, "didChange", tests).await;
                }
                // Freed after the diagnostics are out (see `Changed::retired`).
                drop(changed.retired);
            }
            Ok(Err(not_open)) => {
                let message = format!(
                    "protocol error: didChange for {}, which is not open",
                    not_open.0
                );
                self.log(MessageType::ERROR, message).await;
            }
            Err(payload) => {
                let text = payload_text(payload.as_ref());
                self.log(
                    MessageType::ERROR,
                    format!("didChange on {uri} panicked: {text}"),
                )
                .await;
            }
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        // Saving retries the failed Plugin activations of the document's Host (an
        // MCP server's dependency may have started meanwhile).
        let uri = params.text_document.uri;
        let Some(snapshot) = self.documents.snapshot(&uri).filter(|s| s.is_prompt) else {
            return;
        };
        self.catalogs().retry_failed(&uri);
        guarded(self, "didSave", self.publish(snapshot, false)).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        // A closed prompt's problems leave the editor's problem list with it.
        let closed = self.documents.close(&uri);
        let served = closed
            .as_ref()
            .is_some_and(|s| s.is_prompt || s.is_test_file);
        self.publisher.failures.forget(&uri);
        if served {
            self.publisher.clear(uri.clone()).await;
        }
        if closed.is_some_and(|s| s.is_prompt) {
            // Its test files read the file on disk from now on.
            guarded(self, "didClose", self.publisher.publish_tests_of(&uri)).await;
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        if self.is_test_file(&at.text_document.uri) {
            let (documents, catalogs) = (&self.documents, self.catalogs());
            return self
                .request_where(
                    "hover",
                    &at.text_document.uri,
                    |s| s.is_test_file,
                    |s| test_file_features::hover(documents, catalogs, s, at.position),
                )
                .await;
        }
        self.catalog_request("hover", &at.text_document.uri, |s, c| {
            features::hover::hover(s, c, at.position)
        })
        .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        if self.is_test_file(&at.text_document.uri) {
            let (documents, catalogs) = (&self.documents, self.catalogs());
            return self
                .request_where(
                    "completion",
                    &at.text_document.uri,
                    |s| s.is_test_file,
                    |s| {
                        Some(CompletionResponse::Array(test_file_features::completion(
                            documents,
                            catalogs,
                            s,
                            at.position,
                        )))
                    },
                )
                .await;
        }
        self.catalog_request("completion", &at.text_document.uri, |s, c| {
            Some(CompletionResponse::Array(features::completion::completion(
                s,
                c,
                at.position,
            )))
        })
        .await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let at = params.text_document_position_params;
        self.request("signatureHelp", &at.text_document.uri, |s| {
            features::signature_help::signature_help(s, at.position)
        })
        .await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let at = params.text_document_position_params;
        if self.is_test_file(&at.text_document.uri) {
            let documents = &self.documents;
            return self
                .request_where(
                    "definition",
                    &at.text_document.uri,
                    |s| s.is_test_file,
                    |s| test_file_features::definition(documents, s, at.position),
                )
                .await;
        }
        self.request("definition", &at.text_document.uri, |s| {
            features::definition::definition(s, at.position)
        })
        .await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = params.text_document_position;
        let declaration = params.context.include_declaration;
        self.request("references", &at.text_document.uri, |s| {
            features::references::references(s, at.position, declaration)
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        self.request("prepareRename", &params.text_document.uri, |s| {
            features::rename::prepare_rename(s, params.position)
        })
        .await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let at = params.text_document_position;
        let outcome = self
            .request("rename", &at.text_document.uri, |s| {
                Some(features::rename::rename(s, at.position, &params.new_name))
            })
            .await?;
        match outcome {
            None => Ok(None),
            Some(result) => result.map_err(Error::invalid_params),
        }
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        self.request("documentSymbol", &params.text_document.uri, |s| {
            Some(DocumentSymbolResponse::Nested(
                features::document_symbols::document_symbols(s),
            ))
        })
        .await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.request("foldingRange", &params.text_document.uri, |s| {
            Some(features::folding::folding_ranges(s))
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        self.request("semanticTokens", &params.text_document.uri, |s| {
            Some(SemanticTokensResult::Tokens(
                features::semantic_tokens::semantic_tokens(s),
            ))
        })
        .await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let counts = Arc::clone(&self.token_counts);
        self.catalog_request("inlayHint", &params.text_document.uri, |s, c| {
            Some(features::inlay_hints::inlay_hints(
                s,
                c,
                &counts,
                params.range,
            ))
        })
        .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        self.catalog_request("codeAction", &params.text_document.uri, |s, c| {
            Some(features::code_actions::code_actions(s, c, params.range))
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let serves = |s: &Snapshot| s.is_prompt || s.is_test_file;
        let documents = &self.documents;
        // In a workspace the client says is not trusted, nothing runs: no lens offers it.
        if self.runner.trust.restricted() {
            return Ok(Some(Vec::new()));
        }
        self.request_where("codeLens", &params.text_document.uri, serves, |s| {
            Some(features::code_lens::code_lenses(s, documents))
        })
        .await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let name = "executeCommand";
        let inject = self.faults.panics(name);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if inject {
                panic!("{PANIC_ENV} asked {name} to panic");
            }
            features::execute_command::execute(&self.runner, &params.command, &params.arguments)
        }));
        match outcome {
            Ok(answer) => answer,
            Err(payload) => {
                let text = payload_text(payload.as_ref());
                let message = format!("{name} {} panicked: {text}", params.command);
                self.log(MessageType::ERROR, message).await;
                let mut error = Error::internal_error();
                error.message = format!("{name} failed: {text}").into();
                Err(error)
            }
        }
    }
}
