//! `untrusted(s)`: `s` in the untrusted envelope with the run's nonce (§6).

use std::sync::Arc;

use mlua::{Lua, Value};

use crate::run::context::SectionCtx;
use crate::run::json::type_name;
use crate::run::vm::usage_error;

/// The message for a non-string argument (the spec leaves the text open).
fn not_a_string(type_name: &str) -> String {
    format!("untrusted expects a string, got {type_name}")
}

/// Installs `untrusted`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let ctx = ctx.clone();
    let function = lua.create_function(move |_, value: Value| match &value {
        Value::String(s) => Ok(ctx.run.identity.envelope(&s.to_string_lossy())),
        other => Err(usage_error(not_a_string(type_name(other)))),
    })?;
    lua.globals().set("untrusted", function)
}
