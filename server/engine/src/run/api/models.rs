//! `models`: `default`, `use`, `get`, `infer`, `loop`, frozen model handles and the
//! model globals (one handle per `models:` label).

use std::sync::Arc;

use mlua::{Function, Lua, MetaMethod, UserData, UserDataMethods, Value};

use crate::messages;
use crate::models::{ChatMessage, Role};
use crate::run::api::messages::Conversation;
use crate::run::context::{Globals, SectionCtx};
use crate::run::conversation::{self, declared_label, section_label};
use crate::run::json::type_name;
use crate::run::vm::errors::caller_line;
use crate::run::vm::{lazy_function, reraising, usage_error};

/// A model handle: `.name` (the label), `.model` (the Host model), `:infer`, `:loop`
/// (whose `task` calls start chains with `globals`).
#[derive(Clone)]
pub(super) struct ModelHandle {
    ctx: Arc<SectionCtx>,
    /// The label.
    pub(super) label: String,
    /// The Host model it resolved to.
    pub(super) model: String,
    globals: Globals,
}

fn label_arg(function: &str, value: &Value) -> mlua::Result<String> {
    match value {
        Value::String(s) => Ok(s.to_string_lossy()),
        other => Err(usage_error(messages::label_not_string(
            function,
            type_name(other),
        ))),
    }
}

fn handle(ctx: &Arc<SectionCtx>, label: &str, globals: Globals) -> mlua::Result<ModelHandle> {
    let declared = declared_label(ctx, label).map_err(usage_error)?;
    Ok(ModelHandle {
        ctx: ctx.clone(),
        label: declared.label,
        model: declared.model.name,
        globals,
    })
}

/// The messages of an `infer` argument: a string is one user message, a list is copied.
fn conversation_of(function: &str, value: &Value) -> mlua::Result<Vec<ChatMessage>> {
    match value {
        Value::String(s) => Ok(vec![ChatMessage::text(Role::User, s.to_string_lossy())]),
        Value::UserData(ud) => match ud.borrow::<Conversation>() {
            Ok(list) => Ok(list.snapshot()),
            Err(_) => Err(usage_error(messages::not_a_conversation(
                function, "userdata",
            ))),
        },
        other => Err(usage_error(messages::not_a_conversation(
            function,
            type_name(other),
        ))),
    }
}

fn list_of(function: &str, value: &Value) -> mlua::Result<Conversation> {
    match value {
        Value::UserData(ud) => ud
            .borrow::<Conversation>()
            .map(|l| l.clone())
            .map_err(|_| usage_error(messages::not_a_conversation(function, "userdata"))),
        other => Err(usage_error(messages::not_a_conversation(
            function,
            type_name(other),
        ))),
    }
}

/// The string or list an infer/loop call works on: the first argument, or the
/// second for a handle method (`handle:infer(x)`, whose first is the handle).
fn subject_arg(args: mlua::MultiValue, is_method: bool) -> Value {
    args.into_iter()
        .nth(usize::from(is_method))
        .unwrap_or(Value::Nil)
}

/// The label a call uses: the handle's, or the section's model.
fn label_of(ctx: &SectionCtx, fixed: Option<String>) -> mlua::Result<String> {
    match fixed {
        Some(label) => Ok(label),
        None => section_label(ctx).map_err(usage_error),
    }
}

fn infer_function(
    lua: &Lua,
    ctx: Arc<SectionCtx>,
    fixed: Option<String>,
    name: &'static str,
) -> mlua::Result<Function> {
    lua.create_async_function(move |lua, args: mlua::MultiValue| {
        let ctx = ctx.clone();
        let fixed = fixed.clone();
        let line = traced_line(&lua, &ctx);
        async move {
            let x = subject_arg(args, fixed.is_some());
            let messages = conversation_of(name, &x)?;
            let label = label_of(&ctx, fixed)?;
            conversation::infer(&lua, &ctx, &label, messages, line).await
        }
    })
}

fn loop_function(
    lua: &Lua,
    ctx: Arc<SectionCtx>,
    fixed: Option<String>,
    name: &'static str,
    globals: Globals,
) -> mlua::Result<Function> {
    let inner = lua.create_async_function(move |lua, args: mlua::MultiValue| {
        let ctx = ctx.clone();
        let fixed = fixed.clone();
        let line = traced_line(&lua, &ctx);
        async move {
            let x = subject_arg(args, fixed.is_some());
            let list = list_of(name, &x)?;
            let label = label_of(&ctx, fixed)?;
            Ok(
                match conversation::run_loop(
                    &lua,
                    &ctx,
                    &label,
                    list.records.clone(),
                    globals,
                    line,
                )
                .await?
                {
                    Ok(text) => (true, Value::String(lua.create_string(&text)?)),
                    // A local tool handler's own error value, raised again here.
                    Err(raised) => (false, raised),
                },
            )
        }
    })?;
    reraising(lua, inner)
}

impl UserData for ModelHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::Index, |lua, this, key: String| {
            Ok(match key.as_str() {
                "name" => Value::String(lua.create_string(&this.label)?),
                "model" => Value::String(lua.create_string(&this.model)?),
                "infer" => Value::Function(infer_function(
                    lua,
                    this.ctx.clone(),
                    Some(this.label.clone()),
                    "infer",
                )?),
                "loop" => Value::Function(loop_function(
                    lua,
                    this.ctx.clone(),
                    Some(this.label.clone()),
                    "loop",
                    this.globals,
                )?),
                _ => Value::Nil,
            })
        });
        methods.add_meta_method(MetaMethod::NewIndex, |_, _, (key, _): (String, Value)| {
            Err::<(), _>(usage_error(messages::model_handle_frozen(&key)))
        });
    }
}

/// Installs `models`; the chains a model loop's `task` calls start get `globals`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>, globals: Globals) -> mlua::Result<()> {
    let table = lua.create_table()?;
    let c = ctx.clone();
    table.set(
        "default",
        lua.create_function(move |_, label: Value| {
            let label = label_arg("models.default", &label)?;
            declared_label(&c, &label).map_err(usage_error)?;
            if let Ok(mut default) = c.run.default_model.lock() {
                *default = Some(label);
            }
            Ok(())
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "use",
        lua.create_function(move |_, label: Value| {
            let label = label_arg("models.use", &label)?;
            let handle = handle(&c, &label, globals)?;
            c.with_state(|s| s.model_use = Some(label));
            Ok(handle)
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "get",
        lua.create_function(move |_, label: Value| {
            let label = label_arg("models.get", &label)?;
            handle(&c, &label, globals)
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "infer",
        lazy_function(lua, move |lua| {
            infer_function(lua, c.clone(), None, "models.infer")
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "loop",
        lazy_function(lua, move |lua| {
            loop_function(lua, c.clone(), None, "models.loop", globals)
        })?,
    )?;
    lua.globals().set("models", table)
}

/// Installs one frozen handle per `models:` label, named by the label (their loops'
/// `task` calls start chains with `globals`).
pub fn install_labels(lua: &Lua, ctx: &Arc<SectionCtx>, globals: Globals) -> mlua::Result<()> {
    let table = lua.globals();
    for label in &ctx.run.prepared.labels {
        let handle = ModelHandle {
            ctx: ctx.clone(),
            label: label.label.clone(),
            model: label.model.name.clone(),
            globals,
        };
        table.set(label.label.as_str(), handle)?;
    }
    Ok(())
}

/// The prompt line of the Lua call being made, when the run is traced (read while
/// the calling code is still on the stack, before the call suspends).
fn traced_line(lua: &Lua, ctx: &SectionCtx) -> Option<u32> {
    ctx.run.trace.as_ref().and_then(|_| caller_line(lua))
}
