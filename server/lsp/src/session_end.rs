//! The end of a session: `shutdown` then `exit` ends the process with status 0,
//! `exit` alone with 1 (LSP 3.17, "exit"). tower-lsp only stops reading after the
//! next message arrives, so the service is wrapped to notice `exit` itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::Notify;
use tower_lsp::jsonrpc::{Request, Response};
use tower_service::Service;

/// What the wrapper saw.
#[derive(Debug, Default)]
pub struct SessionEnd {
    shutdown: AtomicBool,
    exited: Notify,
}

impl SessionEnd {
    /// True when `shutdown` was requested.
    pub fn was_shut_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }

    /// Completes when `exit` has been handled.
    pub async fn exited(&self) {
        self.exited.notified().await;
    }
}

/// A service that reports `shutdown` and `exit` to a [`SessionEnd`].
pub struct Watched<S> {
    inner: S,
    end: Arc<SessionEnd>,
}

impl<S> Watched<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, end: Arc<SessionEnd>) -> Self {
        Watched { inner, end }
    }
}

impl<S> Service<Request> for Watched<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let method = request.method().to_owned();
        if method == "shutdown" {
            self.end.shutdown.store(true, Ordering::SeqCst);
        }
        let future = self.inner.call(request);
        let end = Arc::clone(&self.end);
        Box::pin(async move {
            let result = future.await;
            if method == "exit" {
                end.exited.notify_one();
            }
            result
        })
    }
}
