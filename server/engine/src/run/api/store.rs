//! `store`: the run's filesystem from Lua (§5). Writes inside fanout arms are
//! checked for the write-write race.

use std::sync::Arc;

use mlua::{Lua, Value};

use crate::run::context::SectionCtx;
use crate::run::json::type_name;
use crate::run::vm::usage_error;

/// The message for an argument of the wrong type (the spec leaves the text open).
fn bad_argument(function: &str, what: &str, value: &Value) -> mlua::Error {
    usage_error(format!(
        "store.{function} expects {what}, got {}",
        type_name(value)
    ))
}

fn string_arg(function: &str, what: &str, value: &Value) -> mlua::Result<String> {
    match value {
        Value::String(s) => Ok(s.to_string_lossy()),
        other => Err(bad_argument(function, what, other)),
    }
}

fn line_arg(function: &str, value: &Value) -> mlua::Result<Option<i64>> {
    match value {
        Value::Nil => Ok(None),
        Value::Integer(i) => Ok(Some(*i)),
        Value::Number(n) if n.fract() == 0.0 => Ok(Some(*n as i64)),
        other => Err(bad_argument(function, "an integer line number", other)),
    }
}

/// Installs `store`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let table = lua.create_table()?;
    let c = ctx.clone();
    table.set(
        "read",
        lua.create_function(move |_, (path, first, last): (Value, Value, Value)| {
            let path = string_arg("read", "a path string", &path)?;
            let (first, last) = (line_arg("read", &first)?, line_arg("read", &last)?);
            c.run
                .store
                .read(&path, first, last)
                .map_err(|e| c.control.raise(e))
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "write",
        lua.create_function(move |_, (path, text): (Value, Value)| {
            let path = string_arg("write", "a path string", &path)?;
            let text = string_arg("write", "a text string", &text)?;
            crate::store::check_path(&path).map_err(|e| c.control.raise(e))?;
            for (tracker, arm) in &c.chain.races {
                tracker
                    .record(&path, *arm)
                    .map_err(|e| c.control.raise(e))?;
            }
            c.run
                .store
                .write(&path, &text)
                .map_err(|e| c.control.raise(e))
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "append",
        lua.create_function(move |_, (path, text): (Value, Value)| {
            let path = string_arg("append", "a path string", &path)?;
            let text = string_arg("append", "a text string", &text)?;
            c.run
                .store
                .append(&path, &text)
                .map_err(|e| c.control.raise(e))
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "exists",
        lua.create_function(move |_, path: Value| {
            let path = string_arg("exists", "a path string", &path)?;
            c.run.store.exists(&path).map_err(|e| c.control.raise(e))
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "delete",
        lua.create_function(move |_, path: Value| {
            let path = string_arg("delete", "a path string", &path)?;
            c.run.store.delete(&path).map_err(|e| c.control.raise(e))
        })?,
    )?;
    let c = ctx.clone();
    table.set(
        "list",
        lua.create_function(move |_, pattern: Value| {
            let pattern = match &pattern {
                Value::Nil => None,
                other => Some(string_arg("list", "a pattern string", other)?),
            };
            let cancel = c.control.cancel();
            c.run
                .store
                .list_until(pattern.as_deref(), cancel)
                .map_err(|e| c.control.raise(e))
        })?,
    )?;
    lua.globals().set("store", table)
}
