//! Lua functions the engine builds in a VM: chunks compiled once per process, lazy
//! and re-raising wrappers, and calls through the VM's own `pcall` and `tostring`.

use std::sync::OnceLock;

use mlua::{chunk::ChunkMode, Function, Lua, MultiValue, Value};

use super::registry::{ERROR_KEY, PCALL_KEY, TOSTRING_KEY};

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
