//! Model rounds (`language.md` §4): the section's model, `infer`, and the tool loop
//! with its scope check and round cap.

use std::sync::{Arc, Mutex};

use mlua::{Lua, Value};

use crate::error::{EngineError, ErrorKind};
use crate::messages;
use crate::models::estimate::estimate;
use crate::models::{ChatMessage, ModelError, ModelReply, ModelRequest, Role, ToolSpec};
use crate::prepare::ModelLabel;
use crate::run::context::{Globals, LiveConversation, SectionCtx};
use crate::run::tools::{dispatch, scope};
use crate::run::vm::{suspending_call, usage_error};
use crate::trace::{Round, SpanKind};

/// Shows a conversation in the debugger's Run scope while it lives (only when a
/// debugger is attached).
struct Shown<'a>(&'a SectionCtx);

impl<'a> Shown<'a> {
    fn start(ctx: &'a SectionCtx, records: &Arc<Mutex<Vec<ChatMessage>>>) -> Option<Self> {
        ctx.control.debug.as_ref()?;
        ctx.with_state(|s| {
            s.conversation = Some(LiveConversation {
                records: records.clone(),
                pending: Vec::new(),
            })
        });
        Some(Shown(ctx))
    }

    fn pending(ctx: &SectionCtx, records: &[ChatMessage]) {
        if ctx.control.debug.is_some() {
            ctx.with_state(|s| {
                if let Some(conversation) = &mut s.conversation {
                    conversation.pending = records.to_vec();
                }
            });
        }
    }
}

impl Drop for Shown<'_> {
    fn drop(&mut self) {
        self.0.with_state(|s| s.conversation = None);
    }
}

/// A label declared under `models:`, or the undeclared-label message.
pub fn declared_label(ctx: &SectionCtx, label: &str) -> Result<ModelLabel, String> {
    ctx.run.prepared.label(label).cloned().ok_or_else(|| {
        let declared: Vec<String> = ctx
            .run
            .prepared
            .labels
            .iter()
            .map(|l| l.label.clone())
            .collect();
        messages::undeclared_label(label, &declared)
    })
}

/// The section's model: its `models.use`, else the run's default, else the only
/// label when exactly one is declared.
pub fn section_label(ctx: &SectionCtx) -> Result<String, String> {
    if let Some(label) = ctx.with_state(|s| s.model_use.clone()) {
        return Ok(label);
    }
    if let Some(label) = ctx.run.default_model.lock().ok().and_then(|d| d.clone()) {
        return Ok(label);
    }
    match ctx.run.prepared.labels.as_slice() {
        [only] => Ok(only.label.clone()),
        _ => Err(messages::NO_MODEL_SELECTED.to_owned()),
    }
}

/// The tools offered to the model in this round, in scope order (rebuilt for each
/// round); a bound tool whose schema is not a JSON object fails the run (Binding).
fn offered_tools(ctx: &SectionCtx) -> mlua::Result<Vec<ToolSpec>> {
    scope::offered(ctx).map_err(|error| ctx.control.raise(error))
}

/// One model round on `label`'s Host model.
async fn round(
    ctx: &SectionCtx,
    label: &ModelLabel,
    messages: Vec<ChatMessage>,
    tools: Vec<ToolSpec>,
    line: Option<u32>,
) -> mlua::Result<ModelReply> {
    ctx.with_state(|s| s.first_call = true);
    if let Some(notice) = ctx.run.host.take_echo_notice() {
        ctx.run.notice(notice);
    }
    let provider = match &label.model.provider {
        Ok(provider) => provider.clone(),
        Err(message) => {
            return Err(ctx
                .control
                .raise(EngineError::new(ErrorKind::Model, message.clone())))
        }
    };
    let index = ctx.run.count_round(&label.label);
    let request = ModelRequest {
        model: label.model.provider_model.clone(),
        messages,
        tools,
        temperature: label.temperature,
        max_tokens: label.max_tokens,
    };
    // The span holds the request: at least its texts, which a full trace
    // drops without copying them.
    let texts: usize = (request.messages.iter())
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.arguments.len())
                    .sum::<usize>()
        })
        .sum();
    let span = ctx
        .run
        .open_span_of(ctx.trace_span, line, texts as u64, || {
            SpanKind::Round(Box::new(Round {
                label: label.label.clone(),
                host_model: label.model.name.clone(),
                provider: provider.kind().to_owned(),
                model: request.model.clone(),
                index,
                request: request.as_json(),
                wire: provider.wire_request(&request),
                reply: None,
                usage: None,
            }))
        });
    let cancel = ctx.control.cancel().clone();
    let reply = tokio::select! {
        reply = provider.complete(&request, &cancel) => reply,
        () = cancel.cancelled() => Err(ModelError::cancelled()),
    };
    let reply = match reply {
        Ok(reply) => Ok(reply),
        Err(error) if error.cancelled => Err(EngineError::cancelled()),
        Err(error) => {
            let message = if error.names_model {
                error.message
            } else {
                messages::model_failure(&label.model.name, &error.message)
            };
            Err(EngineError::new(ErrorKind::Model, message))
        }
    };
    // A dropped span needs no usage.
    if let Some(span) = span.filter(|span| span.id().is_some()) {
        let failure = reply.as_ref().err().map(|error| error.message.clone());
        // Counted before the trace is locked: the first count loads an encoding.
        let usage = reply.as_ref().ok().and_then(|reply| {
            (reply.usage).or_else(|| estimate(&request.model, &request, reply, &ctx.run.token_memo))
        });
        span.finish(failure, |kind| {
            if let (SpanKind::Round(round), Ok(reply)) = (kind, &reply) {
                round.reply = Some(reply.as_trace());
                round.usage = usage;
            }
        });
    }
    reply.map_err(|error| ctx.control.raise(error))
}

/// `infer` (made at prompt line `line`, when known): one round without tools;
/// returns the reply text.
pub async fn infer(
    lua: &Lua,
    ctx: &SectionCtx,
    label: &str,
    messages: Vec<ChatMessage>,
    line: Option<u32>,
) -> mlua::Result<String> {
    let label = declared_label(ctx, label).map_err(usage_error)?;
    let records = Arc::new(Mutex::new(messages.clone()));
    let _shown = Shown::start(ctx, &records);
    suspending_call(lua, &ctx.control, "models.infer")?;
    let reply = round(ctx, &label, messages, Vec::new(), line).await?;
    Ok(reply.content)
}

/// `loop` (made at prompt line `line`, when known): rounds with the section's scope until the model replies with text; the
/// records are appended to `list`; returns the reply text, or Err(value) when a
/// local tool's handler raised `value` (raised again at the `models.loop` call).
/// `globals` are those of the chains the model's `task` calls start.
pub async fn run_loop(
    lua: &Lua,
    ctx: &SectionCtx,
    label: &str,
    list: Arc<Mutex<Vec<ChatMessage>>>,
    globals: Globals,
    line: Option<u32>,
) -> mlua::Result<Result<String, Value>> {
    let label = declared_label(ctx, label).map_err(usage_error)?;
    let _shown = Shown::start(ctx, &list);
    suspending_call(lua, &ctx.control, "models.loop")?;
    let cap = ctx.run.prepared.round_cap;
    let mut rounds = 0u32;
    loop {
        if rounds >= cap {
            return Err(ctx
                .control
                .raise(EngineError::new(ErrorKind::Tool, messages::round_cap(cap))));
        }
        rounds += 1;
        let offered = offered_tools(ctx)?;
        let snapshot = list.lock().map(|l| l.clone()).unwrap_or_default();
        let reply = round(ctx, &label, snapshot, offered.clone(), line).await?;
        if reply.tool_calls.is_empty() {
            if let Ok(mut list) = list.lock() {
                list.push(ChatMessage::text(Role::Assistant, reply.content.clone()));
            }
            return Ok(Ok(reply.content));
        }
        let records = match dispatch_calls(lua, ctx, &reply, &offered, (globals, line)).await? {
            Ok(records) => records,
            Err(raised) => return Ok(Err(raised)),
        };
        if let Ok(mut list) = list.lock() {
            list.extend(records);
        }
    }
}

/// Runs a reply's tool calls and gives the records they add: the assistant record
/// holding the calls, then one tool record per call, in call order. A batch is
/// all-or-nothing: a name outside the round's offered tools fails the whole round
/// before any call runs.
async fn dispatch_calls(
    lua: &Lua,
    ctx: &SectionCtx,
    reply: &ModelReply,
    offered: &[ToolSpec],
    globals: (Globals, Option<u32>),
) -> mlua::Result<Result<Vec<ChatMessage>, Value>> {
    if let Some(outside) = reply
        .tool_calls
        .iter()
        .find(|c| !offered.iter().any(|t| t.name == c.name))
    {
        let in_scope = scope::in_scope_aliases(offered);
        let bound = ctx.run.prepared.bound_aliases().contains(&outside.name);
        let message = messages::out_of_scope_tool(&outside.name, &in_scope, bound);
        return Err(ctx.control.raise(EngineError::named(
            ErrorKind::OutOfScopeTool,
            outside.name.clone(),
            message,
        )));
    }
    let mut records = vec![ChatMessage {
        role: Role::Assistant,
        content: reply.content.clone(),
        tool_calls: reply.tool_calls.clone(),
        tool_call_id: None,
        name: None,
    }];
    for call in &reply.tool_calls {
        Shown::pending(ctx, &records);
        let content = match dispatch::model_call(lua, ctx, call, offered, globals).await? {
            Ok(content) => content,
            Err(raised) => return Ok(Err(raised)),
        };
        records.push(ChatMessage {
            role: Role::Tool,
            content,
            tool_calls: Vec::new(),
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
        });
    }
    Ok(Ok(records))
}
