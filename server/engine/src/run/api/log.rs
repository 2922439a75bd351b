//! `log(...)` and `print(...)`: one line to the run log, the arguments as `tostring`
//! writes them, tab-separated.

use std::sync::Arc;

use mlua::{Lua, MultiValue};

use crate::run::context::SectionCtx;
use crate::run::vm::describe;

/// Installs `log` and `print`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    for name in ["log", "print"] {
        let ctx = ctx.clone();
        let function = lua.create_function(move |lua, values: MultiValue| {
            let parts: Vec<String> = values.into_iter().map(|v| describe(lua, v)).collect();
            ctx.run.log_line(parts.join("\t"));
            Ok(())
        })?;
        lua.globals().set(name, function)?;
    }
    Ok(())
}
