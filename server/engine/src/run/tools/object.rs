//! Tool objects (Tools chapter): the frozen value an alias global holds, which
//! `tools.call`, `tools.add` and `tools.calls` accept in place of the alias.

use mlua::{MetaMethod, UserData, UserDataMethods, Value};

use crate::messages;
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
