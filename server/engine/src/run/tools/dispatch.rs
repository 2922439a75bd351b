//! Running tool calls (Tools chapter, "Calling tools from Lua" to "Tool failures"):
//! a script's `tools.call` and one model tool call inside `models.loop`.

use std::sync::Arc;

use mlua::{Lua, Value};
use serde_json::Value as Json;

use crate::error::{EngineError, ErrorKind};
use crate::harness::{OutputKind, Tool, ToolError, ToolOutput, Trust};
use crate::messages;
use crate::models::{ToolCall, ToolSpec};
use crate::run::context::{Globals, RunEvents, SectionCtx};
use crate::run::json::{self, type_name};
use crate::run::tools::calls::count_call;
use crate::run::tools::local::run_handler;
use crate::run::tools::object::ToolObject;
use crate::run::tools::schema::check_arguments;
use crate::run::tools::scope::bound_tool;
use crate::run::tools::{is_engine_tool, tasks};
use crate::run::vm::{suspending_call, usage_error};
use crate::trace::{OpenSpan, SpanKind, ToolCallSpan};

/// What a call made from Lua ends with: `(true, value)` returns the value, `(false,
/// value)` raises it (a local handler's own error value).
pub type Returned = (bool, Value);

/// Runs a bound tool on JSON `arguments` with the chain's cancel signal; the output
/// is cut to the run's limit. A cancellation returns at once and raises `cancelled`.
pub async fn run_bound(
    ctx: &SectionCtx,
    tool: &Arc<dyn Tool>,
    arguments: &str,
) -> mlua::Result<Result<ToolOutput, ToolError>> {
    let cancel = ctx.control.cancel().clone();
    if cancel.is_cancelled() {
        return Err(ctx.control.raise(EngineError::cancelled()));
    }
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(ctx.control.raise(EngineError::cancelled())),
        outcome = tool.call(arguments, &cancel) => outcome,
    };
    if cancel.is_cancelled() {
        return Err(ctx.control.raise(EngineError::cancelled()));
    }
    let limit = usize::try_from(ctx.run.limits.tool_output_bytes).unwrap_or(usize::MAX);
    Ok(outcome.map(|mut output| {
        output.text = messages::cut_output(&output.text, limit);
        output
    }))
}

/// A tool call in flight, reported to the run's events and its trace: started
/// when made, and ended when dropped (failed unless [`InFlight::end`] said
/// otherwise), so a call that a cancellation or an error cuts short ends too.
struct InFlight {
    events: Arc<dyn RunEvents>,
    alias: String,
    call_id: String,
    ok: bool,
    span: Option<OpenSpan>,
    output: Option<(String, Trust)>,
    failure: Option<String>,
}

/// Who made a call, as the trace says it.
#[derive(Clone, Copy)]
enum Caller {
    Model,
    Script,
}

impl InFlight {
    /// Reports the start of a call of `alias` (at `path` for a bound tool) with
    /// the JSON text `arguments`.
    fn start(
        ctx: &SectionCtx,
        (alias, path): (&str, Option<&str>),
        call_id: String,
        (caller, line): (Caller, Option<u32>),
        arguments: &str,
    ) -> Self {
        ctx.run.events.tool_call(alias, path, &call_id);
        let span = ctx.run.open_span(ctx.trace_span, line, || {
            SpanKind::ToolCall(Box::new(ToolCallSpan {
                alias: alias.to_owned(),
                tool: path.map(str::to_owned),
                call_id: call_id.clone(),
                caller: match caller {
                    Caller::Model => "model",
                    Caller::Script => "script",
                }
                .to_owned(),
                arguments: arguments.to_owned(),
                output: None,
                trust: None,
            }))
        });
        InFlight {
            events: ctx.run.events.clone(),
            alias: alias.to_owned(),
            call_id,
            ok: false,
            span,
            output: None,
            failure: None,
        }
    }

    /// Ends the call with what the tool gave: its output or its failure.
    fn end_with(mut self, ran: &Result<ToolOutput, ToolError>) {
        self.ok = ran.is_ok();
        if self.span.is_some() {
            match ran {
                Ok(output) => self.output = Some((output.text.clone(), output.trust)),
                Err(failure) => self.failure = Some(failure.message.clone()),
            }
        }
    }

    /// Ends the call with a local handler's text (or its raised error).
    fn end_handled(mut self, handled: &Result<String, Value>) {
        self.ok = handled.is_ok();
        if self.span.is_some() {
            match handled {
                Ok(text) => self.output = Some((text.clone(), Trust::Trusted)),
                Err(_) => self.failure = Some(messages::HANDLER_RAISED.to_owned()),
            }
        }
    }

    /// Ends the call refused for arguments that break the schema.
    fn end_refused(mut self, message: &str) {
        if self.span.is_some() {
            self.failure = Some(message.to_owned());
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.events.tool_result(&self.alias, &self.call_id, self.ok);
        if let Some(span) = self.span.take() {
            let output = self.output.take();
            let failure = self.failure.take();
            let failure =
                failure.or_else(|| (!self.ok).then(|| messages::CALL_CUT_SHORT.to_owned()));
            span.finish(failure, |kind| {
                if let (SpanKind::ToolCall(call), Some((text, trust))) = (kind, output) {
                    call.output = Some(text);
                    call.trust = Some(trust.as_str().to_owned());
                }
            });
        }
    }
}

/// The output's text as the caller reads it: untrusted output in the envelope with
/// the run's nonce, trusted output exactly as produced.
fn shown(ctx: &SectionCtx, output: &ToolOutput) -> String {
    match output.trust {
        Trust::Trusted => output.text.clone(),
        Trust::Untrusted => ctx.run.identity.envelope(&output.text),
    }
}

/// The name a `tools.call` names: an alias string or a Tool object.
fn called_name(target: &Value) -> mlua::Result<String> {
    match target {
        Value::String(s) => Ok(s.to_string_lossy()),
        Value::UserData(ud) => match ud.borrow::<ToolObject>() {
            Ok(tool) => Ok(tool.alias.clone()),
            Err(_) => Err(usage_error(messages::call_alias_not_string("userdata"))),
        },
        other => Err(usage_error(messages::call_alias_not_string(type_name(
            other,
        )))),
    }
}

/// The JSON arguments of a `tools.call`: nil is `{}`.
fn call_arguments(args: &Value) -> mlua::Result<Json> {
    match args {
        Value::Nil => Ok(Json::Object(Default::default())),
        Value::Table(_) => json::to_json(args).map_err(|_| usage_error(messages::ARGS_NOT_JSON)),
        other => Err(usage_error(messages::args_not_table(type_name(other)))),
    }
}

fn unbound(ctx: &SectionCtx, name: &str) -> mlua::Error {
    let bound = ctx.run.prepared.bound_aliases();
    mlua::Error::external(EngineError::named(
        ErrorKind::UnboundTool,
        name,
        messages::unbound_tool(name, &bound),
    ))
}

fn tool_failure(message: impl Into<String>) -> mlua::Error {
    mlua::Error::external(EngineError::new(ErrorKind::Tool, message))
}

/// `tools.call(alias, args)`: a local tool first, then a bound slot; the four Engine
/// tool names and every other name fail with `unbound_tool`. Script calls reach any
/// bound tool, in the section's scope or not. Argument errors come before the name
/// is resolved; a script call's arguments are not checked against the schema.
/// `line` is the call's prompt line, when known (for the trace).
pub async fn script_call(
    lua: &Lua,
    ctx: &SectionCtx,
    target: Value,
    args: Value,
    line: Option<u32>,
) -> mlua::Result<Returned> {
    let name = called_name(&target)?;
    let arguments = call_arguments(&args)?;
    suspending_call(lua, &ctx.control, "tools.call")?;
    if is_engine_tool(&name) {
        return Err(unbound(ctx, &name));
    }
    if ctx.with_state(|s| s.tools.local(&name).is_some()) {
        count_call(ctx, &name);
        let call_id = ctx.run.tools.next_call_id();
        let call = InFlight::start(
            ctx,
            (&name, None),
            call_id,
            (Caller::Script, line),
            &arguments.to_string(),
        );
        let handled = run_handler(lua, ctx, &name, &arguments).await?;
        call.end_handled(&handled);
        return Ok(match handled {
            Ok(text) => (true, Value::String(lua.create_string(&text)?)),
            Err(raised) => (false, raised),
        });
    }
    let Some(tool) = bound_tool(ctx, &name) else {
        return Err(unbound(ctx, &name));
    };
    count_call(ctx, &name);
    let path = tool.id().as_str();
    let (call_id, text) = (ctx.run.tools.next_call_id(), arguments.to_string());
    let call = InFlight::start(
        ctx,
        (&name, Some(path)),
        call_id,
        (Caller::Script, line),
        &text,
    );
    let ran = run_bound(ctx, &tool, &text).await?;
    call.end_with(&ran);
    let output = match ran {
        Ok(output) => output,
        Err(failure) => return Err(tool_failure(messages::tool_call_failure(&failure.message))),
    };
    let value = match output.kind {
        OutputKind::Plain => Value::String(lua.create_string(shown(ctx, &output))?),
        OutputKind::Structured => {
            let parsed = match output.trust {
                Trust::Trusted => serde_json::from_str::<Json>(&output.text).ok(),
                // Wrapped before the parse: never valid JSON.
                Trust::Untrusted => None,
            };
            match parsed {
                Some(data) => json::to_lua(lua, &data)?,
                None => return Err(tool_failure(messages::structured_invalid_json(&name))),
            }
        }
    };
    Ok((true, value))
}

/// One model tool call of a round (its name is among `offered`): Ok(Ok(text)) is
/// the call's tool record content; Ok(Err(value)) a local handler's error, which
/// ends the loop; Err a failure that ends it too. A bound tool's failure goes back
/// to the model as the tool's own failure text (without the script's `tool call
/// failure: ` prefix) in the untrusted envelope; arguments that break the schema go
/// back as `invalid arguments for tool ...`, wrapped too. The call counts before
/// its arguments are checked. The Engine's task tools are not counted (they are not
/// aliases); `globals` are those of the chains a `task` call starts; `line` is
/// the prompt line of the `models.loop` the call came in, when known.
pub async fn model_call(
    lua: &Lua,
    ctx: &SectionCtx,
    call: &ToolCall,
    offered: &[ToolSpec],
    (globals, line): (Globals, Option<u32>),
) -> mlua::Result<Result<String, Value>> {
    let name = call.name.as_str();
    let Some(spec) = offered.iter().find(|s| s.name == name) else {
        return Err(usage_error(messages::out_of_scope_tool(name, &[], false)));
    };
    if ctx.control.debug.is_some() {
        suspending_call(lua, &ctx.control, &format!("tool:{name}"))?;
    }
    let call_id = if call.id.is_empty() {
        ctx.run.tools.next_call_id()
    } else {
        call.id.clone()
    };
    if is_engine_tool(name) {
        let in_flight = InFlight::start(
            ctx,
            (name, None),
            call_id,
            (Caller::Model, line),
            &call.arguments,
        );
        let text = tasks::engine_call(lua, ctx, spec, &call.arguments, globals).await?;
        in_flight.end_handled(&Ok::<_, Value>(text.clone()));
        return Ok(Ok(text));
    }
    count_call(ctx, name);
    let local = ctx.with_state(|s| s.tools.local(name).is_some());
    let tool = if local { None } else { bound_tool(ctx, name) };
    let path = tool.as_ref().map(|t| t.id().as_str().to_owned());
    let in_flight = InFlight::start(
        ctx,
        (name, path.as_deref()),
        call_id,
        (Caller::Model, line),
        &call.arguments,
    );
    let arguments = match check_arguments(&spec.parameters, &call.arguments) {
        Ok(arguments) => arguments,
        Err(reason) => {
            let text = messages::invalid_arguments(name, &reason);
            in_flight.end_refused(&text);
            return Ok(Ok(ctx.run.identity.envelope(&text)));
        }
    };
    if local {
        let handled = run_handler(lua, ctx, name, &arguments).await?;
        in_flight.end_handled(&handled);
        return Ok(handled);
    }
    let Some(tool) = tool else {
        return Err(unbound(ctx, name));
    };
    let ran = run_bound(ctx, &tool, &arguments.to_string()).await?;
    in_flight.end_with(&ran);
    Ok(Ok(match ran {
        Ok(output) => shown(ctx, &output),
        Err(failure) => ctx.run.identity.envelope(&failure.message),
    }))
}
