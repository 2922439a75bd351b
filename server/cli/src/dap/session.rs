//! One debug session: `initialize`, `launch`, `configurationDone` (the run
//! starts), `threads`, `terminate` and `disconnect` (the run is cancelled and
//! waited for), answered in the order the client sent them.
//!
//! Line breakpoints stop the chain that reaches one (`stopped`, then
//! `stackTrace` gives its Lua frames and its section's heading as file lines)
//! until `continue`. Stepping, variables and the other kinds of breakpoint are
//! not offered yet: `initialize` does not announce them, and `scopes` is empty.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use promptforge_engine::run::{BlockLine, DebugListener, Debugger, Stop};
use promptforge_syntax::Document;
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cli::GlobalArgs;
use crate::dap::breakpoints;
use crate::dap::launch::{self, LaunchArguments};
use crate::dap::protocol::{Outgoing, Request};

/// The one thread of this slice: the walk.
const WALK_THREAD: i64 = 1;

/// How long `terminate`/`disconnect` wait for the cancelled run to end.
const END_TIMEOUT: Duration = Duration::from_secs(2);

/// The chain that stopped last, kept for `stackTrace`; each stop is told to the
/// client as a `stopped` event.
struct Stops {
    out: Outgoing,
    last: Mutex<Option<Stop>>,
}

impl DebugListener for Stops {
    fn stopped(&self, stop: Stop) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(stop);
        let body =
            json!({ "reason": "breakpoint", "threadId": WALK_THREAD, "allThreadsStopped": false });
        self.out.event_now("stopped", body);
    }
}

/// The session's state.
pub struct Session {
    out: Outgoing,
    global: GlobalArgs,
    launch: Option<LaunchArguments>,
    cancel: CancellationToken,
    run: Option<JoinHandle<()>>,
    stops: Arc<Stops>,
    debugger: Arc<Debugger>,
    /// The launched prompt, read when the run starts (to name its lines).
    program: Option<(PathBuf, Document)>,
}

/// The prompt at `path` read and parsed (None when it cannot be read).
fn document_at(path: &Path) -> Option<Document> {
    let text = crate::files::read_text(path).ok()?;
    Some(promptforge_syntax::parse(&text).document)
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
        let stops = Arc::new(Stops {
            out: out.clone(),
            last: Mutex::new(None),
        });
        let listener: Arc<dyn DebugListener> = stops.clone();
        Session {
            out,
            global,
            launch: None,
            cancel: CancellationToken::new(),
            run: None,
            stops,
            debugger: Arc::new(Debugger::new(listener)),
            program: None,
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
                let body = self.set_breakpoints(&request.arguments);
                out.respond(&request, body).await;
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
            "stackTrace" => {
                let body = self.stack_trace();
                out.respond(&request, body).await;
            }
            "scopes" => {
                out.respond(&request, json!({ "scopes": [] })).await;
            }
            "continue" => {
                self.stops
                    .last
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                self.debugger.resume();
                out.respond(&request, json!({ "allThreadsContinued": true }))
                    .await;
            }
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

    /// `setBreakpoints` for one source: each breakpoint bound to the block line
    /// it moves to, or unverified with the reason; the debugger gets them all.
    fn set_breakpoints(&mut self, arguments: &Value) -> Value {
        let path = arguments["source"]["path"].as_str().map(PathBuf::from);
        let document = path.as_deref().and_then(document_at);
        let mut places: Vec<BlockLine> = Vec::new();
        let answers: Vec<Value> = arguments["breakpoints"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(n, wanted)| {
                let line = wanted["line"].as_u64().and_then(|l| u32::try_from(l).ok());
                let placed = match (&document, line) {
                    (Some(document), Some(line)) => breakpoints::place(document, line),
                    (None, _) => Err("the source cannot be read"),
                    (_, None) => Err("the breakpoint has no line"),
                };
                match placed {
                    Ok((place, moved)) => {
                        places.push(place);
                        json!({ "id": n + 1, "verified": true, "line": moved })
                    }
                    Err(reason) => json!({ "id": n + 1, "verified": false, "line": wanted["line"], "message": reason }),
                }
            })
            .collect();
        self.debugger.set_breakpoints(places);
        json!({ "breakpoints": answers })
    }

    /// The stopped chain's frames: its Lua frames at the prompt's lines,
    /// innermost first, then its section's heading.
    fn stack_trace(&self) -> Value {
        let last = self
            .stops
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let (Some(stop), Some((path, document))) = (last, &self.program) else {
            return json!({ "stackFrames": [], "totalFrames": 0 });
        };
        let source = json!({ "name": path.file_name().map(|n| n.to_string_lossy().into_owned()), "path": path });
        let mut frames: Vec<Value> = stop
            .frames
            .iter()
            .filter_map(|place| {
                let line = breakpoints::file_line(document, *place)?;
                Some((format!("lua block {}", place.block + 1), line))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .enumerate()
            .map(|(n, (name, line))| json!({ "id": n + 1, "name": name, "source": source, "line": line, "column": 1 }))
            .collect();
        if let Some(line) = breakpoints::heading_line(document, &stop.section) {
            let name = if stop.section.is_empty() {
                document
                    .title
                    .as_ref()
                    .map_or_else(String::new, |t| format!("# {}", t.text))
            } else {
                format!("## {}", stop.section)
            };
            let id = frames.len() + 1;
            frames.push(json!({ "id": id, "name": name, "source": source, "line": line, "column": 1, "presentationHint": "label" }));
        }
        let total = frames.len();
        json!({ "stackFrames": frames, "totalFrames": total })
    }

    /// Starts the launched run; its end sends `exited` then `terminated`.
    fn start(&mut self, launch: LaunchArguments) {
        self.program = document_at(&launch.program).map(|d| (launch.program.clone(), d));
        let (out, global, cancel) = (self.out.clone(), self.global.clone(), self.cancel.clone());
        let debugger = Arc::clone(&self.debugger);
        self.run = Some(tokio::spawn(async move {
            let status = launch::run(launch, &global, &out, cancel, debugger).await;
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
