//! `tools`: the one Lua table of every tool operation (Tools chapter), present in
//! every section VM before the shared library replays, and the alias globals: one
//! frozen Tool object per bound tool slot, installed after it.

use std::sync::Arc;

use mlua::{Lua, MultiValue, Table, Value};

use crate::messages;
use crate::run::context::SectionCtx;
use crate::run::json::type_name;
use crate::run::location::resolve;
use crate::run::tools::calls::{has_counts, CallsView};
use crate::run::tools::object::ToolObject;
use crate::run::tools::scope::{bound_tool, check_alias, record_add};
use crate::run::tools::{dispatch, local};
use crate::run::vm::errors::caller_line;
use crate::run::vm::{lazy_function, reraising, usage_error};

/// Installs one Tool object per bound slot, named by its alias.
pub fn install_aliases(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let globals = lua.globals();
    for slot in &ctx.run.prepared.slots {
        let Some(tool) = &slot.tool else { continue };
        globals.set(
            slot.alias.as_str(),
            ToolObject {
                alias: slot.alias.clone(),
                description: tool.description().to_owned(),
                // The chapter: `.wire_name` is the path's last segment, whatever the
                // tool's own wire name says.
                wire_name: tool.id().short_name().to_owned(),
            },
        )?;
    }
    Ok(())
}

/// The nth argument (0-based), nil when absent.
fn arg(args: &MultiValue, n: usize) -> Value {
    args.get(n).cloned().unwrap_or(Value::Nil)
}

/// `tools.always(alias[, description])`: records a bound alias once in the
/// prompt-wide list; a description sets the run-wide override.
fn always(ctx: &SectionCtx, args: MultiValue) -> mlua::Result<()> {
    let alias = match arg(&args, 0) {
        Value::String(s) => s.to_string_lossy(),
        other => {
            return Err(usage_error(messages::always_alias_not_string(type_name(
                &other,
            ))))
        }
    };
    check_alias(&alias).map_err(usage_error)?;
    let extra = arg(&args, 2);
    if !extra.is_nil() {
        return Err(usage_error(messages::always_extra_argument(type_name(
            &extra,
        ))));
    }
    let description = match arg(&args, 1) {
        Value::Nil => None,
        Value::String(s) => Some(s.to_string_lossy()),
        other => {
            return Err(usage_error(messages::always_override_not_string(
                type_name(&other),
            )))
        }
    };
    if bound_tool(ctx, &alias).is_none() {
        return Err(usage_error(messages::always_not_bound(&alias)));
    }
    ctx.run.tools.record_always(&alias, description);
    Ok(())
}

/// One `tools.add` entry: an alias string or a Tool object.
fn add_entry(value: &Value) -> mlua::Result<String> {
    match value {
        Value::String(s) => Ok(s.to_string_lossy()),
        Value::UserData(ud) => ud
            .borrow::<ToolObject>()
            .map(|t| t.alias.clone())
            .map_err(|_| usage_error(messages::add_bad_entry("userdata"))),
        other => Err(usage_error(messages::add_bad_entry(type_name(other)))),
    }
}

/// `tools.add(...)`: all-or-nothing. The entries' types and the alias rule are
/// checked first, then the override and the extra argument, then that every alias
/// is a bound tool slot; only then is anything recorded.
fn add(ctx: &SectionCtx, args: MultiValue) -> mlua::Result<()> {
    let (first, description, extra) = (arg(&args, 0), arg(&args, 1), arg(&args, 2));
    if first.is_nil() && description.is_nil() && extra.is_nil() {
        return Ok(());
    }
    let array_form = matches!(first, Value::Table(_));
    let aliases: Vec<String> = match &first {
        Value::Table(table) => {
            let mut entries = 0usize;
            for pair in table.pairs::<Value, Value>() {
                pair?;
                entries += 1;
            }
            if entries != table.raw_len() {
                // A table that is not an array is neither form.
                return Err(usage_error(messages::add_bad_entry("table")));
            }
            let mut aliases = Vec::new();
            for i in 1..=table.raw_len() {
                aliases.push(add_entry(&table.raw_get::<Value>(i)?)?);
            }
            aliases
        }
        other => vec![add_entry(other)?],
    };
    for alias in &aliases {
        check_alias(alias).map_err(usage_error)?;
    }
    if !extra.is_nil() {
        return Err(usage_error(messages::add_extra_argument(type_name(&extra))));
    }
    let description = match description {
        Value::Nil => None,
        _ if array_form => return Err(usage_error(messages::ADD_ARRAY_NO_OVERRIDE)),
        Value::String(s) => Some(s.to_string_lossy()),
        other => {
            return Err(usage_error(messages::add_override_not_string(type_name(
                &other,
            ))))
        }
    };
    if let Some(unbound) = aliases.iter().find(|a| bound_tool(ctx, a).is_none()) {
        return Err(usage_error(messages::add_not_bound(unbound)));
    }
    record_add(ctx, aliases, description);
    Ok(())
}

/// `tools.allow_tasks(targets)`: the array replaces the section's list; each target
/// must be visible from the section. An empty array removes the list.
fn allow_tasks(ctx: &SectionCtx, targets: Value) -> mlua::Result<()> {
    let Value::Table(table) = &targets else {
        return Err(usage_error(messages::allow_tasks_not_array(type_name(
            &targets,
        ))));
    };
    let mut entries = 0usize;
    for pair in table.pairs::<Value, Value>() {
        pair?;
        entries += 1;
    }
    if entries != table.raw_len() {
        return Err(usage_error(messages::allow_tasks_not_array(
            "a table that is not an array",
        )));
    }
    let mut ordered = Vec::new();
    for i in 1..=table.raw_len() {
        match table.raw_get::<Value>(i)? {
            Value::String(target) => ordered.push(target.to_string_lossy()),
            other => {
                return Err(usage_error(messages::allow_tasks_not_array(type_name(
                    &other,
                ))))
            }
        }
    }
    for target in &ordered {
        resolve(&ctx.run.prepared.sections, &ctx.path, target).map_err(usage_error)?;
    }
    ctx.with_state(|s| s.tools.allow_tasks = (!ordered.is_empty()).then_some(ordered));
    Ok(())
}

/// Installs `tools`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let table = lua.create_table()?;
    let c = ctx.clone();
    table.set(
        "always",
        lua.create_function(move |_, args: MultiValue| always(&c, args))?,
    )?;
    let c = ctx.clone();
    table.set(
        "add",
        lua.create_function(move |_, args: MultiValue| add(&c, args))?,
    )?;
    let c = ctx.clone();
    table.set(
        "add_local",
        lua.create_function(move |lua, args: (Value, Value, Value, Value)| {
            local::register(lua, &c, args)
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "allow_tasks",
        lua.create_function(move |_, targets: Value| allow_tasks(&c, targets))?,
    )?;
    let outer = ctx.clone();
    table.set(
        "call",
        lazy_function(lua, move |lua| {
            let c = outer.clone();
            let inner = lua.create_async_function(move |lua, (target, args): (Value, Value)| {
                let ctx = c.clone();
                let line = ctx.run.trace.as_ref().and_then(|_| caller_line(&lua));
                async move { dispatch::script_call(&lua, &ctx, target, args, line).await }
            })?;
            reraising(lua, inner)
        })?,
    )?;
    let meta = lua.create_table()?;
    let c = ctx.clone();
    meta.set(
        "__index",
        lua.create_function(move |_, (_, key): (Table, Value)| {
            let is_calls = matches!(&key, Value::String(s) if s.as_bytes() == b"calls");
            if is_calls && has_counts(&c) {
                return Ok(Some(CallsView(c.clone())));
            }
            Ok(None)
        })?,
    )?;
    meta.set(
        "__newindex",
        lua.create_function(|_, (table, key, value): (Table, Value, Value)| {
            if matches!(&key, Value::String(s) if s.as_bytes() == b"calls") {
                return Err(usage_error(messages::TOOLS_CALLS_READ_ONLY));
            }
            table.raw_set(key, value)
        })?,
    )?;
    table.set_metatable(Some(meta))?;
    lua.globals().set("tools", table)
}
