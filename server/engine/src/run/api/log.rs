//! `log(...)` and `print(...)`: one line to the run log, the arguments as `tostring`
//! writes them, tab-separated.

use std::sync::Arc;

use mlua::{Lua, MultiValue};

use crate::run::context::SectionCtx;
use crate::run::vm::try_describe;

/// Installs `log` and `print`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    for name in ["log", "print"] {
        let ctx = ctx.clone();
        let function = lua.create_function(move |lua, values: MultiValue| {
            let parts = values
                .into_iter()
                .map(|v| try_describe(lua, v))
                .collect::<mlua::Result<Vec<String>>>()?;
            ctx.run
                .log_line(ctx.trace_span, parts.join("\t"))
                .map_err(|error| ctx.control.raise(error))
        })?;
        lua.globals().set(name, function)?;
    }
    Ok(())
}
