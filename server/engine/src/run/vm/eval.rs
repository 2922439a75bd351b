//! Running Lua in a paused VM for the debugger (the debugger issue): an
//! expression or statements in a frame (the console, hovers, a breakpoint's
//! condition, a logpoint's `{expr}`), with the frame's locals and upvalues in
//! scope. It runs on a fresh coroutine under the sandbox's rules with a budget of
//! its own that aborts it as the run's limits abort a block (no `pcall` catches
//! it), so a runaway expression fails only itself; suspending calls are
//! refused while the run is paused. Assignments to the frame's locals and
//! upvalues reach the frame.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mlua::thread::ThreadStatus;
use mlua::{Function, Lua, MultiValue, Table, Value};

use super::control::{VmControl, VmDebug};
use super::errors::error_message;
use super::frames::{self, SlotKind};

pub use super::control::{eval_budget_message, EVAL_INSTRUCTIONS};

/// A frame slot an evaluation can read and write.
type Slots = HashMap<String, (SlotKind, i64, Value)>;

/// The frame's locals and upvalues by name (a local wins over an upvalue, a
/// later local over an earlier one).
fn slots_of(lua: &Lua, level: Option<usize>) -> Slots {
    let mut slots = Slots::new();
    let Some(level) = level else {
        return slots;
    };
    for slot in frames::upvalues(lua, level) {
        slots.insert(slot.name, (SlotKind::Upvalue, slot.index, slot.value));
    }
    for slot in frames::locals(lua, level) {
        slots.insert(slot.name, (SlotKind::Local, slot.index, slot.value));
    }
    slots
}

/// An environment reading the frame's slots, then the globals; writes to a slot
/// are kept in `writes` (and seen by later reads), other writes go to the globals.
fn environment(
    lua: &Lua,
    slots: Arc<Mutex<Slots>>,
    writes: Arc<Mutex<Vec<(SlotKind, i64, Value)>>>,
) -> mlua::Result<Table> {
    let env = lua.create_table()?;
    let meta = lua.create_table()?;
    let globals = lua.globals();
    let read_slots = slots.clone();
    let read_globals = globals.clone();
    meta.raw_set(
        "__index",
        lua.create_function(move |_, (_, key): (Value, Value)| {
            if let Value::String(name) = &key {
                let slots = read_slots.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((_, _, value)) = slots.get(&name.to_string_lossy()) {
                    return Ok(value.clone());
                }
            }
            read_globals.raw_get::<Value>(key)
        })?,
    )?;
    meta.raw_set(
        "__newindex",
        lua.create_function(move |_, (_, key, value): (Value, Value, Value)| {
            if let Value::String(name) = &key {
                let mut slots = slots.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((kind, index, held)) = slots.get_mut(&name.to_string_lossy()) {
                    *held = value.clone();
                    writes
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((*kind, *index, value));
                    return Ok(());
                }
            }
            globals.raw_set(key, value)
        })?,
    )?;
    env.set_metatable(Some(meta))?;
    Ok(env)
}

/// Lua's message without the `eval:N: ` position of the evaluated chunk and
/// without the traceback a coroutine's error carries.
fn without_position(message: &str) -> String {
    let message = message
        .split_once("\nstack traceback:")
        .map_or(message, |(first, _)| first);
    message
        .strip_prefix("eval:")
        .and_then(|rest| rest.split_once(": "))
        .filter(|(line, _)| line.chars().all(|c| c.is_ascii_digit()))
        .map_or_else(|| message.to_owned(), |(_, rest)| rest.to_owned())
}

/// A compile error's message without its position.
fn compile_message(error: &mlua::Error) -> String {
    match error {
        mlua::Error::SyntaxError { message, .. } => without_position(message),
        other => without_position(&error_message(other)),
    }
}

/// Compiles `code` as an expression (`return code`), else as statements.
fn compile(lua: &Lua, code: &str, env: Table) -> Result<Function, String> {
    let expression = lua
        .load(format!("return {code}"))
        .set_name("=eval")
        .set_environment(env.clone())
        .into_function();
    expression.or_else(|_| {
        lua.load(code)
            .set_name("=eval")
            .set_environment(env)
            .into_function()
            .map_err(|e| compile_message(&e))
    })
}

/// Runs `code` in the frame at `level` (globals only when None) of the VM
/// `lua` (its `control` and debugger side `vm`) and gives its first value (nil
/// for statements); the error is the message to show.
pub fn evaluate(
    lua: &Lua,
    (control, vm): (&VmControl, &VmDebug),
    level: Option<usize>,
    code: &str,
) -> Result<Value, String> {
    let slots = Arc::new(Mutex::new(slots_of(lua, level)));
    let writes = Arc::new(Mutex::new(Vec::new()));
    let env = environment(lua, slots, writes.clone()).map_err(|e| error_message(&e))?;
    let function = compile(lua, code, env)?;
    let run = || {
        lua.create_thread(function).map(|thread| {
            let result = thread.resume::<MultiValue>(());
            (thread.status(), result)
        })
    };
    let ran = control.evaluation(vm, run);
    let value = match ran {
        Ok((ThreadStatus::Resumable, _)) => {
            return Err("the expression tried to wait; calls that suspend are not available while the run is paused".to_owned())
        }
        Ok((_, Ok(values))) => values.into_iter().next().unwrap_or(Value::Nil),
        Ok((_, Err(error))) | Err(error) => {
            return Err(without_position(&error_message(&error)));
        }
    };
    if let Some(level) = level {
        let writes = std::mem::take(&mut *writes.lock().unwrap_or_else(PoisonError::into_inner));
        for (kind, index, written) in writes {
            frames::set_slot(lua, level, kind, index, written);
        }
    }
    Ok(value)
}

/// Checks that `code` compiles as an expression (a breakpoint's condition);
/// the error is Lua's message.
pub fn check_expression(code: &str) -> Result<(), String> {
    Lua::new()
        .load(format!("return {code}"))
        .set_name("=eval")
        .into_function()
        .map(|_| ())
        .map_err(|e| compile_message(&e))
}

/// True for a value Lua counts as true.
pub fn truthy(value: &Value) -> bool {
    !matches!(value, Value::Nil | Value::Boolean(false))
}

/// A logpoint's message with each `{expression}` replaced by its value as
/// text (`show` writes it); `\{` and `\}` are braces. An expression that fails
/// shows `<error: message>`.
pub fn interpolate(message: &str, mut value_of: impl FnMut(&str) -> String) -> String {
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some('{' | '}')) => {
                out.extend(chars.next());
            }
            '{' => {
                let mut expression = String::new();
                let mut depth = 1;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    expression.push(c);
                }
                out.push_str(&value_of(expression.trim()));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logpoint_messages_interpolate_their_expressions() {
        let shown = interpolate("a={a} t={ {1} } \\{a\\} end", |e| format!("<{e}>"));
        assert_eq!(shown, "a=<a> t=<{1}> {a} end");
    }

    #[test]
    fn conditions_are_checked_before_they_run() {
        assert_eq!(check_expression("a > 1"), Ok(()));
        assert_eq!(
            check_expression("a >"),
            Err("unexpected symbol near <eof>".to_owned())
        );
    }

    #[test]
    fn positions_of_the_evaluated_chunk_are_dropped() {
        assert_eq!(without_position("eval:1: boom"), "boom");
        assert_eq!(without_position("b3:1: boom"), "b3:1: boom");
    }
}
