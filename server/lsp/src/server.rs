//! The `LanguageServer` implementation: the session state (documents, the
//! negotiated position encoding) and one thin handler per protocol method,
//! each delegating to its module under `features`.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, LanguageServer};

use crate::documents::Documents;
use crate::encoding::PositionEncoding;
use crate::features;
use crate::snapshot::Snapshot;

/// The environment variable that makes the named request handler panic (`hover`,
/// `completion`, ...): a fault injection for the protocol tests, which check that
/// a panic is caught, logged and answered with an error.
pub const PANIC_ENV: &str = "PROMPTFORGE_LSP_PANIC";

/// The server's state for one session.
pub struct Server {
    client: Client,
    documents: Documents,
    encoding: OnceLock<PositionEncoding>,
    /// Serialises publishing, so a stale version is never published after a newer one.
    publish: tokio::sync::Mutex<()>,
    panic_on: Option<String>,
}

impl Server {
    /// A server talking to `client`.
    pub fn new(client: Client) -> Self {
        Server {
            client,
            documents: Documents::default(),
            encoding: OnceLock::new(),
            publish: tokio::sync::Mutex::new(()),
            panic_on: std::env::var(PANIC_ENV).ok(),
        }
    }

    fn encoding(&self) -> PositionEncoding {
        self.encoding.get().copied().unwrap_or_default()
    }

    async fn log(&self, kind: MessageType, message: String) {
        self.client.log_message(kind, message).await;
    }

    /// Computes and publishes the diagnostics of `snapshot` unless a newer version
    /// arrived meanwhile (then the newer one publishes). `was_prompt` makes a document
    /// that stopped being a prompt get an empty list once.
    async fn publish(&self, snapshot: Arc<Snapshot>, was_prompt: bool) {
        if !snapshot.is_prompt && !was_prompt {
            return;
        }
        let work = Arc::clone(&snapshot);
        let computed =
            tokio::task::spawn_blocking(move || features::diagnostics::diagnostics(&work)).await;
        let diagnostics = match computed {
            Ok(diagnostics) => diagnostics,
            Err(error) => {
                let message = format!(
                    "diagnostics of {} failed: {}",
                    snapshot.uri,
                    panic_text(error)
                );
                self.log(MessageType::ERROR, message).await;
                return;
            }
        };
        let _order = self.publish.lock().await;
        if self.documents.version(&snapshot.uri) != Some(snapshot.version) {
            return;
        }
        self.client
            .publish_diagnostics(snapshot.uri.clone(), diagnostics, Some(snapshot.version))
            .await;
    }

    /// Runs a request on the latest snapshot of `uri`: None for a document that is not
    /// open or not a prompt; a panic is caught, logged and answered with an error.
    async fn request<T>(
        &self,
        name: &str,
        uri: &Url,
        run: impl FnOnce(&Snapshot) -> Option<T>,
    ) -> Result<Option<T>> {
        let Some(snapshot) = self.documents.snapshot(uri).filter(|s| s.is_prompt) else {
            return Ok(None);
        };
        let inject = self.panic_on.as_deref() == Some(name);
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

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

fn panic_text(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(payload) => payload_text(payload.as_ref()),
        Err(error) => error.to_string(),
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
        Ok(InitializeResult {
            capabilities: features::capabilities(encoding),
            server_info: Some(ServerInfo {
                name: "promptforge".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let uri = document.uri.clone();
        let opened = catch_unwind(AssertUnwindSafe(|| {
            self.documents.open(
                document.uri,
                document.text,
                document.version,
                self.encoding(),
            )
        }));
        match opened {
            Ok(snapshot) => guarded(self, "didOpen", self.publish(snapshot, false)).await,
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
                for error in changed.protocol_errors {
                    self.log(MessageType::ERROR, format!("protocol error: {error}"))
                        .await;
                }
                guarded(
                    self,
                    "didChange",
                    self.publish(changed.snapshot, was_prompt),
                )
                .await;
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

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        // A closed prompt's problems leave the editor's problem list with it.
        let was_prompt = self.documents.close(&uri).is_some_and(|s| s.is_prompt);
        if was_prompt {
            let _order = self.publish.lock().await;
            self.client.publish_diagnostics(uri, Vec::new(), None).await;
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        self.request("hover", &at.text_document.uri, |s| {
            features::hover::hover(s, at.position)
        })
        .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = params.text_document_position;
        self.request("completion", &at.text_document.uri, |s| {
            Some(CompletionResponse::Array(features::completion::completion(
                s,
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

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        self.request("codeLens", &params.text_document.uri, |s| {
            Some(features::code_lens::code_lenses(s))
        })
        .await
    }
}
