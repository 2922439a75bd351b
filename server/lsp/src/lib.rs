//! The PromptForge language server (`promptforge lsp`): LSP 3.17 over stdio for
//! prompt files (what each editor gets: the book, `docs/src/editors.md`).
//!
//! - [`framing`] (the `promptforge-transport` crate): the frames read from the client, checked before tower-lsp sees them;
//! - [`documents`]: the open documents (ropey text, incremental [`promptforge_syntax::ParsedFile`]) and their versions;
//! - [`snapshot`]: one immutable view per version, which every request reads;
//! - [`encoding`]: the negotiated column unit (UTF-16, or UTF-8 or UTF-32 when offered) and edits' offsets in the rope;
//! - [`convert`]: the one place positions, ranges, markup and the analysis layer's answers become protocol types;
//! - the semantic model of a snapshot (Lua facts, sections, static checks, every
//!   diagnostic and its fixes) is [`promptforge_analysis`]'s;
//! - [`catalog`]: the Hosts of the documents' configurations and their Plugins' tools;
//! - [`fault`]: fault injection for the protocol tests (with the `fault-injection` feature);
//! - [`diagnostics`]: a snapshot's diagnostics in the protocol's terms, for the publisher and the code actions;
//! - [`features`]: one module per protocol request: the prompt features ask [`promptforge_analysis::ide`] and convert its answers;
//! - [`publisher`]: computing and publishing diagnostics, also outside a handler;
//! - [`run`]: running prompts and their tests from the editor (`editor.md` §2);
//! - [`run_failures`]: the failures of runs and test cases, shown in place until the next edit;
//! - [`test_files`]: prompt test files (`*.test.yaml`) and the prompts they test;
//! - [`server`]: the handlers;
//! - [`session_end`]: `shutdown` and `exit`, for the exit status.

#![warn(missing_docs)]

pub mod catalog;
pub mod client_request;
pub mod convert;
pub mod diagnostics;
pub mod documents;
pub mod encoding;
pub mod fault;
pub mod features;
mod panics;
mod publish_order;
pub mod publisher;
mod relay;
pub mod run;
pub mod run_failures;
pub mod server;
pub mod session_end;
pub mod snapshot;
mod stdio;
pub mod test_files;
pub mod test_listing;
pub mod test_uris;
pub mod trust;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tower_lsp::{LspService, Server as LspServer};

use crate::session_end::{SessionEnd, Watched};
use promptforge_transport::framing::{self, Fatal};

/// The bytes each in-memory pipe between the framing layer and tower-lsp holds.
const PIPE_BYTES: usize = 64 * 1024;

/// The whole bodies queued for the client's output.
const OUTPUT_QUEUE: usize = 64;

/// How long the end of a session waits for the queued output to be written.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the session's end waits for its cancelled runs to end (a cancel ends
/// a run within milliseconds; an MCP server is killed as its run ends).
const RUNS_END_TIMEOUT: Duration = Duration::from_secs(2);

/// How a session ended.
#[derive(Debug)]
pub struct Outcome {
    /// The client asked for `shutdown`.
    pub shut_down: bool,
    /// The client's stream could not go on (None after `exit` or at the end of
    /// the input at a frame boundary).
    pub fatal: Option<Fatal>,
}

/// Serves the protocol on `input`/`output` through the [`framing`] layer until
/// the client says `exit`, the input ends, or a frame cannot be read.
pub async fn serve<I, O>(input: I, output: O) -> Outcome
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let gates = run::gate::Gates::default();
    let for_server = Arc::clone(&gates);
    let runs = run::SessionRuns::default();
    let server_runs = runs.clone();
    let (service, socket) = LspService::build(move |client| {
        server::Server::new(client, Arc::clone(&for_server), server_runs.clone())
    })
    .custom_method(
        server::PROGRESS_CANCEL,
        server::Server::work_done_progress_cancel,
    )
    .custom_method(run::protocol::TRACE, server::Server::trace)
    .custom_method(test_listing::TESTS, server::Server::tests)
    .finish();
    let end = Arc::new(SessionEnd::default());
    let service = Watched::new(service, Arc::clone(&end));
    let (mut to_server, server_input) = tokio::io::duplex(PIPE_BYTES);
    let (server_output, from_server) = tokio::io::duplex(PIPE_BYTES);
    let (bodies, queued) = mpsc::channel(OUTPUT_QUEUE);
    let writer = tokio::spawn(framing::write_frames(queued, output));
    tokio::spawn(relay::relay(from_server, bodies.clone(), gates));
    let (ended, reader_ended) = oneshot::channel();
    let reader = tokio::spawn(async move {
        let result = framing::read_client(input, &mut to_server, bodies).await;
        let _ = ended.send(result);
        // tower-lsp sees the end of its input only now, once the cause is known.
        drop(to_server);
    });
    let exited = tokio::select! {
        () = LspServer::new(server_input, server_output, socket).serve(service) => false,
        () = end.exited() => true,
    };
    // tower-lsp's end of the output pipe is gone with its future: the relay ends
    // once it has read the rest. The reader has ended, or (after `exit`, or when
    // tower-lsp stopped reading by itself) is stopped here.
    reader.abort();
    // However the session ended, its runs end with it (their MCP servers too).
    runs.end(RUNS_END_TIMEOUT).await;
    let fatal = match reader_ended.await {
        Ok(Err(fatal)) if !exited => Some(fatal),
        _ => None,
    };
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, writer).await;
    Outcome {
        shut_down: end.was_shut_down(),
        fatal,
    }
}

/// Serves the protocol on stdin/stdout until the client says `exit` or closes the
/// stream; true when the client asked for `shutdown` first. A stream that cannot
/// be read on ends the session with one line on stderr naming the cause (and
/// false).
pub async fn serve_stdio() -> bool {
    let outcome = serve(stdio::input(), stdio::output()).await;
    match outcome.fatal {
        Some(fatal) => {
            let _ = writeln!(std::io::stderr(), "promptforge: lsp: {fatal}");
            false
        }
        None => outcome.shut_down,
    }
}

/// Runs [`serve_stdio`] on a new multi-threaded tokio runtime; Ok(true) when the
/// session ended with `shutdown` (exit status 0), Ok(false) without it or when
/// the client's stream could not be read on (status 1).
pub fn run_stdio() -> std::io::Result<bool> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let shut_down = runtime.block_on(async {
        let shut_down = serve_stdio().await;
        // A run that had not ended by then (its threads starved, say) leaves no
        // MCP server behind either.
        promptforge_shipped::kill_plugin_processes();
        shut_down
    });
    // The blocked stdin read would otherwise keep the process waiting for input.
    runtime.shutdown_background();
    Ok(shut_down)
}
