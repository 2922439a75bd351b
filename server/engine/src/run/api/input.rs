//! `input.ask(question)`: asks the operator through the Host's input broker.

use std::sync::Arc;

use mlua::{Function, Lua, Value};

use crate::error::{EngineError, ErrorKind};
use crate::messages;
use crate::run::context::SectionCtx;
use crate::run::json::type_name;
use crate::run::vm::{lazy_function, suspending_call, usage_error};
use crate::trace::EventKind;

/// Installs `input`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let table = lua.create_table()?;
    let ctx = ctx.clone();
    let ask = lazy_function(lua, move |lua| ask_function(lua, ctx.clone()))?;
    table.set("ask", ask)?;
    lua.globals().set("input", table)
}

fn ask_function(lua: &Lua, ctx: Arc<SectionCtx>) -> mlua::Result<Function> {
    lua.create_async_function(move |lua, question: Value| {
        let ctx = ctx.clone();
        async move {
            let question = match &question {
                Value::String(s) => s.to_string_lossy(),
                other => return Err(usage_error(messages::input_question_not_string(type_name(other)))),
            };
            suspending_call(&lua, &ctx.control, "input.ask")?;
            let unavailable = || EngineError::new(ErrorKind::InputUnavailable, messages::INPUT_UNAVAILABLE);
            let Some(broker) = ctx.run.host.input() else {
                return Err(ctx.control.raise(unavailable()));
            };
            let answer = tokio::select! {
                answer = broker.ask(&question) => answer.map_err(|_| ctx.control.raise(unavailable())),
                () = ctx.control.cancel().cancelled() => Err(ctx.control.raise(EngineError::cancelled())),
            };
            ctx.run.trace_event(ctx.trace_span, || EventKind::Ask {
                question: question.clone(),
                answer: answer.as_ref().ok().cloned(),
            });
            answer
        }
    })
}
