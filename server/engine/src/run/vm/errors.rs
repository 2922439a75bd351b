//! Errors across the VM's boundary: engine error values inside mlua errors, the
//! message Lua code reads, the VM's out-of-memory error, and the plain and typed
//! errors the Lua API raises.

use mlua::{Lua, Value};

use crate::error::{EngineError, ErrorKind};

/// Finds an engine error value inside an mlua error.
pub fn engine_error_in(error: &mlua::Error) -> Option<EngineError> {
    match error {
        mlua::Error::CallbackError { cause, .. } => engine_error_in(cause),
        mlua::Error::WithContext { cause, .. } => engine_error_in(cause),
        other => other.downcast_ref::<EngineError>().cloned(),
    }
}

/// The error inside every callback and context wrapper.
pub(super) fn innermost(error: &mlua::Error) -> &mlua::Error {
    match error {
        mlua::Error::CallbackError { cause, .. } => innermost(cause),
        mlua::Error::WithContext { cause, .. } => innermost(cause),
        other => other,
    }
}

/// True for the error a `call` chain or a fanout arm ended with, raised again in
/// its caller as a plain error.
pub(super) fn is_chain_failure(error: &mlua::Error) -> bool {
    innermost(error)
        .downcast_ref::<crate::error::ChainFailure>()
        .is_some()
}

/// True for the VM's out-of-memory error, however wrapped.
pub(super) fn is_memory_error(error: &mlua::Error) -> bool {
    matches!(innermost(error), mlua::Error::MemoryError(_))
}

/// The message of an mlua error as Lua code reads it.
pub fn error_message(error: &mlua::Error) -> String {
    match innermost(error) {
        mlua::Error::RuntimeError(message) => message.clone(),
        mlua::Error::ExternalError(inner) => inner.to_string(),
        other => other.to_string(),
    }
}

/// Splits Lua's `b{index}:{line}: ` position prefix off a message.
pub(super) fn strip_position(message: &str) -> (String, Option<(usize, u32)>) {
    let parsed = message.strip_prefix('b').and_then(|rest| {
        let (index, rest) = rest.split_once(':')?;
        let (line, rest) = rest.split_once(": ")?;
        Some(((index.parse().ok()?, line.parse().ok()?), rest))
    });
    match parsed {
        Some((position, rest)) => (rest.to_owned(), Some(position)),
        None => (message.to_owned(), None),
    }
}

/// Where each block's code starts in the prompt file (0-based), kept in the VM
/// so the messages Lua code reads name file lines.
pub struct BlockStarts(pub Vec<u32>);

/// Splits the position prefix off a message that reached Lua code and was raised
/// again: `line {file line}: ` ([`in_file_lines`]) or Lua's own `b{block}:{line}: `.
pub(super) fn split_position(message: &str) -> (String, Option<Place>) {
    let file_line = message.strip_prefix("line ").and_then(|rest| {
        let (line, rest) = rest.split_once(": ")?;
        Some((line.parse::<u32>().ok()?, rest))
    });
    if let Some((line, rest)) = file_line {
        return (rest.to_owned(), Some(Place::File(line)));
    }
    let (rest, block) = strip_position(message);
    (rest, block.map(|(index, line)| Place::Block(index, line)))
}

/// Where a message says it was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// A line of a block (its index, the line within it).
    Block(usize, u32),
    /// A line of the prompt file.
    File(u32),
}

/// `message` with Lua's position prefix `b{block}:{line}: `, which counts the
/// lines of the block, turned into `line {file line}: ` (None without one).
pub(super) fn in_file_lines(lua: &Lua, message: &str) -> Option<String> {
    let (rest, Some((block, line))) = strip_position(message) else {
        return None;
    };
    let starts = lua.app_data_ref::<BlockStarts>()?;
    let first = starts.0.get(block)?;
    Some(format!("line {}: {rest}", first.saturating_add(line)))
}

/// The prompt file's 1-based line of the innermost prompt-block frame on the
/// running Lua stack (the line of the call a Rust function serves), when there
/// is one: a tail call (`return models.loop(m)`) leaves no frame of its caller.
pub fn caller_line(lua: &Lua) -> Option<u32> {
    let starts = lua.app_data_ref::<BlockStarts>()?;
    (0..32).find_map(|level| {
        lua.inspect_stack(level, |debug| {
            let source = debug.source().source?;
            let block = source.strip_prefix("=b")?.parse::<usize>().ok()?;
            let line = u32::try_from(debug.current_line()?)
                .ok()
                .filter(|&l| l > 0)?;
            Some(starts.0.get(block)?.saturating_add(line))
        })?
    })
}

/// Turns a caught error into what Lua code sees: engine error values keep their
/// `kind`/`name`, engine string errors become strings, and a position names the
/// prompt file's line ([`in_file_lines`]).
pub(super) fn convert_error(lua: &Lua, e: Value) -> mlua::Result<Value> {
    let message = match &e {
        Value::Error(error) => {
            if let Some(engine) = engine_error_in(error) {
                return Ok(Value::UserData(lua.create_userdata(engine)?));
            }
            error_message(error)
        }
        Value::String(text) => match text.to_str() {
            Ok(text) => text.to_owned(),
            Err(_) => return Ok(e),
        },
        _ => return Ok(e),
    };
    match in_file_lines(lua, &message) {
        Some(relined) => Ok(Value::String(lua.create_string(relined)?)),
        None if matches!(e, Value::String(_)) => Ok(e),
        None => Ok(Value::String(lua.create_string(message)?)),
    }
}

/// A plain string error (argument and usage errors).
pub fn usage_error(message: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(message.into())
}

/// An error value of `kind`.
pub fn value_error(kind: ErrorKind, message: impl Into<String>) -> mlua::Error {
    mlua::Error::external(EngineError::new(kind, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_split_off() {
        assert_eq!(
            strip_position("b3:7: boom"),
            ("boom".to_owned(), Some((3, 7)))
        );
        assert_eq!(strip_position("boom: b3"), ("boom: b3".to_owned(), None));
        assert_eq!(strip_position("bad: x"), ("bad: x".to_owned(), None));
    }

    #[test]
    fn a_caught_message_names_the_file_line() {
        let lua = Lua::new();
        lua.set_app_data(BlockStarts(vec![8, 20]));
        assert_eq!(
            in_file_lines(&lua, "b1:3: boom").as_deref(),
            Some("line 23: boom")
        );
        assert_eq!(in_file_lines(&lua, "b7:3: boom"), None);
        assert_eq!(in_file_lines(&lua, "h:3: boom"), None);
        assert_eq!(
            split_position("line 23: boom"),
            ("boom".to_owned(), Some(Place::File(23)))
        );
        assert_eq!(
            split_position("b1:3: boom"),
            ("boom".to_owned(), Some(Place::Block(1, 3)))
        );
        assert_eq!(split_position("lines: x"), ("lines: x".to_owned(), None));
    }
}
