//! Reading and writing a paused VM's frames through Lua's debug interface (the
//! debugger issue): the locals and upvalues of a frame, setting one, and the
//! depth of the running thread's stack. mlua offers no wrapper for these, and the
//! sandbox has no `debug` library, so this module is the one place that calls
//! Lua's C API directly.
//!
//! Levels are those of [`mlua::Lua::inspect_stack`] on the thread that runs now
//! (in a hook, 0 is the running function). `exec_raw` runs its closure in one more
//! C frame, so inside it every level is one deeper ([`RAW_OFFSET`]). The closures
//! only move values on Lua's stack: nothing in them owns memory Rust must free,
//! since a Lua error inside would jump over them.

use std::os::raw::{c_char, c_int};

use mlua::{ffi, Lua, MultiValue, Value};

/// How many levels `exec_raw`'s own C frame adds.
const RAW_OFFSET: c_int = 1;

/// A named slot of a frame: a local or an upvalue.
#[derive(Debug, Clone)]
pub struct Slot {
    /// Lua's index of the slot (1-based), for setting it.
    pub index: i64,
    /// Its name.
    pub name: String,
    /// Its value now.
    pub value: Value,
}

fn level_of(level: usize) -> Option<c_int> {
    c_int::try_from(level).ok()?.checked_add(RAW_OFFSET)
}

/// Reads the triples `(index, name, value)` the raw closure left on the stack.
fn slots(values: MultiValue) -> Vec<Slot> {
    let values: Vec<Value> = values.into_iter().collect();
    values
        .chunks_exact(3)
        .filter_map(|triple| match triple {
            [Value::Integer(index), Value::String(name), value] => Some(Slot {
                index: *index,
                name: name.to_string_lossy(),
                value: value.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// True for the names Lua gives its own temporaries (`(temporary)`, `(for
/// state)`, `(C temporary)`, `(vararg)`).
fn is_temporary(name: &str) -> bool {
    name.starts_with('(')
}

/// Pushes `index, name, value` for each slot `get` finds (it pushes the value
/// and gives the name, null past the last slot), from slot 1 on, while the
/// stack has room.
///
/// # Safety
/// `state` is the running thread; `get` is one of Lua's slot readers on it.
unsafe fn push_slots(state: *mut ffi::lua_State, get: impl Fn(c_int) -> *const c_char) {
    let mut index: c_int = 1;
    while ffi::lua_checkstack(state, 4) != 0 {
        let name = get(index);
        if name.is_null() {
            break;
        }
        ffi::lua_pushinteger(state, ffi::lua_Integer::from(index));
        ffi::lua_pushstring(state, name);
        ffi::lua_rotate(state, -3, 2);
        index += 1;
    }
}

/// The active locals of the frame at `level`, in declaration order (a name may
/// repeat: the later one shadows the earlier); Lua's temporaries left out.
pub fn locals(lua: &Lua, level: usize) -> Vec<Slot> {
    let Some(level) = level_of(level) else {
        return Vec::new();
    };
    // SAFETY: the closure only reads the running thread's stack through Lua's
    // debug API and pushes the values it finds, with the stack space checked.
    let values = unsafe {
        lua.exec_raw::<MultiValue>((), |state| {
            let mut ar: ffi::lua_Debug = std::mem::zeroed();
            if ffi::lua_getstack(state, level, &mut ar) == 0 {
                return;
            }
            push_slots(state, |index| ffi::lua_getlocal(state, &ar, index));
        })
    };
    slots(values.unwrap_or_default())
        .into_iter()
        .filter(|slot| !is_temporary(&slot.name))
        .collect()
}

/// The upvalues of the function of the frame at `level`, in Lua's order
/// (without `_ENV`, the globals every chunk reaches).
pub fn upvalues(lua: &Lua, level: usize) -> Vec<Slot> {
    let Some(level) = level_of(level) else {
        return Vec::new();
    };
    // SAFETY: as in `locals`; the frame's function is pushed, read and removed.
    let values = unsafe {
        lua.exec_raw::<MultiValue>((), |state| {
            let mut ar: ffi::lua_Debug = std::mem::zeroed();
            if ffi::lua_getstack(state, level, &mut ar) == 0 || ffi::lua_checkstack(state, 4) == 0 {
                return;
            }
            if ffi::lua_getinfo(state, c"f".as_ptr(), &mut ar) == 0 {
                return;
            }
            let function = ffi::lua_gettop(state);
            push_slots(state, |index| ffi::lua_getupvalue(state, function, index));
            ffi::lua_remove(state, function);
        })
    };
    slots(values.unwrap_or_default())
        .into_iter()
        .filter(|slot| !slot.name.is_empty() && slot.name != "_ENV" && !is_temporary(&slot.name))
        .collect()
}

/// Which slot of a frame to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// A local.
    Local,
    /// An upvalue of the frame's function.
    Upvalue,
}

/// Sets the slot `index` of the frame at `level` to `value`; false when the
/// frame or the slot does not exist.
pub fn set_slot(lua: &Lua, level: usize, kind: SlotKind, index: i64, value: Value) -> bool {
    let (Some(level), Ok(index)) = (level_of(level), c_int::try_from(index)) else {
        return false;
    };
    // SAFETY: the value is the closure's one argument (stack index 1); Lua's debug
    // API pops it into the slot. The result is pushed as a boolean.
    let done = unsafe {
        lua.exec_raw::<bool>(value, |state| {
            let mut ar: ffi::lua_Debug = std::mem::zeroed();
            let mut set = false;
            if ffi::lua_getstack(state, level, &mut ar) != 0 && ffi::lua_checkstack(state, 3) != 0 {
                match kind {
                    SlotKind::Local => {
                        ffi::lua_pushvalue(state, 1);
                        let name = ffi::lua_setlocal(state, &ar, index);
                        if name.is_null() {
                            ffi::lua_pop(state, 1);
                        } else {
                            set = true;
                        }
                    }
                    SlotKind::Upvalue => {
                        if ffi::lua_getinfo(state, c"f".as_ptr(), &mut ar) != 0 {
                            let function = ffi::lua_gettop(state);
                            ffi::lua_pushvalue(state, 1);
                            let name = ffi::lua_setupvalue(state, function, index);
                            if name.is_null() {
                                ffi::lua_pop(state, 1);
                            } else {
                                set = true;
                            }
                            ffi::lua_pop(state, 1);
                        }
                    }
                }
            }
            ffi::lua_settop(state, 0);
            ffi::lua_pushboolean(state, c_int::from(set));
        })
    };
    done.unwrap_or(false)
}

/// How many frames the running thread's stack holds.
pub fn depth(lua: &Lua) -> usize {
    // SAFETY: counts the levels `lua_getstack` accepts; pushes one integer.
    let counted = unsafe {
        lua.exec_raw::<i64>((), |state| {
            let mut ar: ffi::lua_Debug = std::mem::zeroed();
            let mut level: c_int = RAW_OFFSET;
            while ffi::lua_getstack(state, level, &mut ar) != 0 {
                level += 1;
            }
            ffi::lua_pushinteger(state, ffi::lua_Integer::from(level - RAW_OFFSET));
        })
    };
    counted
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0)
}

/// Turns line events on or off for the running thread, keeping its hook and
/// its other events.
pub fn set_line_events(lua: &Lua, on: bool) {
    // SAFETY: reads the running thread's hook settings and sets them again with
    // the line event changed; the stack is left as it was.
    let _ = unsafe {
        lua.exec_raw::<()>((), |state| {
            let hook = ffi::lua_gethook(state);
            if hook.is_none() {
                return;
            }
            let mask = ffi::lua_gethookmask(state);
            let lines = mask & ffi::LUA_MASKLINE != 0;
            if lines != on {
                let mask = if on {
                    mask | ffi::LUA_MASKLINE
                } else {
                    mask & !ffi::LUA_MASKLINE
                };
                ffi::lua_sethook(state, hook, mask, ffi::lua_gethookcount(state));
            }
        })
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{HookTriggers, VmState};
    use std::sync::{Arc, Mutex};

    /// Runs `code` (chunk `=b0`) and, at its line `line`, calls `probe`.
    fn at_line(code: &str, line: usize, probe: impl Fn(&Lua) + Send + 'static) {
        let lua = Lua::new();
        let probe = Mutex::new(Some(probe));
        lua.set_hook(HookTriggers::EVERY_LINE, move |lua, debug| {
            if debug.current_line() == Some(line) {
                if let Some(probe) = probe.lock().unwrap().take() {
                    probe(lua);
                }
            }
            Ok(VmState::Continue)
        })
        .unwrap();
        lua.load(code).set_name("=b0").exec().unwrap();
    }

    #[test]
    fn a_hooked_frame_shows_its_locals_and_upvalues_and_takes_new_values() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let out = seen.clone();
        let code = "local up = 10\nlocal function f(a)\n  local b = a + up\n  for i = 1, 1 do\n    local c = b\n    return c\n  end\nend\nresult = f(5)\n";
        at_line(code, 5, move |lua| {
            let names: Vec<(String, String)> = locals(lua, 0)
                .into_iter()
                .map(|s| (s.name, format!("{:?}", s.value)))
                .collect();
            let ups: Vec<String> = upvalues(lua, 0).into_iter().map(|s| s.name).collect();
            let b = locals(lua, 0).into_iter().find(|s| s.name == "b").unwrap();
            assert!(set_slot(
                lua,
                0,
                SlotKind::Local,
                b.index,
                Value::Integer(100)
            ));
            let up = upvalues(lua, 0)
                .into_iter()
                .find(|s| s.name == "up")
                .unwrap();
            assert!(set_slot(
                lua,
                0,
                SlotKind::Upvalue,
                up.index,
                Value::Integer(1)
            ));
            assert!(!set_slot(lua, 40, SlotKind::Local, 1, Value::Nil));
            let outer = depth(lua);
            out.lock().unwrap().push((names, ups, outer));
        });
        let (names, ups, depth) = seen.lock().unwrap().pop().unwrap();
        assert_eq!(
            names,
            [
                ("a".to_owned(), "Integer(5)".to_owned()),
                ("b".to_owned(), "Integer(15)".to_owned()),
                ("i".to_owned(), "Integer(1)".to_owned()),
            ]
        );
        assert_eq!(ups, ["up"]);
        assert_eq!(depth, 2, "f and the chunk");
    }

    #[test]
    fn set_values_are_seen_by_the_running_code() {
        let lua_result = Arc::new(Mutex::new(None));
        let lua = Lua::new();
        lua.set_hook(HookTriggers::EVERY_LINE, move |lua, debug| {
            if debug.current_line() == Some(2) {
                let a = locals(lua, 0).into_iter().find(|s| s.name == "a").unwrap();
                set_slot(lua, 0, SlotKind::Local, a.index, Value::Integer(41));
            }
            Ok(VmState::Continue)
        })
        .unwrap();
        let value: i64 = lua
            .load("local a = 1\nreturn a + 1")
            .set_name("=b0")
            .eval()
            .unwrap();
        *lua_result.lock().unwrap() = Some(value);
        assert_eq!(*lua_result.lock().unwrap(), Some(42));
    }
}
