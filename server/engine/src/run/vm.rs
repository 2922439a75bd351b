//! One Lua VM: the sandbox of §3, the limits of §7 (memory ceiling, instruction
//! budget, cancellation between instructions), `pcall`/`xpcall` that never catch
//! a jump, a cancellation or a limit, and running one block to its outcome.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use mlua::{
    chunk::ChunkMode, debug::HookTriggers, Function, Lua, LuaOptions, MultiValue, StdLib, Value,
    VmState,
};
use promptforge_syntax::Document;
use tokio_util::sync::CancellationToken;

use crate::error::{ChainFailure, EngineError, ErrorKind, RunError, RunErrorKind};
use crate::host::Limits;
use crate::messages;
use crate::run::json::type_name;
use crate::run::location::Located;

/// Instructions between two checks of the budget and the cancel signal.
pub const HOOK_INTERVAL: u32 = 1000;

/// Checks between two yields of a block that never suspends, so other chains
/// (fanout arms) run too.
const YIELD_EVERY: u64 = 10;

const DRIVER_KEY: &str = "promptforge.driver";
const TOSTRING_KEY: &str = "promptforge.tostring";
const PCALL_KEY: &str = "promptforge.pcall";
const ERROR_KEY: &str = "promptforge.error";

/// What ends a block early and passes through every `pcall`.
#[derive(Debug, Clone)]
pub enum Abort {
    /// `jump(target)`.
    Jump(Located),
    /// A limit or a cancellation.
    Error(EngineError),
}

/// The VM's side of the run: the pending abort, the instruction count, whether jump works.
#[derive(Debug)]
pub struct VmControl {
    abort: Mutex<Option<Abort>>,
    instructions: AtomicU64,
    /// True while the shared library replays (jump is refused then).
    pub shared_loading: AtomicBool,
    cancel: CancellationToken,
    limits: Limits,
    last_line: Mutex<Option<(usize, u32)>>,
    /// The thread running the current block: only it yields to the scheduler.
    driver_thread: AtomicUsize,
    /// Local tool handlers running now, nested ones included (jump is refused then).
    pub handlers: AtomicUsize,
    /// Bytes this VM made the host keep for it (message list texts), counted
    /// against the VM's memory ceiling.
    host_bytes: AtomicU64,
}

impl VmControl {
    /// The control of a VM of a chain with `cancel`.
    pub fn new(cancel: CancellationToken, limits: Limits) -> Self {
        VmControl {
            abort: Mutex::new(None),
            instructions: AtomicU64::new(0),
            shared_loading: AtomicBool::new(false),
            cancel,
            limits,
            last_line: Mutex::new(None),
            driver_thread: AtomicUsize::new(0),
            handlers: AtomicUsize::new(0),
            host_bytes: AtomicU64::new(0),
        }
    }

    /// Counts `bytes` of host memory kept for this VM (text appended to a message
    /// list); past the VM's memory ceiling that is the memory limit.
    pub fn charge_host_bytes(&self, bytes: usize) -> mlua::Result<()> {
        let ceiling = self.limits.lua_memory_mib.saturating_mul(1024 * 1024);
        let bytes = bytes as u64;
        let before = self.host_bytes.fetch_add(bytes, Ordering::SeqCst);
        if before.saturating_add(bytes) > ceiling {
            return Err(self.abort(Abort::Error(self.memory_error())));
        }
        Ok(())
    }

    /// Counts `n` instructions run outside the VM (Lua pattern matching): past the
    /// budget that is the instruction limit; a cancelled chain stops here too.
    pub fn charge_instructions(&self, n: u64) -> mlua::Result<()> {
        if self.cancel.is_cancelled() {
            return Err(self.abort(Abort::Error(EngineError::cancelled())));
        }
        let budget = self.limits.lua_instructions;
        let used = self.instructions.fetch_add(n, Ordering::Relaxed) + n;
        if used > budget {
            return Err(self.abort(Abort::Error(EngineError::limit(
                messages::instruction_limit(budget),
            ))));
        }
        Ok(())
    }

    /// The VM's memory ceiling in bytes.
    pub fn memory_ceiling(&self) -> u64 {
        self.limits.lua_memory_mib.saturating_mul(1024 * 1024)
    }

    /// Records an abort (the first one wins) and gives the error that unwinds Lua.
    pub fn abort(&self, abort: Abort) -> mlua::Error {
        let mut slot = self.abort.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(abort.clone());
        }
        match abort {
            Abort::Jump(_) => mlua::Error::RuntimeError("jump".to_owned()),
            Abort::Error(error) => mlua::Error::external(error),
        }
    }

    /// Raises an engine error value: limits and cancellations abort the VM.
    pub fn raise(&self, error: EngineError) -> mlua::Error {
        if error.kind.is_fatal() {
            self.abort(Abort::Error(error))
        } else {
            mlua::Error::external(error)
        }
    }

    /// True while a jump, a limit or a cancellation unwinds the VM.
    pub fn is_aborted(&self) -> bool {
        self.abort.lock().map(|a| a.is_some()).unwrap_or(true)
    }

    fn take_abort(&self) -> Option<Abort> {
        self.abort.lock().ok().and_then(|mut a| a.take())
    }

    /// The chain's cancel signal.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The memory limit's error value.
    pub fn memory_error(&self) -> EngineError {
        EngineError::limit(messages::memory_limit(self.limits.lua_memory_mib))
    }
}

/// Finds an engine error value inside an mlua error.
pub fn engine_error_in(error: &mlua::Error) -> Option<EngineError> {
    match error {
        mlua::Error::CallbackError { cause, .. } => engine_error_in(cause),
        mlua::Error::WithContext { cause, .. } => engine_error_in(cause),
        other => other.downcast_ref::<EngineError>().cloned(),
    }
}

fn innermost(error: &mlua::Error) -> &mlua::Error {
    match error {
        mlua::Error::CallbackError { cause, .. } => innermost(cause),
        mlua::Error::WithContext { cause, .. } => innermost(cause),
        other => other,
    }
}

fn is_memory_error(error: &mlua::Error) -> bool {
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

const PRELUDE: &str = r#"
local raw_pcall, raw_xpcall, error, is_fatal, convert, handler, mark, gc_refused = ...
local raw_setmetatable, rawget, type, raw_resume = setmetatable, rawget, type, coroutine.resume
local function after(ok, ...)
  if ok then return true, ... end
  local e = ...
  if is_fatal(e) then error(e, 0) end
  return false, convert(e)
end
local function after_x(ok, ...)
  if not ok and is_fatal((...)) then error((...), 0) end
  return ok, ...
end
pcall = function(f, ...) return after(raw_pcall(f, ...)) end
xpcall = function(f, h, ...)
  return after_x(raw_xpcall(f, function(e)
    if is_fatal(e) then return e end
    return h(convert(e))
  end, ...))
end
-- A finalizer would run with the hooks off, outside the instruction budget and
-- cancellation: __gc is refused.
setmetatable = function(t, mt)
  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then error(gc_refused, 2) end
  return raw_setmetatable(t, mt)
end
-- A limit or a cancellation inside a coroutine passes through resume too.
coroutine.resume = function(co, ...) return after_x(raw_resume(co, ...)) end
return function(f) mark() return raw_xpcall(f, handler) end
"#;

/// Lua source compiled once per process: every VM loads the bytecode instead of
/// parsing the text again.
pub fn load_cached<'a>(
    lua: &'a Lua,
    cache: &'static OnceLock<Option<Vec<u8>>>,
    name: &str,
    source: &'a str,
) -> mlua::chunk::Chunk<'a> {
    let bytecode = cache.get_or_init(|| {
        let compiler = Lua::new();
        let function = compiler.load(source).set_name(name).into_function().ok()?;
        Some(function.dump(false))
    });
    match bytecode {
        Some(bytes) => lua
            .load(bytes.as_slice())
            .set_name(name)
            .set_mode(ChunkMode::Binary),
        None => lua.load(source).set_name(name),
    }
}

const LAZY: &str = r#"
local make = ...
local f
return function(...)
  if f == nil then f = make() end
  return f(...)
end
"#;

/// A Lua function that builds the real one (`build`) on its first call and then
/// passes every call on to it: VMs that never call an async API function do not
/// pay for mlua's async poller.
pub fn lazy_function<F>(lua: &Lua, build: F) -> mlua::Result<Function>
where
    F: Fn(&Lua) -> mlua::Result<Function> + mlua::MaybeSend + 'static,
{
    static LAZY_CODE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let make = lua.create_function(move |lua, ()| build(lua))?;
    load_cached(lua, &LAZY_CODE, "=lazy", LAZY).call(make)
}

const RERAISE: &str = r#"
local inner, error = ...
return function(...)
  local ok, value = inner(...)
  if not ok then error(value, 0) end
  return value
end
"#;

/// A Lua function around `inner`, which returns `(true, value)` or `(false, error)`:
/// it returns the value, or raises the error value itself (a handler's own error
/// value, whatever its type, raised again at the call).
pub fn reraising(lua: &Lua, inner: Function) -> mlua::Result<Function> {
    static RERAISE_CODE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let error: Function = lua.named_registry_value(ERROR_KEY)?;
    load_cached(lua, &RERAISE_CODE, "=reraise", RERAISE).call((inner, error))
}

/// Calls `f(arg)` under the VM's `pcall` (which never catches a jump, a limit or a
/// cancellation): `(true, values...)` or `(false, error value)`.
pub async fn protected_call(lua: &Lua, f: Function, arg: Value) -> mlua::Result<MultiValue> {
    let pcall: Function = lua.named_registry_value(PCALL_KEY)?;
    pcall.call_async((f, arg)).await
}

/// Counts host memory kept for the VM `lua` (see [`VmControl::charge_host_bytes`]).
pub fn charge_host_bytes(lua: &Lua, bytes: usize) -> mlua::Result<()> {
    match lua.app_data_ref::<Arc<VmControl>>() {
        Some(control) => control.charge_host_bytes(bytes),
        None => Ok(()),
    }
}

/// A fresh sandboxed VM with the limits and the cancel signal of `control`.
pub fn new_lua(control: &Arc<VmControl>) -> mlua::Result<Lua> {
    let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE;
    let lua = Lua::new_with(libs, LuaOptions::new())?;
    let globals = lua.globals();
    for name in [
        "dofile",
        "loadfile",
        "load",
        "collectgarbage",
        "require",
        "module",
    ] {
        globals.raw_set(name, Value::Nil)?;
    }
    if let Ok(string) = globals.get::<mlua::Table>("string") {
        string.raw_set("dump", Value::Nil)?;
    }
    let tostring: Function = globals.get("tostring")?;
    lua.set_named_registry_value(TOSTRING_KEY, tostring)?;

    let fatal_control = control.clone();
    let is_fatal = lua.create_function(move |_, e: Value| {
        if fatal_control.is_aborted() {
            return Ok(true);
        }
        let memory = match &e {
            Value::String(s) => s.to_string_lossy() == messages::LUA_OUT_OF_MEMORY,
            Value::Error(error) => is_memory_error(error),
            _ => false,
        };
        if memory {
            let _ = fatal_control.abort(Abort::Error(fatal_control.memory_error()));
        }
        Ok(memory)
    })?;
    let convert = lua.create_function(|lua, e: Value| convert_error(lua, e))?;
    let line_control = control.clone();
    let handler = lua.create_function(move |lua, e: Value| {
        let mut found = None;
        for level in 0..64 {
            let Some(frame) = lua.inspect_stack(level, |d| {
                let source = d.source().source.map(|s| s.into_owned());
                (source, d.current_line())
            }) else {
                break;
            };
            if let (Some(source), Some(line)) = frame {
                if let Some(index) = source
                    .strip_prefix("=b")
                    .and_then(|n| n.parse::<usize>().ok())
                {
                    found = Some((index, line as u32));
                    break;
                }
            }
        }
        if let Ok(mut last) = line_control.last_line.lock() {
            *last = found;
        }
        Ok(e)
    })?;
    let mark_control = control.clone();
    let mark = lua.create_function(move |lua, ()| {
        let thread = lua.current_thread().to_pointer() as usize;
        mark_control.driver_thread.store(thread, Ordering::SeqCst);
        Ok(())
    })?;
    let raw_pcall: Function = globals.get("pcall")?;
    let raw_xpcall: Function = globals.get("xpcall")?;
    let error: Function = globals.get("error")?;
    static PRELUDE_CODE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let driver: Function = load_cached(&lua, &PRELUDE_CODE, "=prelude", PRELUDE).call((
        raw_pcall,
        raw_xpcall,
        error,
        is_fatal,
        convert,
        handler,
        mark,
        messages::GC_METAMETHOD_REFUSED,
    ))?;
    lua.set_named_registry_value(DRIVER_KEY, driver)?;
    let wrapped_pcall: Function = globals.get("pcall")?;
    lua.set_named_registry_value(PCALL_KEY, wrapped_pcall)?;
    let error: Function = globals.get("error")?;
    lua.set_named_registry_value(ERROR_KEY, error)?;
    crate::run::patterns::install(&lua, control)?;

    let hook_control = control.clone();
    let budget = control.limits.lua_instructions;
    lua.set_global_hook(
        HookTriggers::new().every_nth_instruction(HOOK_INTERVAL),
        move |lua, _| {
            if hook_control.cancel.is_cancelled() {
                return Err(hook_control.abort(Abort::Error(EngineError::cancelled())));
            }
            let used = hook_control
                .instructions
                .fetch_add(u64::from(HOOK_INTERVAL), Ordering::Relaxed)
                + u64::from(HOOK_INTERVAL);
            if used > budget {
                return Err(hook_control.abort(Abort::Error(EngineError::limit(
                    messages::instruction_limit(budget),
                ))));
            }
            let checks = used / u64::from(HOOK_INTERVAL);
            if checks.is_multiple_of(YIELD_EVERY)
                && lua.current_thread().to_pointer() as usize
                    == hook_control.driver_thread.load(Ordering::SeqCst)
            {
                return Ok(VmState::Yield);
            }
            Ok(VmState::Continue)
        },
    )?;
    let bytes = control.limits.lua_memory_mib.saturating_mul(1024 * 1024);
    lua.set_memory_limit(usize::try_from(bytes).unwrap_or(usize::MAX))?;
    lua.set_app_data(control.clone());
    Ok(lua)
}

/// Turns a caught error into what Lua code sees: engine error values keep their
/// `kind`/`name`, engine string errors become strings.
fn convert_error(lua: &Lua, e: Value) -> mlua::Result<Value> {
    let Value::Error(error) = &e else {
        return Ok(e);
    };
    if let Some(engine) = engine_error_in(error) {
        return Ok(Value::UserData(lua.create_userdata(engine)?));
    }
    Ok(Value::String(lua.create_string(error_message(error))?))
}

/// How a block ended when it did not simply finish.
#[derive(Debug)]
pub enum BlockFailure {
    /// `jump(target)`.
    Jump(Located),
    /// A run error.
    Error(RunError),
}

/// Runs one block (`document.lua_blocks[index]`) and applies the scalar return rule.
pub async fn exec_block(
    lua: &Lua,
    control: &VmControl,
    document: &Document,
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
        .load(block.code.as_str())
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
                    let (message, line) = strip_position(&error_message(&error));
                    (RunError::new(RunErrorKind::Lua, message), line)
                }
            }
        }
        Value::String(s) => {
            let text = s.to_string_lossy();
            if text == messages::LUA_OUT_OF_MEMORY {
                return BlockFailure::Error(control.memory_error().into_run_error());
            }
            let (message, line) = strip_position(&text);
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
        .and_then(to_file_line)
        .or_else(|| recorded.and_then(to_file_line))
        .unwrap_or(block_line);
    BlockFailure::Error(error.at_line(line))
}

/// `tostring` of a value, with the VM's original `tostring`; an error raised by a
/// `__tostring` metamethod (a limit reached inside it, say) comes back as it is.
pub fn try_describe(lua: &Lua, value: Value) -> mlua::Result<String> {
    lua.named_registry_value::<Function>(TOSTRING_KEY)
        .and_then(|f| f.call::<mlua::LuaString>(value))
        .map(|s| s.to_string_lossy())
}

/// `tostring` of a value, with the VM's original `tostring`, or a placeholder when
/// its `__tostring` fails.
pub fn describe(lua: &Lua, value: Value) -> String {
    try_describe(lua, value).unwrap_or_else(|_| "(error object is not a string)".to_owned())
}

/// Splits Lua's `b{index}:{line}: ` position prefix off a message.
fn strip_position(message: &str) -> (String, Option<(usize, u32)>) {
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
    fn the_sandbox_has_no_escape_hatches() {
        let control = Arc::new(VmControl::new(CancellationToken::new(), Limits::default()));
        let lua = new_lua(&control).unwrap();
        let missing: bool = lua
            .load("return io == nil and os == nil and debug == nil and package == nil and require == nil and load == nil and loadfile == nil and dofile == nil and collectgarbage == nil and string.dump == nil")
            .eval()
            .unwrap();
        assert!(missing);
        let present: bool = lua
            .load("return string.format('%d', 3) == '3' and math.floor(2.5) == 2 and utf8.char(65) == 'A' and table.concat({1,2}) == '12'")
            .eval()
            .unwrap();
        assert!(present);
    }
}
