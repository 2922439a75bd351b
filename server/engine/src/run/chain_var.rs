//! A chain's `var` data inside a section's VM: loaded from the chain when the VM
//! starts, read as JSON when a chain or arm starts from it (each works on a copy),
//! and written back to the chain when the section ends. The `var` global over it
//! is `run::api::var`.

use mlua::{Lua, Table, Value};

use crate::messages;
use crate::run::context::{Chain, SectionCtx};
use crate::run::json;

/// Where the VM keeps the data table.
const DATA_KEY: &str = "promptforge.var";

/// Loads the chain's data into the VM and gives its table.
pub fn load(lua: &Lua, chain: &Chain) -> mlua::Result<Table> {
    let data = match json::to_lua(lua, &chain.var())? {
        Value::Table(table) => table,
        _ => lua.create_table()?,
    };
    lua.set_named_registry_value(DATA_KEY, &data)?;
    Ok(data)
}

/// The VM's `var` data table (the debugger shows and sets it).
pub fn data(lua: &Lua) -> Option<Table> {
    lua.named_registry_value::<Option<Table>>(DATA_KEY)
        .ok()
        .flatten()
}

/// The VM's current `var` data as JSON.
pub fn current(lua: &Lua) -> Result<serde_json::Value, String> {
    let data: Value = lua
        .named_registry_value(DATA_KEY)
        .map_err(|e| e.to_string())?;
    json::to_json(&data).map_err(messages::var_cannot_hold)
}

/// Writes the VM's `var` back to its chain at the end of a section.
pub fn sync_back(lua: &Lua, ctx: &SectionCtx) -> Result<(), String> {
    let value = current(lua)?;
    ctx.chain.set_var(value);
    Ok(())
}
