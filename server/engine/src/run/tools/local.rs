//! Local tools (Tools chapter, "Local tools"): `tools.add_local` registration, the
//! parameter table's JSON Schema, and running a handler inside the calling chain.

use std::sync::atomic::Ordering;

use mlua::{Function, Lua, MultiValue, Table, Value};
use promptforge_syntax::api_names::PARAM_TYPES;
use serde_json::{json, Map, Value as Json};

use crate::messages;
use crate::run::context::tools::LocalSpec;
use crate::run::context::SectionCtx;
use crate::run::json::{self, type_name};
use crate::run::tools::scope::{bound_tool, check_alias};
use crate::run::vm::{protected_call, scalar_result, usage_error, waiting_frames, VmControl};

/// Where a VM keeps its local tools' handlers (alias -> function).
const HANDLERS_KEY: &str = "promptforge.local_tools";

/// One parameter's schema from its spec: a type string, or a `{type, description}`
/// array whose description is optional.
fn param_schema(name: &str, spec: &Value) -> Result<Json, String> {
    let bad = || messages::add_local_bad_param(name);
    let (type_text, description) = match spec {
        Value::String(s) => (s.to_string_lossy(), None),
        Value::Table(table) => {
            let mut entries = 0usize;
            for pair in table.pairs::<Value, Value>() {
                pair.map_err(|_| bad())?;
                entries += 1;
            }
            let first: Value = table.raw_get(1).map_err(|_| bad())?;
            let second: Value = table.raw_get(2).map_err(|_| bad())?;
            let Value::String(type_text) = first else {
                return Err(bad());
            };
            let description = match second {
                Value::Nil if entries == 1 => None,
                Value::String(d) if entries == 2 => Some(d.to_string_lossy()),
                _ => return Err(bad()),
            };
            (type_text.to_string_lossy(), description)
        }
        _ => return Err(bad()),
    };
    if !PARAM_TYPES.contains(&type_text.as_str()) {
        return Err(messages::add_local_unsupported_type(name, &type_text));
    }
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Json::String(type_text));
    if let Some(description) = description {
        schema.insert("description".to_owned(), Json::String(description));
    }
    Ok(Json::Object(schema))
}

/// The JSON Schema object of a parameter table: every parameter required, names in
/// `properties` and `required` sorted bytewise; `{}` declares no arguments.
pub fn build_schema(params: &Table) -> Result<Json, String> {
    let mut entries: Vec<(String, Value)> = Vec::new();
    for pair in params.pairs::<Value, Value>() {
        let (key, spec) = pair.map_err(|e| e.to_string())?;
        let name = match key {
            Value::String(s) => s.to_string_lossy(),
            other => return Err(messages::add_local_param_name_not_string(type_name(&other))),
        };
        entries.push((name, spec));
    }
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, spec) in &entries {
        properties.insert(name.clone(), param_schema(name, spec)?);
        required.push(Json::String(name.clone()));
    }
    Ok(json!({
        "type": "object",
        "properties": Json::Object(properties),
        "required": Json::Array(required),
    }))
}

/// `tools.add_local(alias, description, params, handler)`: checks everything, then
/// registers the tool in the section (its handler in the VM's registry).
pub fn register(
    lua: &Lua,
    ctx: &SectionCtx,
    (alias, description, params, handler): (Value, Value, Value, Value),
) -> mlua::Result<()> {
    let alias = match &alias {
        Value::String(s) => s.to_string_lossy(),
        other => {
            return Err(usage_error(messages::add_local_alias_not_string(
                type_name(other),
            )))
        }
    };
    check_alias(&alias).map_err(usage_error)?;
    if bound_tool(ctx, &alias).is_some() {
        return Err(usage_error(messages::add_local_duplicates_slot(&alias)));
    }
    if ctx.with_state(|s| s.tools.local(&alias).is_some()) {
        return Err(usage_error(messages::add_local_already_registered(&alias)));
    }
    let description = match &description {
        Value::String(s) => s.to_string_lossy(),
        other => {
            return Err(usage_error(messages::add_local_description_not_string(
                type_name(other),
            )))
        }
    };
    let Value::Table(params) = &params else {
        return Err(usage_error(messages::add_local_params_not_table(
            type_name(&params),
        )));
    };
    let Value::Function(handler) = handler else {
        return Err(usage_error(messages::add_local_handler_not_function(
            type_name(&handler),
        )));
    };
    let schema = build_schema(params).map_err(usage_error)?;
    let handlers = handlers_table(lua)?;
    handlers.raw_set(alias.as_str(), handler)?;
    ctx.with_state(|s| {
        s.tools.locals.push(LocalSpec {
            alias,
            description,
            schema,
        })
    });
    Ok(())
}

fn handlers_table(lua: &Lua) -> mlua::Result<Table> {
    if let Some(table) = lua.named_registry_value::<Option<Table>>(HANDLERS_KEY)? {
        return Ok(table);
    }
    let table = lua.create_table()?;
    lua.set_named_registry_value(HANDLERS_KEY, &table)?;
    Ok(table)
}

/// Counts the handlers running in a VM while it lives (`jump` is refused then);
/// with a debugger attached, keeps the frames of the thread that waits for it.
struct Running<'a>(&'a VmControl);

impl<'a> Running<'a> {
    fn enter(lua: &Lua, control: &'a VmControl) -> Self {
        control.handlers.fetch_add(1, Ordering::SeqCst);
        if let Some(debug) = &control.debug {
            let frames = waiting_frames(lua);
            if let Ok(mut waits) = debug.waiting_frames.lock() {
                waits.push(frames);
            }
        }
        Running(control)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.handlers.fetch_sub(1, Ordering::SeqCst);
        if let Some(debug) = &self.0.debug {
            if let Ok(mut waits) = debug.waiting_frames.lock() {
                waits.pop();
            }
        }
    }
}

/// Runs the handler of the local tool `alias` on a fresh table built from the call's
/// JSON arguments. Ok(Ok(text)): the handler's result by the scalar return rule (nil
/// is ""); Ok(Err(value)): the handler raised `value`, to be raised again at the
/// call; Err: a limit, a cancellation or a refused return value.
pub async fn run_handler(
    lua: &Lua,
    ctx: &SectionCtx,
    alias: &str,
    arguments: &Json,
) -> mlua::Result<Result<String, Value>> {
    let handler: Function = handlers_table(lua)?.raw_get(alias)?;
    let table = json::to_lua(lua, arguments)?;
    let values: MultiValue = {
        let _running = Running::enter(lua, &ctx.control);
        protected_call(lua, handler, table).await?
    };
    let mut values = values.into_iter();
    let ok = matches!(values.next(), Some(Value::Boolean(true)));
    let first = values.next().unwrap_or(Value::Nil);
    if !ok {
        return Ok(Err(first));
    }
    scalar_result(lua, first)
        .map(|text| Ok(text.unwrap_or_default()))
        .map_err(usage_error)
}
