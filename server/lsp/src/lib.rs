//! The PromptForge language server (`promptforge lsp`): LSP 3.17 over stdio for
//! prompt files (`../shared/spec/editor.md`).
//!
//! - [`documents`]: the open documents (ropey text, incremental [`promptforge_syntax::ParsedFile`]) and their versions;
//! - [`snapshot`]: one immutable view per version, which every request reads;
//! - [`encoding`]: byte offsets <-> LSP positions (UTF-16, or UTF-8 when offered);
//! - [`analysis`]: the semantic model of a snapshot (Lua facts, sections, static checks);
//! - [`api_reference`]: the Lua API's signatures and reference text;
//! - [`catalog`]: the Hosts of the documents' configurations and their Plugins' tools;
//! - [`features`]: one module per protocol feature;
//! - [`publisher`]: computing and publishing diagnostics, also outside a handler;
//! - [`server`]: the handlers;
//! - [`session_end`]: `shutdown` and `exit`, for the exit status.

#![warn(missing_docs)]

pub mod analysis;
pub mod api_reference;
pub mod catalog;
pub mod documents;
pub mod encoding;
pub mod features;
pub mod publisher;
pub mod server;
pub mod session_end;
pub mod snapshot;

use std::sync::Arc;

use tower_lsp::{LspService, Server as LspServer};

use crate::session_end::{SessionEnd, Watched};

/// Serves the protocol on stdin/stdout until the client says `exit` or closes the
/// stream; true when the client asked for `shutdown` first.
pub async fn serve_stdio() -> bool {
    let (service, socket) = LspService::new(server::Server::new);
    let end = Arc::new(SessionEnd::default());
    let service = Watched::new(service, Arc::clone(&end));
    tokio::select! {
        () = LspServer::new(tokio::io::stdin(), tokio::io::stdout(), socket).serve(service) => {}
        () = end.exited() => {}
    }
    end.was_shut_down()
}

/// Runs [`serve_stdio`] on a new multi-threaded tokio runtime; Ok(true) when the
/// session ended with `shutdown` (exit status 0), Ok(false) without it (status 1).
pub fn run_stdio() -> std::io::Result<bool> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let shut_down = runtime.block_on(serve_stdio());
    // The blocked stdin read would otherwise keep the process waiting for input.
    runtime.shutdown_background();
    Ok(shut_down)
}
