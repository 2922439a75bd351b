//! One debug session: `initialize`, `launch`, `configurationDone` (the run
//! starts), `threads`, `terminate` and `disconnect` (the run is cancelled and
//! waited for), answered in the order the client sent them.
//!
//! This first slice runs the prompt under the client's control; breakpoints,
//! stepping and variables are not offered yet: `initialize` does not announce
//! them, and `setBreakpoints` answers each breakpoint unverified, saying so.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cli::GlobalArgs;
use crate::dap::launch::{self, LaunchArguments};
use crate::dap::protocol::{Outgoing, Request};

/// The one thread of this slice: the walk.
const WALK_THREAD: i64 = 1;

/// Why `setBreakpoints` leaves each breakpoint unverified.
pub const NO_BREAKPOINTS: &str =
    "breakpoints are not available yet: this adapter runs the prompt without stopping";

/// How long `terminate`/`disconnect` wait for the cancelled run to end.
const END_TIMEOUT: Duration = Duration::from_secs(2);

/// The session's state.
pub struct Session {
    out: Outgoing,
    global: GlobalArgs,
    launch: Option<LaunchArguments>,
    cancel: CancellationToken,
    run: Option<JoinHandle<()>>,
}

/// What the reader does after a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Read the next request.
    Continue,
    /// The client disconnected: the session is over.
    End,
}

impl Session {
    /// A session writing through `out`, with the command line's common flags.
    pub fn new(out: Outgoing, global: GlobalArgs) -> Self {
        Session {
            out,
            global,
            launch: None,
            cancel: CancellationToken::new(),
            run: None,
        }
    }

    /// Answers `request`.
    pub async fn handle(&mut self, request: Request) -> Next {
        let out = self.out.clone();
        match request.command.as_str() {
            "initialize" => {
                let capabilities = json!({
                    "supportsConfigurationDoneRequest": true,
                    "supportsTerminateRequest": true,
                });
                out.respond(&request, capabilities).await;
                out.event("initialized", Value::Null).await;
            }
            "launch" => match LaunchArguments::parse(&request.arguments) {
                Ok(launch) => {
                    self.launch = Some(launch);
                    out.respond(&request, Value::Null).await;
                }
                Err(message) => out.refuse(&request, &message).await,
            },
            "setBreakpoints" => {
                let breakpoints: Vec<Value> = request.arguments["breakpoints"]
                    .as_array()
                    .map(|all| {
                        all.iter()
                            .map(|b| json!({ "verified": false, "line": b["line"], "message": NO_BREAKPOINTS }))
                            .collect()
                    })
                    .unwrap_or_default();
                out.respond(&request, json!({ "breakpoints": breakpoints }))
                    .await;
            }
            "setExceptionBreakpoints" => {
                out.respond(&request, json!({ "breakpoints": [] })).await;
            }
            "configurationDone" => match self.launch.take() {
                Some(launch) => {
                    out.respond(&request, Value::Null).await;
                    self.start(launch);
                }
                None => {
                    out.refuse(&request, "configurationDone before launch")
                        .await
                }
            },
            "threads" => {
                let threads = json!({ "threads": [{ "id": WALK_THREAD, "name": "walk" }] });
                out.respond(&request, threads).await;
            }
            "terminate" => {
                self.stop().await;
                out.respond(&request, Value::Null).await;
            }
            "disconnect" => {
                self.stop().await;
                out.respond(&request, Value::Null).await;
                return Next::End;
            }
            other => {
                let message = format!("the request {other} is not supported by this adapter");
                out.refuse(&request, &message).await;
            }
        }
        Next::Continue
    }

    /// Starts the launched run; its end sends `exited` then `terminated`.
    fn start(&mut self, launch: LaunchArguments) {
        let (out, global, cancel) = (self.out.clone(), self.global.clone(), self.cancel.clone());
        self.run = Some(tokio::spawn(async move {
            let status = launch::run(launch, &global, &out, cancel).await;
            out.event("exited", json!({ "exitCode": status })).await;
            out.event("terminated", Value::Null).await;
        }));
    }

    /// Cancels the run and waits (at most [`END_TIMEOUT`]) for it to end.
    pub async fn stop(&mut self) {
        self.cancel.cancel();
        if let Some(run) = self.run.take() {
            let _ = tokio::time::timeout(END_TIMEOUT, run).await;
        }
    }
}
