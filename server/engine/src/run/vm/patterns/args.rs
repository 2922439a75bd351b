//! Argument checks with the messages of Lua's auxiliary library (`luaL_argerror`,
//! `luaL_checklstring`, `luaL_optinteger`).

use mlua::{Lua, LuaString, Value};

use super::matcher::{fail, LibError};

/// The arguments of one call of a string function, and its name for messages.
pub struct Args<'a> {
    lua: &'a Lua,
    values: Vec<Value>,
    name: &'static str,
}

/// Lua's name of a value's type for messages (`luaL_typename`).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::LightUserData(_) => "userdata",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

impl<'a> Args<'a> {
    /// The arguments `values` of the function `string.<name>`.
    pub fn new(lua: &'a Lua, values: Vec<Value>, name: &'static str) -> Self {
        Args { lua, values, name }
    }

    /// Argument `i` (1-based), `None` when absent.
    pub fn get(&self, i: usize) -> Option<&Value> {
        self.values.get(i.wrapping_sub(1))
    }

    /// `luaL_argerror`: names the function as the caller called it.
    pub fn error(&self, i: usize, extra: &str) -> mlua::Error {
        let names = self
            .lua
            .inspect_stack(0, |d| {
                let names = d.names();
                (names.name.map(|n| n.into_owned()), names.name_what)
            })
            .unwrap_or((None, None));
        let mut i = i;
        if names.1 == Some("method") {
            i -= 1;
            if i == 0 {
                let name = names.0.unwrap_or_else(|| "?".to_owned());
                return fail(&format!("calling '{name}' on bad self ({extra})"));
            }
        }
        let name = names.0.unwrap_or_else(|| format!("string.{}", self.name));
        fail(&format!("bad argument #{i} to '{name}' ({extra})"))
    }

    /// `luaL_typeerror`.
    pub fn type_error(&self, i: usize, expected: &str) -> mlua::Error {
        let got = match self.get(i) {
            None => "no value".to_owned(),
            Some(Value::LightUserData(_)) => "light userdata".to_owned(),
            Some(Value::Table(t)) => t
                .metatable()
                .and_then(|m| m.raw_get::<Option<String>>("__name").ok().flatten())
                .unwrap_or_else(|| "table".to_owned()),
            Some(v) => type_name(v).to_owned(),
        };
        self.error(i, &format!("{expected} expected, got {got}"))
    }

    /// `luaL_checklstring`: a string, or a number as text.
    pub fn string(&self, i: usize) -> mlua::Result<LuaString> {
        match self.get(i) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v @ (Value::Integer(_) | Value::Number(_))) => self
                .lua
                .coerce_string(v.clone())?
                .ok_or_else(|| self.type_error(i, "string")),
            _ => Err(self.type_error(i, "string")),
        }
    }

    /// `luaL_optinteger`: `default` when absent or nil.
    pub fn opt_integer(&self, i: usize, default: i64) -> mlua::Result<i64> {
        let value = match self.get(i) {
            None | Some(Value::Nil) => return Ok(default),
            Some(Value::Integer(n)) => return Ok(*n),
            Some(v) => v.clone(),
        };
        if let Some(n) = self.lua.coerce_integer(value.clone())? {
            return Ok(n);
        }
        if matches!(value, Value::Number(_) | Value::String(_))
            && self.lua.coerce_number(value)?.is_some()
        {
            return Err(self.error(i, "number has no integer representation"));
        }
        Err(self.type_error(i, "number"))
    }

    /// Whether argument `i` is neither absent, nil nor false.
    pub fn truthy(&self, i: usize) -> bool {
        !matches!(
            self.get(i),
            None | Some(Value::Nil) | Some(Value::Boolean(false))
        )
    }
}

/// `posrelatI`: a 1-based start position (negative from the end) as a 0-based
/// offset, possibly past the end.
pub fn start_offset(pos: i64, len: usize) -> usize {
    if pos > 0 {
        usize::try_from(pos - 1).unwrap_or(usize::MAX)
    } else if pos == 0 {
        0
    } else {
        let back = pos.unsigned_abs();
        match usize::try_from(back) {
            Ok(back) if back <= len => len - back,
            _ => 0,
        }
    }
}

/// Turns a [`LibError`] into the message Lua code sees, prefixed with the
/// position of the calling Lua code (`luaL_where(L, 1)`); other errors (limits,
/// a replacement function's own error) pass through as they are.
pub fn localize(lua: &Lua, error: mlua::Error) -> mlua::Error {
    let Some(LibError(message)) = error.downcast_ref::<LibError>().cloned() else {
        return error;
    };
    let place = lua
        .inspect_stack(1, |d| {
            let line = d.current_line().filter(|&l| l > 0)?;
            let src = d.source().short_src?.into_owned();
            Some(format!("{src}:{line}: "))
        })
        .flatten()
        .unwrap_or_default();
    mlua::Error::RuntimeError(format!("{place}{message}"))
}
