//! One debug session: `initialize`, `launch`, the breakpoint requests,
//! `configurationDone` (the run starts), the requests about the run's chains
//! ([`Chains`]), `terminate` and `disconnect` (the run is cancelled and waited
//! for), answered in the order the client sent them (a paused chain's answers
//! may come after later requests' responses).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use promptforge_engine::run::{DebugListener, Debugger};
use promptforge_transport::payload_text;
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cli::GlobalArgs;
use crate::dap::breakpoints::{self, Breakpoints};
use crate::dap::events::Events;
use crate::dap::launch::{self, LaunchArguments};
use crate::dap::paused::Chains;
use crate::dap::program::Program;
use crate::dap::protocol::{Outgoing, Request};

/// How long `terminate`/`disconnect` wait for the cancelled run to end.
const END_TIMEOUT: Duration = Duration::from_secs(2);

/// The session's state.
pub struct Session {
    out: Outgoing,
    global: GlobalArgs,
    launch: Option<LaunchArguments>,
    cancel: CancellationToken,
    run: Option<JoinHandle<()>>,
    breakpoints: Breakpoints,
    chains: Chains,
}

/// What the reader does after a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Read the next request.
    Continue,
    /// The client disconnected: the session is over.
    End,
}

/// What `initialize` announces.
fn capabilities() -> Value {
    json!({
        "supportsConfigurationDoneRequest": true,
        "supportsTerminateRequest": true,
        "supportsConditionalBreakpoints": true,
        "supportsHitConditionalBreakpoints": true,
        "supportsLogPoints": true,
        "supportsFunctionBreakpoints": true,
        "supportsEvaluateForHovers": true,
        "supportsSetVariable": true,
        "supportsExceptionInfoRequest": true,
        "exceptionBreakpointFilters": breakpoints::exception_filters(),
    })
}

impl Session {
    /// A session writing through `out`, with the command line's common flags.
    pub fn new(out: Outgoing, global: GlobalArgs) -> Self {
        let events = Arc::new(Events::new(out.clone()));
        let listener: Arc<dyn DebugListener> = events.clone();
        let chains = Chains {
            debugger: Arc::new(Debugger::new(listener)),
            events,
            program: None,
            out: out.clone(),
        };
        Session {
            out,
            global,
            launch: None,
            cancel: CancellationToken::new(),
            run: None,
            breakpoints: Breakpoints::default(),
            chains,
        }
    }

    /// Answers `request`.
    pub async fn handle(&mut self, request: Request) -> Next {
        let out = self.out.clone();
        if self.chains.handle(&request).await {
            return Next::Continue;
        }
        match request.command.as_str() {
            "initialize" => {
                out.respond(&request, capabilities()).await;
                out.event("initialized", Value::Null).await;
            }
            "launch" => match LaunchArguments::parse(&request.arguments) {
                Ok(launch) => {
                    self.chains.program = Program::read(&launch.program).map(Arc::new);
                    self.push_line_breakpoints();
                    self.launch = Some(launch);
                    out.respond(&request, Value::Null).await;
                    if let Some(program) = &self.chains.program {
                        for changed in self.breakpoints.launched(program) {
                            out.event("breakpoint", changed).await;
                        }
                    }
                }
                Err(message) => out.refuse(&request, &message).await,
            },
            "setBreakpoints" => {
                let set = self
                    .breakpoints
                    .set_lines(&request.arguments, self.chains.program.as_deref());
                match set {
                    Ok(body) => {
                        self.push_line_breakpoints();
                        out.respond(&request, body).await;
                    }
                    Err(message) => out.refuse(&request, &message).await,
                }
            }
            "setFunctionBreakpoints" => match self.breakpoints.set_functions(&request.arguments) {
                Ok((names, body)) => {
                    self.chains.debugger.set_function_breakpoints(names);
                    out.respond(&request, body).await;
                }
                Err(message) => out.refuse(&request, &message).await,
            },
            "setExceptionBreakpoints" => {
                let (filters, body) = breakpoints::exception_breakpoints(&request.arguments);
                self.chains.debugger.set_exception_filters(filters);
                out.respond(&request, body).await;
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

    /// Hands the launched prompt's line breakpoints to the debugger.
    fn push_line_breakpoints(&self) {
        if let Some(program) = &self.chains.program {
            let lines = self.breakpoints.of_program(program);
            self.chains.debugger.set_line_breakpoints(lines);
        }
    }

    /// Starts the launched run; its end sends `exited` then `terminated`.
    fn start(&mut self, launch: LaunchArguments) {
        let (out, global, cancel) = (self.out.clone(), self.global.clone(), self.cancel.clone());
        let debugger = (!launch.no_debug).then(|| self.chains.debugger.clone());
        if launch.stop_on_entry {
            self.chains.debugger.stop_on_entry();
        }
        self.run = Some(tokio::spawn(async move {
            let run = launch::run(launch, &global, &out, cancel, debugger);
            let status = match AssertUnwindSafe(run).catch_unwind().await {
                Ok(status) => status,
                Err(panic) => {
                    let text = payload_text(panic.as_ref());
                    let line =
                        format!("promptforge: dap: the run stopped on an internal error: {text}\n");
                    out.event("output", json!({ "category": "stderr", "output": line }))
                        .await;
                    1
                }
            };
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
