//! `var`: the walk's shared table of JSON data. A chain or arm works on a copy;
//! assigning a value JSON cannot hold (a function, userdata) fails.

use std::sync::{Arc, OnceLock};

use mlua::{Lua, Table, Value};

use crate::messages;
use crate::run::context::SectionCtx;
use crate::run::json;
use crate::run::vm::{load_cached, usage_error};

const DATA_KEY: &str = "promptforge.var";

const PROXY: &str = r#"
local data, check = ...
return setmetatable({}, {
  __index = data,
  __newindex = function(_, k, v) check(v); data[k] = v end,
  __len = function() return #data end,
  __pairs = function() return next, data, nil end,
  __metatable = false,
})
"#;

/// Installs `var` from the chain's data.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let data = match json::to_lua(lua, &ctx.chain.var())? {
        Value::Table(table) => table,
        _ => lua.create_table()?,
    };
    lua.set_named_registry_value(DATA_KEY, &data)?;
    let check = lua.create_function(|_, value: Value| {
        json::to_json(&value)
            .map(|_| ())
            .map_err(|type_name| usage_error(messages::var_cannot_hold(type_name)))
    })?;
    static PROXY_CODE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let proxy: Table = load_cached(lua, &PROXY_CODE, "=var", PROXY).call((data, check))?;
    lua.globals().set("var", proxy)
}

/// The VM's current `var` data as JSON.
pub fn current(lua: &Lua) -> Result<serde_json::Value, String> {
    let data: Value = lua
        .named_registry_value(DATA_KEY)
        .map_err(|e| e.to_string())?;
    json::to_json(&data).map_err(messages::var_cannot_hold)
}

/// Writes the VM's `var` back to its chain at the end of a section.
pub fn sync_back(lua: &Lua, ctx: &SectionCtx) -> Result<(), String> {
    let value = current(lua)?;
    ctx.chain.set_var(value);
    Ok(())
}
