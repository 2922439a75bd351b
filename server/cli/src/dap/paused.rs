//! The requests about the run's chains: `threads`, and while a chain is paused
//! `stackTrace`, `scopes`, `variables`, `evaluate`, `setVariable`,
//! `exceptionInfo`, then `continue`, `next`, `stepIn`, `stepOut`; `pause` for a
//! running chain.
//!
//! A question goes to the paused chain's mailbox at once (so questions and the
//! resume that follows keep the client's order) and its answer is awaited on a
//! task of its own, so the adapter keeps reading. Frame ids and variable
//! references carry their thread: `thread * 10_000 + frame + 1` and
//! `thread * 1_000_000 + handle`.

use std::sync::Arc;
use std::time::Duration;

use promptforge_engine::run::{
    Answer, Debugger, Frame, FramePlace, Query, ScopeInfo, StepKind, StopReason, Variable,
};
use serde_json::{json, Value};

use crate::dap::events::Events;
use crate::dap::program::Program;
use crate::dap::protocol::{Outgoing, Request};

/// How frame ids carry their thread.
const FRAME_SPAN: i64 = 10_000;

/// How variable references carry their thread.
const VARIABLE_SPAN: i64 = 1_000_000;

/// How long a paused chain may take to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The run's chains as the adapter reaches them.
#[derive(Clone)]
pub struct Chains {
    /// The run's debugger.
    pub debugger: Arc<Debugger>,
    /// What it told the client.
    pub events: Arc<Events>,
    /// The launched prompt, once the run started.
    pub program: Option<Arc<Program>>,
    /// The client.
    pub out: Outgoing,
}

fn thread_of(arguments: &Value) -> Option<i64> {
    arguments["threadId"].as_i64()
}

/// The thread and the frame index of a frame id.
fn frame_of(id: i64) -> (i64, usize) {
    (
        id / FRAME_SPAN,
        usize::try_from(id % FRAME_SPAN - 1).unwrap_or(0),
    )
}

/// The thread and the handle of a variable reference.
fn reference_of(reference: i64) -> (i64, u32) {
    (
        reference / VARIABLE_SPAN,
        u32::try_from(reference % VARIABLE_SPAN).unwrap_or(0),
    )
}

fn reference(thread: i64, handle: u32) -> i64 {
    if handle == 0 || i64::from(handle) >= VARIABLE_SPAN {
        0
    } else {
        thread * VARIABLE_SPAN + i64::from(handle)
    }
}

fn variable_json(thread: i64, variable: &Variable) -> Value {
    json!({
        "name": variable.name,
        "value": variable.value,
        "type": variable.type_name,
        "variablesReference": reference(thread, variable.handle),
    })
}

impl Chains {
    /// Answers `request` when it is about the chains; false for another request.
    pub async fn handle(&self, request: &Request) -> bool {
        let arguments = &request.arguments;
        match request.command.as_str() {
            "threads" => {
                let threads: Vec<Value> = self
                    .debugger
                    .thread_list()
                    .into_iter()
                    .map(|(id, name)| json!({ "id": id, "name": name }))
                    .collect();
                self.out
                    .respond(request, json!({ "threads": threads }))
                    .await;
            }
            "stackTrace" => self.stack_trace(request).await,
            "scopes" => {
                let (thread, frame) = frame_of(arguments["frameId"].as_i64().unwrap_or(0));
                self.ask(
                    request,
                    thread,
                    Query::Scopes { frame },
                    move |answer| match answer {
                        Answer::Scopes(scopes) => {
                            Ok(json!({ "scopes": scopes_json(thread, &scopes) }))
                        }
                        other => Err(failure(other)),
                    },
                )
                .await;
            }
            "variables" => {
                let (thread, handle) =
                    reference_of(arguments["variablesReference"].as_i64().unwrap_or(0));
                self.ask(
                    request,
                    thread,
                    Query::Variables { handle },
                    move |answer| match answer {
                        Answer::Variables(variables) => {
                            let all: Vec<Value> =
                                variables.iter().map(|v| variable_json(thread, v)).collect();
                            Ok(json!({ "variables": all }))
                        }
                        other => Err(failure(other)),
                    },
                )
                .await;
            }
            "evaluate" => self.evaluate(request).await,
            "setVariable" => {
                let (thread, handle) =
                    reference_of(arguments["variablesReference"].as_i64().unwrap_or(0));
                let query = Query::SetVariable {
                    handle,
                    name: arguments["name"].as_str().unwrap_or_default().to_owned(),
                    value: arguments["value"].as_str().unwrap_or_default().to_owned(),
                };
                self.ask(request, thread, query, move |answer| match answer {
                    Answer::Value(variable) => Ok(json!({
                        "value": variable.value,
                        "type": variable.type_name,
                        "variablesReference": reference(thread, variable.handle),
                    })),
                    other => Err(failure(other)),
                })
                .await;
            }
            "exceptionInfo" => self.exception_info(request).await,
            "continue" => self.resume(request, None).await,
            "next" => self.resume(request, Some(StepKind::Over)).await,
            "stepIn" => self.resume(request, Some(StepKind::Into)).await,
            "stepOut" => self.resume(request, Some(StepKind::Out)).await,
            "pause" => {
                let thread = thread_of(arguments).unwrap_or(1);
                if self.debugger.pause(thread) {
                    self.out.respond(request, Value::Null).await;
                } else {
                    let message = format!("there is no thread {thread} to pause");
                    self.out.refuse(request, &message).await;
                }
            }
            _ => return false,
        }
        true
    }

    /// Sends `query` to the paused `thread` now and answers `request` with
    /// `render` of its answer once it comes.
    async fn ask(
        &self,
        request: &Request,
        thread: i64,
        query: Query,
        render: impl FnOnce(Answer) -> Result<Value, String> + Send + 'static,
    ) {
        let Some(answer) = self.debugger.ask(thread, query) else {
            let message = format!("thread {thread} is not paused");
            self.out.refuse(request, &message).await;
            return;
        };
        let (out, request) = (self.out.clone(), request.clone());
        tokio::spawn(async move {
            let rendered = match tokio::time::timeout(ANSWER_TIMEOUT, answer).await {
                Ok(Ok(answer)) => render(answer),
                Ok(Err(_)) => Err(format!("thread {thread} ended before it answered")),
                Err(_) => Err(format!("thread {thread} did not answer in time")),
            };
            match rendered {
                Ok(body) => out.respond(&request, body).await,
                Err(message) => out.refuse(&request, &message).await,
            }
        });
    }

    async fn stack_trace(&self, request: &Request) {
        let arguments = &request.arguments;
        let thread = thread_of(arguments).unwrap_or(1);
        let start = arguments["startFrame"].as_u64().unwrap_or(0) as usize;
        let levels = match arguments["levels"].as_u64() {
            Some(0) | None => usize::MAX,
            Some(n) => n as usize,
        };
        let program = self.program.clone();
        self.ask(request, thread, Query::Frames, move |answer| {
            let Answer::Frames(frames) = answer else {
                return Err(failure(answer));
            };
            let shown: Vec<Value> = frames
                .iter()
                .enumerate()
                .skip(start)
                .take(levels)
                .map(|(index, frame)| frame_json(program.as_deref(), thread, index, frame))
                .collect();
            Ok(json!({ "stackFrames": shown, "totalFrames": frames.len() }))
        })
        .await;
    }

    async fn evaluate(&self, request: &Request) {
        let arguments = &request.arguments;
        let (thread, frame) = match arguments["frameId"].as_i64() {
            Some(id) => {
                let (thread, frame) = frame_of(id);
                (Some(thread), Some(frame))
            }
            None => (self.events.first_paused(), None),
        };
        let Some(thread) = thread else {
            self.out
                .refuse(
                    request,
                    "the run is not paused: expressions run in a paused chain",
                )
                .await;
            return;
        };
        let context = arguments["context"].as_str().unwrap_or("repl");
        let query = Query::Evaluate {
            frame,
            expression: arguments["expression"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            whole: matches!(context, "repl" | "clipboard"),
        };
        self.ask(request, thread, query, move |answer| match answer {
            Answer::Value(variable) => Ok(json!({
                "result": variable.value,
                "type": variable.type_name,
                "variablesReference": reference(thread, variable.handle),
            })),
            other => Err(failure(other)),
        })
        .await;
    }

    async fn exception_info(&self, request: &Request) {
        let thread = thread_of(&request.arguments).unwrap_or(1);
        match self.events.stop_of(thread) {
            Some(stop) if stop.reason == StopReason::Exception => {
                let (kind, message) = stop.exception.unwrap_or_default();
                let filters = self.debugger.exception_filters();
                let mode = if filters.raised {
                    "always"
                } else {
                    "unhandled"
                };
                let body =
                    json!({ "exceptionId": kind, "description": message, "breakMode": mode });
                self.out.respond(request, body).await;
            }
            _ => {
                let message = format!("thread {thread} is not paused on an error");
                self.out.refuse(request, &message).await;
            }
        }
    }

    async fn resume(&self, request: &Request, step: Option<StepKind>) {
        let thread = thread_of(&request.arguments).unwrap_or(1);
        if !self.debugger.is_paused(thread) {
            let message = format!("thread {thread} is not paused");
            self.out.refuse(request, &message).await;
            return;
        }
        // Answered and forgotten first: the chain may stop again at once, and
        // its `stopped` event must follow this response.
        let body = match step {
            None => json!({ "allThreadsContinued": false }),
            Some(_) => Value::Null,
        };
        self.out.respond(request, body).await;
        self.events.resumed(thread);
        self.debugger.resume(thread, step);
    }
}

fn failure(answer: Answer) -> String {
    match answer {
        Answer::Failed(message) => message,
        _ => "the paused chain gave another answer".to_owned(),
    }
}

fn scopes_json(thread: i64, scopes: &[ScopeInfo]) -> Vec<Value> {
    scopes
        .iter()
        .map(|scope| {
            let mut shown = json!({
                "name": scope.name,
                "variablesReference": reference(thread, scope.handle),
                "expensive": false,
            });
            if scope.name == "Locals" {
                shown["presentationHint"] = json!("locals");
            }
            shown
        })
        .collect()
}

fn frame_json(program: Option<&Program>, thread: i64, index: usize, frame: &Frame) -> Value {
    let id = thread * FRAME_SPAN + i64::try_from(index).unwrap_or(0) + 1;
    let line = program.and_then(|p| p.line_of(&frame.place)).unwrap_or(0);
    let mut shown = json!({ "id": id, "name": frame.name, "line": line, "column": 1 });
    if let Some(program) = program {
        shown["source"] = json!({ "name": program.name(), "path": program.path });
    }
    let hint = match (&frame.place, frame.level) {
        (FramePlace::Block(_), Some(_)) => "normal",
        (FramePlace::Section(_), _) => "label",
        (FramePlace::Block(_), None) => "subtle",
    };
    shown["presentationHint"] = json!(hint);
    shown
}
