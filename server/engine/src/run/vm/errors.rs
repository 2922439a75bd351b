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

/// Turns a caught error into what Lua code sees: engine error values keep their
/// `kind`/`name`, engine string errors become strings.
pub(super) fn convert_error(lua: &Lua, e: Value) -> mlua::Result<Value> {
    let Value::Error(error) = &e else {
        return Ok(e);
    };
    if let Some(engine) = engine_error_in(error) {
        return Ok(Value::UserData(lua.create_userdata(engine)?));
    }
    Ok(Value::String(lua.create_string(error_message(error))?))
}

/// A plain string error (argument and usage errors).
pub fn usage_error(message: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(message.into())
}

/// An error value of `kind`.
pub fn value_error(kind: ErrorKind, message: impl Into<String>) -> mlua::Error {
    mlua::Error::external(EngineError::new(kind, message))
}
