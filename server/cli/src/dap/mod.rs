//! `promptforge dap`: a Debug Adapter Protocol adapter on stdin/stdout (the
//! debugger issue). Messages are framed as the language server's are
//! (`Content-Length`), with the same reader and single writer
//! ([`promptforge_transport::framing`]), requests up to 4 MiB.
//!
//! - [`protocol`]: requests, responses and events;
//! - [`session`]: the requests of one session, in order;
//! - [`launch`]: running the launched prompt as `promptforge run` does;
//! - [`program`]: the prompt file's lines and the engine's block lines;
//! - [`breakpoints`]: the breakpoint requests;
//! - [`paused`]: threads, stacks, variables, evaluation and stepping;
//! - [`events`]: what the run's debugger tells the client.

mod breakpoints;
mod events;
mod launch;
mod paused;
mod program;
mod protocol;
mod session;

use std::io::Write;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use promptforge_transport::framing::{write_frames, FrameReader};
use promptforge_transport::payload_text;
use tokio::sync::mpsc;

use crate::cli::GlobalArgs;
use crate::exit::Exit;
use session::{Next, Session};

/// The largest request the adapter reads: a request is a few kilobytes, and
/// the most breakpoints one may set (10,000) with conditions and log messages a
/// few megabytes. A larger frame ends the session before its body is read, as
/// a broken header does: reading it would cost about 40 times its size.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Serves one debug session on stdin/stdout: exit status 0 after `disconnect`
/// or the end of the input, 1 when a frame cannot be read, 2 when the runtime
/// cannot start.
pub fn run(global: &GlobalArgs) -> Exit {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "promptforge: dap: {error}");
            return Exit::Usage;
        }
    };
    let exit = runtime.block_on(async {
        let exit = serve(global.clone()).await;
        // No MCP server of a run still going outlives the session.
        promptforge_shipped::kill_plugin_processes();
        exit
    });
    // The blocked stdin read would otherwise keep the process waiting for input.
    runtime.shutdown_background();
    exit
}

async fn serve(global: GlobalArgs) -> Exit {
    let (queue, queued) = mpsc::channel(64);
    let writer = tokio::spawn(write_frames(queued, tokio::io::stdout()));
    // The engine's threads queue without waiting: an unbounded queue, relayed in
    // order to the writer.
    let (unbounded, mut relayed) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(body) = relayed.recv().await {
            if queue.send(body).await.is_err() {
                break;
            }
        }
    });
    let out = protocol::Outgoing::new(unbounded);
    let mut session = Session::new(out.clone(), global);
    let mut reader = FrameReader::with_limit(tokio::io::stdin(), MAX_REQUEST_BYTES);
    let exit = loop {
        match reader.next_frame().await {
            Ok(Some(body)) => match protocol::request_of(&body) {
                Ok(request) => {
                    // What a refusal names of the request (its arguments may be large).
                    let named = protocol::Request {
                        seq: request.seq,
                        command: request.command.clone(),
                        arguments: serde_json::Value::Null,
                    };
                    let handled = AssertUnwindSafe(session.handle(request))
                        .catch_unwind()
                        .await;
                    match handled {
                        Ok(Next::End) => break Exit::Ok,
                        Ok(Next::Continue) => {}
                        Err(panic) => {
                            let text = payload_text(panic.as_ref());
                            let message = format!("internal error: {text}");
                            out.refuse(&named, &message).await;
                        }
                    }
                }
                Err(reason) => {
                    let line = format!("promptforge: dap: {reason}\n");
                    out.event(
                        "output",
                        serde_json::json!({ "category": "console", "output": line }),
                    )
                    .await;
                }
            },
            Ok(None) => {
                session.stop().await;
                break Exit::Ok;
            }
            Err(fatal) => {
                session.stop().await;
                let _ = writeln!(std::io::stderr(), "promptforge: dap: {fatal}");
                break Exit::Problems;
            }
        }
    };
    drop(session);
    drop(out);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
    exit
}
