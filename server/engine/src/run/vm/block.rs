//! Running one block to its outcome: the block's chunk under the VM's driver, the
//! scalar return rule, and the run error (with its line) of a block that failed.

use mlua::{Function, Lua, MultiValue, Value};
use promptforge_syntax::Document;

use super::control::{Abort, VmControl};
use super::errors::{
    engine_error_in, error_message, innermost, is_memory_error, split_position, Place,
};
use super::functions::describe;
use super::registry::DRIVER_KEY;
use crate::error::{ChainFailure, EngineError, RunError, RunErrorKind};
use crate::messages;
use crate::run::json::type_name;
use crate::run::location::Located;

/// How a block ended when it did not simply finish.
#[derive(Debug)]
pub enum BlockFailure {
    /// `jump(target)`.
    Jump(Located),
    /// A run error.
    Error(RunError),
}

/// Runs one block (`document.lua_blocks[index]`, its code read from `text`)
/// and applies the scalar return rule.
pub async fn exec_block(
    lua: &Lua,
    control: &VmControl,
    document: &Document,
    text: &str,
    index: usize,
) -> Result<Option<String>, BlockFailure> {
    let Some(block) = document.lua_blocks.get(index) else {
        return Err(BlockFailure::Error(RunError::internal(
            "a block index is out of range",
        )));
    };
    let block_line = block.file_line(1);
    let lua_error = |message: String| {
        BlockFailure::Error(RunError::new(RunErrorKind::Lua, message).at_line(block_line))
    };
    let chunk = lua
        .load(block.code(text))
        .set_name(format!("=b{index}"))
        .into_function()
        .map_err(|e| lua_error(error_message(&e)))?;
    let driver: Function = lua
        .named_registry_value(DRIVER_KEY)
        .map_err(|e| BlockFailure::Error(RunError::internal(e.to_string())))?;
    let values: MultiValue = match driver.call_async(chunk).await {
        Ok(values) => values,
        Err(error) => {
            return Err(failure_of(
                lua,
                control,
                document,
                block_line,
                Value::Error(Box::new(error)),
            ))
        }
    };
    let mut values = values.into_iter();
    let ok = matches!(values.next(), Some(Value::Boolean(true)));
    let first = values.next().unwrap_or(Value::Nil);
    if !ok {
        return Err(failure_of(lua, control, document, block_line, first));
    }
    // A jump or a limit raised inside a coroutine that the block then left behind
    // still ends the block.
    match control.take_abort() {
        Some(Abort::Jump(target)) => return Err(BlockFailure::Jump(target)),
        Some(Abort::Error(error)) => return Err(BlockFailure::Error(error.into_run_error())),
        None => {}
    }
    scalar_result(lua, first).map_err(lua_error)
}

/// The scalar return rule: `nil` is no value; strings, integers, floats (as Lua's
/// `tostring` writes them) and booleans are text; anything else is refused.
pub fn scalar_result(lua: &Lua, value: Value) -> Result<Option<String>, String> {
    match value {
        Value::Nil => Ok(None),
        Value::String(s) => Ok(Some(s.to_string_lossy())),
        Value::Integer(i) => Ok(Some(i.to_string())),
        Value::Number(_) => lua
            .coerce_string(value)
            .ok()
            .flatten()
            .map(|s| Some(s.to_string_lossy()))
            .ok_or_else(|| messages::cannot_return("number")),
        Value::Boolean(b) => Ok(Some(b.to_string())),
        other => Err(messages::cannot_return(type_name(&other))),
    }
}

/// Classifies the error value a block failed with.
fn failure_of(
    lua: &Lua,
    control: &VmControl,
    document: &Document,
    block_line: u32,
    value: Value,
) -> BlockFailure {
    if let Some(abort) = control.take_abort() {
        return match abort {
            Abort::Jump(target) => BlockFailure::Jump(target),
            Abort::Error(error) => BlockFailure::Error(error.into_run_error()),
        };
    }
    let recorded = control.last_line.lock().ok().and_then(|mut l| l.take());
    let to_file_line =
        |(index, line): (usize, u32)| document.lua_blocks.get(index).map(|b| b.file_line(line));
    let (error, prefixed_line) = match value {
        Value::UserData(ud) => match ud.borrow::<EngineError>() {
            Ok(engine) => (engine.clone().into_run_error(), None),
            Err(_) => (
                RunError::new(
                    RunErrorKind::Lua,
                    describe(lua, Value::UserData(ud.clone())),
                ),
                None,
            ),
        },
        Value::Error(error) => {
            if is_memory_error(&error) {
                return BlockFailure::Error(control.memory_error().into_run_error());
            }
            match engine_error_in(&error) {
                Some(engine) => (engine.into_run_error(), None),
                None if innermost(&error).downcast_ref::<ChainFailure>().is_some() => {
                    let chain = innermost(&error).downcast_ref::<ChainFailure>();
                    let chain = chain.cloned().unwrap_or(ChainFailure {
                        message: error_message(&error),
                        position: None,
                    });
                    (
                        RunError::new(RunErrorKind::Lua, chain.message).at(chain.position),
                        None,
                    )
                }
                None => {
                    let (message, line) = split_position(&error_message(&error));
                    (RunError::new(RunErrorKind::Lua, message), line)
                }
            }
        }
        Value::String(s) => {
            let text = s.to_string_lossy();
            if text == messages::LUA_OUT_OF_MEMORY {
                return BlockFailure::Error(control.memory_error().into_run_error());
            }
            let (message, line) = split_position(&text);
            (RunError::new(RunErrorKind::Lua, message), line)
        }
        other => (RunError::new(RunErrorKind::Lua, describe(lua, other)), None),
    };
    // Describing the error value ran its `__tostring`, which may itself have hit a
    // limit or seen the cancellation: that wins.
    if let Some(abort) = control.take_abort() {
        return match abort {
            Abort::Jump(target) => BlockFailure::Jump(target),
            Abort::Error(error) => BlockFailure::Error(error.into_run_error()),
        };
    }
    if error.position.is_some() {
        return BlockFailure::Error(error);
    }
    // The line Lua names, else the innermost block frame on the stack when the
    // error was raised, else (every frame of the block was replaced by tail calls)
    // the block's own first line.
    let line = prefixed_line
        .and_then(|place| match place {
            Place::Block(index, line) => to_file_line((index, line)),
            Place::File(line) => Some(line),
        })
        .or_else(|| recorded.and_then(to_file_line))
        .unwrap_or(block_line);
    BlockFailure::Error(error.at_line(line))
}
