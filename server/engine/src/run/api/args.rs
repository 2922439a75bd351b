//! `args` (the run's argument string, or the chain's input) and `item` (a fanout
//! arm's member).

use std::sync::Arc;

use mlua::Lua;

use crate::run::context::SectionCtx;
use crate::run::json;

/// Sets `args`, and `item` in a fanout arm.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let globals = lua.globals();
    globals.set("args", ctx.chain.args.as_str())?;
    if let Some((_, item)) = &ctx.chain.arm {
        globals.set("item", json::to_lua(lua, item)?)?;
    }
    Ok(())
}
