//! The Lua globals of §3.1, one module per global.

pub mod args;
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

use crate::run::context::SectionCtx;
use crate::run::control;

/// Installs the globals a VM has before the shared library replays.
pub fn install_base(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    args::install(lua, ctx)?;
    var::install(lua, ctx)?;
    sys::install(lua, ctx)?;
    log::install(lua, ctx)?;
    untrusted::install(lua, ctx)?;
    store::install(lua, ctx)?;
    input::install(lua, ctx)?;
    control::install(lua, ctx)?;
    models::install(lua, ctx)?;
    messages::install(lua)?;
    tools::install(lua, ctx)?;
    Ok(())
}

/// Installs the alias and model globals, after the shared library replays (a
/// declared alias or label wins over a shared global of the same name).
pub fn install_handles(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    tools::install_aliases(lua, ctx)?;
    models::install_labels(lua, ctx)?;
    Ok(())
}
