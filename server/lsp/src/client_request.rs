//! Requests from the server to the client that may be given up on.
//!
//! tower-lsp 0.20 panics (and the server dies) when the client answers a request
//! whose future was dropped: its pending-request table sends the answer to a
//! receiver that is gone (`receiver already dropped`). A run that ends before the
//! client answers `window/workDoneProgress/create`, or a `promptforge/ask` whose
//! run is cancelled, drops such a future. [`detached`] polls the request to its
//! end on a task of its own, so its caller may stop waiting at any time.

use tokio::task::JoinHandle;
use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::request::Request;
use tower_lsp::Client;

/// Sends the request `R` to the client on a task of its own and returns the
/// task: awaiting it gives the answer, dropping it gives up waiting while the
/// answer is still received (and dropped) when it comes.
pub fn detached<R>(client: &Client, params: R::Params) -> JoinHandle<jsonrpc::Result<R::Result>>
where
    R: Request,
    R::Params: Send + 'static,
    R::Result: Send + 'static,
{
    let client = client.clone();
    tokio::spawn(async move { client.send_request::<R>(params).await })
}

/// The answer of a [`detached`] request: a task that failed (it cannot panic, but
/// a runtime shutting down cancels it) is an internal error.
pub async fn answer<T>(task: JoinHandle<jsonrpc::Result<T>>) -> jsonrpc::Result<T> {
    task.await
        .unwrap_or_else(|_| Err(jsonrpc::Error::internal_error()))
}
