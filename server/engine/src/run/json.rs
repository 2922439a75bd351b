//! Lua values <-> JSON data, for `var`, fanout members and structured values.

use mlua::{Lua, Table, Value};
use serde_json::{Map, Number, Value as Json};

/// Tables nested deeper than this are refused (it also stops a table that contains itself).
const MAX_DEPTH: usize = 128;

/// The Lua type name of a value, as messages print it.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// Converts a Lua value to JSON data; the error is the type name of the first value
/// JSON cannot hold (a function, userdata, thread, a non-finite number, ...).
pub fn to_json(value: &Value) -> Result<Json, &'static str> {
    convert(value, 0)
}

fn convert(value: &Value, depth: usize) -> Result<Json, &'static str> {
    if depth > MAX_DEPTH {
        return Err("table nested too deep");
    }
    Ok(match value {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => Json::Number(Number::from(*i)),
        Value::Number(n) => Json::Number(Number::from_f64(*n).ok_or("non-finite number")?),
        Value::String(s) => Json::String(s.to_string_lossy()),
        Value::Table(table) => table_to_json(table, depth)?,
        other => return Err(type_name(other)),
    })
}

fn table_to_json(table: &Table, depth: usize) -> Result<Json, &'static str> {
    let len = table.raw_len();
    let mut entries = Vec::new();
    for pair in table.pairs::<Value, Value>() {
        let (key, value) = pair.map_err(|_| "table")?;
        entries.push((key, value));
    }
    let is_array = len > 0
        && entries.len() == len
        && entries
            .iter()
            .all(|(k, _)| matches!(k, Value::Integer(i) if *i >= 1 && (*i as usize) <= len));
    if is_array {
        let mut items = vec![Json::Null; len];
        for (key, value) in &entries {
            if let Value::Integer(i) = key {
                if let Some(slot) = items.get_mut((*i as usize) - 1) {
                    *slot = convert(value, depth + 1)?;
                }
            }
        }
        return Ok(Json::Array(items));
    }
    let mut map = Map::new();
    for (key, value) in &entries {
        let key = match key {
            Value::String(s) => s.to_string_lossy(),
            Value::Integer(i) => i.to_string(),
            Value::Number(n) => n.to_string(),
            Value::Boolean(b) => b.to_string(),
            other => return Err(type_name(other)),
        };
        map.insert(key, convert(value, depth + 1)?);
    }
    Ok(Json::Object(map))
}

/// Converts JSON data to a Lua value (`null` becomes `nil`).
pub fn to_lua(lua: &Lua, json: &Json) -> mlua::Result<Value> {
    Ok(match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(lua.create_string(s)?),
        Json::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                table.raw_set(i + 1, to_lua(lua, item)?)?;
            }
            Value::Table(table)
        }
        Json::Object(map) => {
            let table = lua.create_table_with_capacity(0, map.len())?;
            for (key, value) in map {
                table.raw_set(key.as_str(), to_lua(lua, value)?)?;
            }
            Value::Table(table)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_json_data() {
        let lua = Lua::new();
        let value: Value = lua
            .load("return { name = 'x', list = {1, 2.5, 'three', true}, nested = { a = {} } }")
            .eval()
            .unwrap();
        let json = to_json(&value).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"name": "x", "list": [1, 2.5, "three", true], "nested": {"a": {}}})
        );
        let back = to_lua(&lua, &json).unwrap();
        assert_eq!(to_json(&back).unwrap(), json);
    }

    #[test]
    fn refuses_what_json_cannot_hold() {
        let lua = Lua::new();
        let f: Value = lua.load("return { f = function() end }").eval().unwrap();
        assert_eq!(to_json(&f), Err("function"));
        let cyclic: Value = lua.load("local t = {}; t.t = t; return t").eval().unwrap();
        assert!(to_json(&cyclic).is_err());
        let sparse: Value = lua.load("return { [1] = 'a', [3] = 'c' }").eval().unwrap();
        assert_eq!(
            to_json(&sparse).unwrap(),
            serde_json::json!({"1": "a", "3": "c"})
        );
    }
}
