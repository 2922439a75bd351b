//! The Lua globals of §3.1, one module per global: the top layer of `run` below
//! the entry. [`LuaGlobals`] is what the walk installs in every section VM.

pub mod args;
pub mod debug_view;
pub mod input;
pub mod log;
pub mod messages;
pub mod models;
pub mod store;
pub mod sys;
pub mod tools;
pub mod untrusted;
pub mod var;

use std::sync::Arc;

use mlua::Lua;

use crate::run::context::{Globals, SectionCtx, SectionGlobals};
use crate::run::control;

/// The Lua API as the walk installs it in every section VM (the chains `call`,
/// `fanout` and the `task` tool start get it too).
#[derive(Debug, Default, Clone, Copy)]
pub struct LuaGlobals;

/// The globals of every section VM of a run.
pub const GLOBALS: Globals = &LuaGlobals;

impl SectionGlobals for LuaGlobals {
    fn install_base(&self, lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
        install_base(lua, ctx)
    }

    fn install_handles(&self, lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
        install_handles(lua, ctx)
    }
}

/// Installs the globals a VM has before the shared library replays.
pub fn install_base(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    debug_view::attach(ctx);
    args::install(lua, ctx)?;
    var::install(lua, ctx)?;
    sys::install(lua, ctx)?;
    log::install(lua, ctx)?;
    untrusted::install(lua, ctx)?;
    store::install(lua, ctx)?;
    input::install(lua, ctx)?;
    control::install(lua, ctx, GLOBALS)?;
    models::install(lua, ctx, GLOBALS)?;
    messages::install(lua)?;
    tools::install(lua, ctx)?;
    Ok(())
}

/// Installs the alias and model globals, after the shared library replays (a
/// declared alias or label wins over a shared global of the same name).
pub fn install_handles(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    tools::install_aliases(lua, ctx)?;
    models::install_labels(lua, ctx, GLOBALS)?;
    Ok(())
}
