//! A fresh sandboxed VM (§3, §7): the standard libraries a prompt may use, `pcall`
//! and `xpcall` that never catch a jump, a cancellation or a limit, `__gc`
//! refused, the instruction budget and the cancel signal checked between
//! instructions, the memory ceiling, and Lua's pattern functions charged to the
//! budget.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use mlua::debug::DebugEvent;
use mlua::{Function, Lua, LuaOptions, StdLib, Value, VmState};

use super::control::{Abort, VmControl};
use super::debug_hook::{self, HookFunction, KeptHook};
use super::errors::{convert_error, is_memory_error};
use super::functions::load_cached;
use super::registry::{DRIVER_KEY, ERROR_KEY, PCALL_KEY, RAW_XPCALL_KEY, TOSTRING_KEY};
use crate::messages;
use crate::run::vm::patterns;

/// Instructions between two checks of the budget and the cancel signal.
pub const HOOK_INTERVAL: u32 = 1000;

/// Checks between two yields of a block that never suspends, so other chains
/// (fanout arms) run too.
const YIELD_EVERY: u64 = 10;

const PRELUDE: &str = r#"
local raw_pcall, raw_xpcall, error, is_fatal, convert, handler, mark, gc_refused, raised = ...
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
if raised then
  -- A debugger sees every error where it is raised, caught or not.
  local function seen(e) raised(e) return e end
  pcall = function(f, ...) return after(raw_xpcall(f, seen, ...)) end
  xpcall = function(f, h, ...)
    return after_x(raw_xpcall(f, function(e)
      if is_fatal(e) then return e end
      raised(e)
      return h(convert(e))
    end, ...))
  end
end
-- A finalizer would run with the hooks off, outside the instruction budget and
-- cancellation: __gc is refused.
setmetatable = function(t, mt)
  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then error(gc_refused, 2) end
  return raw_setmetatable(t, mt)
end
-- A limit or a cancellation inside a coroutine passes through resume too, and
-- its error reads as pcall's does.
coroutine.resume = function(co, ...) return after(raw_resume(co, ...)) end
return function(f) mark() return raw_xpcall(f, handler) end
"#;

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
        debug_hook::on_raise(lua, &line_control, &e, false)?;
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
    let raised = match &control.debug {
        Some(_) => {
            lua.set_named_registry_value(RAW_XPCALL_KEY, &raw_xpcall)?;
            let raised_control = control.clone();
            Some(lua.create_function(move |lua, e: Value| {
                debug_hook::on_raise(lua, &raised_control, &e, true)
            })?)
        }
        None => None,
    };
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
        raised,
    ))?;
    lua.set_named_registry_value(DRIVER_KEY, driver)?;
    let wrapped_pcall: Function = globals.get("pcall")?;
    lua.set_named_registry_value(PCALL_KEY, wrapped_pcall)?;
    let error: Function = globals.get("error")?;
    lua.set_named_registry_value(ERROR_KEY, error)?;
    patterns::install(&lua, control)?;

    let hook_control = control.clone();
    let hook: HookFunction = Arc::new(move |lua, debug| {
        if debug.event() == DebugEvent::Line {
            return debug_hook::on_line(lua, debug, &hook_control);
        }
        // The debugger's evaluation has a budget of its own and never yields.
        let Some(used) = hook_control.charge(u64::from(HOOK_INTERVAL))? else {
            return Ok(VmState::Continue);
        };
        if let Some(vm) = &hook_control.debug {
            debug_hook::on_count(lua, &hook_control, vm)?;
        }
        let checks = used / u64::from(HOOK_INTERVAL);
        if checks.is_multiple_of(YIELD_EVERY)
            && lua.current_thread().to_pointer() as usize
                == hook_control.driver_thread.load(Ordering::SeqCst)
        {
            return Ok(VmState::Yield);
        }
        Ok(VmState::Continue)
    });
    let lines = control
        .debug
        .as_ref()
        .is_some_and(|vm| vm.lines_on.load(Ordering::SeqCst));
    let installed = hook.clone();
    lua.set_global_hook(
        debug_hook::triggers(HOOK_INTERVAL, lines),
        move |lua, debug| installed(lua, debug),
    )?;
    if control.debug.is_some() {
        lua.set_app_data(KeptHook {
            function: hook,
            interval: HOOK_INTERVAL,
        });
    }
    let bytes = control.limits.lua_memory_mib.saturating_mul(1024 * 1024);
    lua.set_memory_limit(usize::try_from(bytes).unwrap_or(usize::MAX))?;
    lua.set_app_data(control.clone());
    Ok(lua)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Limits;
    use crate::run::debugger::{DebugListener, Debugger, Stop};
    use crate::run::vm::control::VmDebug;
    use crate::run::vm::eval::{eval_budget_message, evaluate};
    use tokio_util::sync::CancellationToken;

    // The evaluation budget's test lives here, beside the VM it needs: the
    // evaluator sits below the sandbox in the module layers.

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

    struct Quiet;

    impl DebugListener for Quiet {
        fn stopped(&self, _: i64, _: &Stop) {}
        fn thread(&self, _: i64, _: bool) {}
        fn output(&self, _: &str) {}
    }

    /// A debugged VM of the H1 pass.
    fn debugged() -> (Arc<VmControl>, Lua) {
        let debugger = Arc::new(Debugger::new(Arc::new(Quiet)));
        let vm = VmDebug::new(
            debugger,
            1,
            (Vec::new(), "# T".to_owned(), vec![0]),
            Vec::new(),
            false,
        );
        let control = Arc::new(
            VmControl::new(CancellationToken::new(), Limits::default()).with_debug(Some(vm)),
        );
        let lua = new_lua(&control).expect("a VM");
        (control, lua)
    }

    #[test]
    fn the_evaluation_budget_passes_through_every_pcall() {
        let (control, lua) = debugged();
        let vm = control.debug.as_ref().expect("debugged");
        let run_used = || {
            control
                .instructions
                .load(std::sync::atomic::Ordering::SeqCst)
        };
        let before = run_used();
        for code in [
            "while true do pcall(function() while true do end end) end",
            "while true do xpcall(function() while true do end end, function(e) return e end) end",
            "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
            "while true do pcall(string.find, string.rep('a', 5000), '.-.-.-b') end",
        ] {
            assert_eq!(
                evaluate(&lua, (&control, vm), None, code),
                Err(eval_budget_message()),
                "{code}"
            );
            // The VM's own run is not aborted, and the next evaluation works.
            assert!(!control.is_aborted(), "{code}");
            assert_eq!(
                evaluate(&lua, (&control, vm), None, "1 + 1").map(|v| v.as_i64()),
                Ok(Some(2))
            );
        }
        // The VM's own budget was not charged by the evaluations.
        assert_eq!(run_used(), before);
        // An ordinary error is still caught by a pcall inside an evaluation.
        assert_eq!(
            evaluate(
                &lua,
                (&control, vm),
                None,
                "select(2, pcall(error, 'boom', 0))"
            )
            .map(|v| v.as_string().map(|s| s.to_string_lossy())),
            Ok(Some("boom".to_owned()))
        );
    }
}
