//! How the debugger shows a Lua value (the debugger issue): strings quoted and
//! cut with their full length, tables previewed by their first entries (read
//! without metamethods), numbers as Lua writes them, and the engine's own values
//! as the Run scope's owner shows them.

use mlua::{AnyUserData, Lua, Table, Value};

use super::errors::error_message;
use crate::error::EngineError;
use crate::run::debugger::{RunValue, SectionView, Shown};

/// The longest string shown whole in a variable's value.
const SHOWN_STRING: usize = 256;

/// The longest string shown when the client asks for it whole (the console,
/// copying): longer ones are cut too, with their length.
const WHOLE_STRING: usize = 1 << 20;

/// Lua's quoting of a string, cut after [`SHOWN_STRING`] characters (after
/// [`WHOLE_STRING`] when `whole`), with its full length.
pub fn quoted(text: &str, whole: bool) -> String {
    let chars = text.chars().count();
    let limit = if whole { WHOLE_STRING } else { SHOWN_STRING };
    let shown: String = text.chars().take(limit).collect();
    let mut out = String::with_capacity(shown.len() + 2);
    out.push('"');
    for c in shown.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    if shown.len() < text.len() {
        out.push_str(&format!("… ({chars} characters)"));
    }
    out
}

/// A table's key as a variable name.
pub fn key_name(key: &Value) -> String {
    match key {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => format!("[{i}]"),
        Value::Number(n) => format!("[{n}]"),
        Value::Boolean(b) => format!("[{b}]"),
        other => format!("[{}]", other.type_name()),
    }
}

/// A table's first `cap` entries without metamethods (the array part in order,
/// then other keys by name; past `cap`, the keys met first) and how many it
/// has in all.
pub fn entries(table: &Table, cap: usize) -> (Vec<(Value, Value)>, usize) {
    let length = table.raw_len();
    let mut shown: Vec<(Value, Value)> = (1..=length.min(cap))
        .filter_map(|i| {
            let key = i64::try_from(i).ok()?;
            Some((Value::Integer(key), table.raw_get::<Value>(key).ok()?))
        })
        .collect();
    let mut others = Vec::new();
    let mut total = length;
    for pair in table.clone().pairs::<Value, Value>() {
        let Ok((key, value)) = pair else { break };
        if matches!(key, Value::Integer(i) if i >= 1 && (i as usize) <= length) {
            continue;
        }
        total += 1;
        if shown.len() + others.len() < cap {
            others.push((key_name(&key), key, value));
        }
    }
    others.sort_by(|a, b| a.0.cmp(&b.0));
    shown.extend(others.into_iter().map(|(_, k, v)| (k, v)));
    (shown, total)
}

/// A short preview of a table: `{1, 2, 3}`, `{a = 1, b = "x", …}`.
fn preview(table: &Table) -> String {
    let (all, total) = entries(table, 6);
    if all.is_empty() {
        return "{}".to_owned();
    }
    let array = table.raw_len();
    let parts: Vec<String> = all
        .iter()
        .take(5)
        .map(|(key, value)| {
            let shown = match value {
                Value::Table(_) => "{…}".to_owned(),
                Value::String(s) => {
                    let text = s.to_string_lossy();
                    if text.chars().count() > 20 {
                        format!("\"{}…\"", text.chars().take(20).collect::<String>())
                    } else {
                        quoted(&text, true)
                    }
                }
                other => scalar_text(other).unwrap_or_else(|| other.type_name().to_owned()),
            };
            match key {
                Value::Integer(i) if (*i as usize) <= array => shown,
                key => format!("{} = {shown}", key_name(key)),
            }
        })
        .collect();
    let more = if total > 5 { ", …" } else { "" };
    format!("{{{}{more}}}", parts.join(", "))
}

/// The text of nil, a boolean or a number as Lua writes it.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::Nil => Some("nil".to_owned()),
        Value::Boolean(b) => Some(b.to_string()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Number(n) => Some(if n.fract() == 0.0 && n.is_finite() {
            format!("{n:.1}")
        } else {
            n.to_string()
        }),
        _ => None,
    }
}

/// A Lua value as text: strings quoted (cut unless `whole`), tables previewed,
/// engine values as their owner shows them.
pub fn show(
    lua: &Lua,
    view: Option<&dyn SectionView>,
    value: &Value,
    whole: bool,
) -> (String, String, Option<RunValue>) {
    if let Some(text) = scalar_text(value) {
        return (text, value.type_name().to_owned(), None);
    }
    match value {
        Value::String(s) => (
            quoted(&s.to_string_lossy(), whole),
            "string".to_owned(),
            None,
        ),
        Value::Table(table) => (
            preview(table),
            "table".to_owned(),
            Some(RunValue::Lua(value.clone())),
        ),
        Value::Function(function) => {
            let info = function.info();
            let text = match (info.name, info.what) {
                (_, "C") => "function (builtin)".to_owned(),
                (Some(name), _) => format!("function {name}"),
                _ => "function".to_owned(),
            };
            (text, "function".to_owned(), None)
        }
        Value::UserData(data) => userdata(lua, view, data),
        Value::Error(error) => (error_message(error), "error".to_owned(), None),
        Value::Thread(_) => ("coroutine".to_owned(), "thread".to_owned(), None),
        other => (
            other.type_name().to_owned(),
            other.type_name().to_owned(),
            None,
        ),
    }
}

fn userdata(
    lua: &Lua,
    view: Option<&dyn SectionView>,
    data: &AnyUserData,
) -> (String, String, Option<RunValue>) {
    if let Ok(error) = data.borrow::<EngineError>() {
        let mut fields = vec![
            (
                "kind".to_owned(),
                RunValue::Json(error.kind.as_str().into()),
            ),
            (
                "message".to_owned(),
                RunValue::Json(error.message.clone().into()),
            ),
        ];
        if let Some(name) = &error.name {
            fields.push(("name".to_owned(), RunValue::Json(name.clone().into())));
        }
        let text = format!("{} error: {}", error.kind.as_str(), error.message);
        return (
            text.clone(),
            "error".to_owned(),
            Some(RunValue::Entries(text, fields)),
        );
    }
    match view.and_then(|view| view.userdata(lua, data)) {
        Some(Shown {
            text,
            type_name,
            children,
        }) => (text, type_name, children),
        None => ("userdata".to_owned(), "userdata".to_owned(), None),
    }
}

/// Host data as text: strings quoted, arrays and objects summarised.
pub fn json_text(value: &serde_json::Value) -> (String, String, bool) {
    match value {
        serde_json::Value::Null => ("null".to_owned(), "null".to_owned(), false),
        serde_json::Value::Bool(b) => (b.to_string(), "boolean".to_owned(), false),
        serde_json::Value::Number(n) => (n.to_string(), "number".to_owned(), false),
        serde_json::Value::String(s) => (quoted(s, false), "string".to_owned(), false),
        serde_json::Value::Array(items) => (
            format!("[{} items]", items.len()),
            "array".to_owned(),
            !items.is_empty(),
        ),
        serde_json::Value::Object(fields) => {
            let keys: Vec<&str> = fields.keys().map(String::as_str).take(5).collect();
            let more = if fields.len() > 5 { ", …" } else { "" };
            (
                format!("{{{}{more}}}", keys.join(", ")),
                "object".to_owned(),
                !fields.is_empty(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_are_cut_with_their_length() {
        let long = "x".repeat(300);
        let shown = quoted(&long, false);
        assert!(shown.ends_with("\"… (300 characters)"), "{shown}");
        assert_eq!(quoted("a\"b\n", false), "\"a\\\"b\\n\"");
        assert_eq!(quoted(&long, true).len(), 302);
    }

    #[test]
    fn tables_preview_their_first_entries() {
        let lua = Lua::new();
        let table: Table = lua
            .load("return {1, 2, 'three', x = {}, y = true}")
            .eval()
            .unwrap();
        assert_eq!(preview(&table), "{1, 2, \"three\", x = {…}, y = true}");
        let many: Table = lua.load("return {1,2,3,4,5,6}").eval().unwrap();
        assert_eq!(preview(&many), "{1, 2, 3, 4, 5, …}");
    }

    #[test]
    fn a_huge_table_gives_its_first_entries_and_its_size() {
        let lua = Lua::new();
        let table: Table = lua
            .load("local t = {10, 20} for i = 1, 100000 do t['k' .. i] = i end return t")
            .eval()
            .unwrap();
        let (first, total) = entries(&table, 10);
        assert_eq!(first.len(), 10);
        assert_eq!(total, 100_002);
        assert_eq!(first[1], (Value::Integer(2), Value::Integer(20)));
    }
}
