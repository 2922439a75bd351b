//! Alias globals: one frozen Tool object per bound tool slot (Tools chapter, "Alias
//! globals"). The `tools.*` functions are the tools API's.

use std::sync::Arc;

use mlua::{Lua, MetaMethod, UserData, UserDataMethods, Value};

use crate::messages;
use crate::run::context::SectionCtx;
use crate::run::vm::usage_error;

/// A Tool object: `.name` (the alias), `.description` (the catalog's), `.parameters`
/// (always an empty table), `.wire_name` (the path's last segment), `.untrusted`
/// (always false). Frozen.
#[derive(Debug, Clone)]
pub struct ToolObject {
    /// The alias.
    pub alias: String,
    /// The catalog description.
    pub description: String,
    /// The tool path's last segment.
    pub wire_name: String,
}

impl UserData for ToolObject {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::Index, |lua, this, key: String| {
            Ok(match key.as_str() {
                "name" => Value::String(lua.create_string(&this.alias)?),
                "description" => Value::String(lua.create_string(&this.description)?),
                "wire_name" => Value::String(lua.create_string(&this.wire_name)?),
                "parameters" => Value::Table(lua.create_table()?),
                "untrusted" => Value::Boolean(false),
                _ => Value::Nil,
            })
        });
        methods.add_meta_method(MetaMethod::NewIndex, |_, _, (key, _): (String, Value)| {
            Err::<(), _>(usage_error(messages::tool_object_frozen(&key)))
        });
    }
}

/// Installs one Tool object per bound slot, named by its alias.
pub fn install_aliases(lua: &Lua, ctx: &Arc<SectionCtx>) -> mlua::Result<()> {
    let globals = lua.globals();
    for slot in &ctx.run.prepared.slots {
        let Some(tool) = &slot.tool else { continue };
        globals.set(
            slot.alias.as_str(),
            ToolObject {
                alias: slot.alias.clone(),
                description: tool.description().to_owned(),
                wire_name: tool.wire_name().to_owned(),
            },
        )?;
    }
    Ok(())
}
