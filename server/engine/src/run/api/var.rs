//! `var`: the walk's shared table of JSON data. A chain or arm works on a copy;
//! assigning a value JSON cannot hold (a function, userdata) fails. The data
//! itself is `run::chain_var`.

use std::sync::{Arc, OnceLock};

use mlua::{Lua, Table, Value};

use crate::messages;
use crate::run::chain_var;
use crate::run::context::SectionCtx;
use crate::run::json;
use crate::run::vm::{load_cached, usage_error};

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
    let data = chain_var::load(lua, &ctx.chain)?;
    let check = lua.create_function(|_, value: Value| {
        json::to_json(&value)
            .map(|_| ())
            .map_err(|type_name| usage_error(messages::var_cannot_hold(type_name)))
    })?;
    static PROXY_CODE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let proxy: Table = load_cached(lua, &PROXY_CODE, "=var", PROXY).call((data, check))?;
    lua.globals().set("var", proxy)
}
