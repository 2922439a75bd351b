//! `sys`: read-only facts about the run and the section.

use std::sync::Arc;

use mlua::{Lua, MetaMethod, UserData, UserDataMethods, Value};

use crate::messages;
use crate::run::context::SectionCtx;
use crate::run::conversation;
use crate::run::vm::usage_error;

struct Sys(Arc<SectionCtx>);

impl UserData for Sys {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::Index, |lua, this, key: String| {
            let ctx = &this.0;
            let run = &ctx.run;
            Ok(match key.as_str() {
                "prompt" => Value::String(lua.create_string(&run.prepared.name)?),
                "section" => Value::String(lua.create_string(&ctx.heading)?),
                "run" => Value::String(lua.create_string(&run.identity.run_id)?),
                "seed" => match run.seed {
                    Some(seed) => Value::Integer(seed as i64),
                    None => Value::Nil,
                },
                "index" => match &ctx.chain.arm {
                    Some((index, _)) => Value::Integer(*index as i64),
                    None => return Err(usage_error(messages::SYS_INDEX_OUTSIDE_ARM)),
                },
                "model" => {
                    if !ctx.with_state(|s| s.first_call) {
                        return Err(usage_error(messages::SYS_MODEL_TOO_EARLY));
                    }
                    match conversation::section_label(ctx) {
                        Ok(label) => Value::String(lua.create_string(&label)?),
                        Err(_) => Value::Nil,
                    }
                }
                _ => Value::Nil,
            })
        });
        methods.add_meta_method(MetaMethod::NewIndex, |_, _, (key, _): (String, Value)| {
            Err::<(), _>(usage_error(messages::sys_read_only(&key)))
        });
    }
}

/// Installs `sys`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    lua.globals().set("sys", Sys(ctx.clone()))
}
