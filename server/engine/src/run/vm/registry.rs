//! The names under which a sandboxed VM keeps the engine's own values in its Lua
//! registry (set by [`super::sandbox::new_lua`]).

/// The function that runs one block under the VM's `xpcall`.
pub(super) const DRIVER_KEY: &str = "promptforge.driver";
/// The VM's original `tostring`.
pub(super) const TOSTRING_KEY: &str = "promptforge.tostring";
/// The VM's `pcall` (which never catches a jump, a limit or a cancellation).
pub(super) const PCALL_KEY: &str = "promptforge.pcall";
/// The VM's original `error`.
pub(super) const ERROR_KEY: &str = "promptforge.error";
/// The VM's original `xpcall` (the debugger finds `pcall`s on a stack by it).
pub(super) const RAW_XPCALL_KEY: &str = "promptforge.raw_xpcall";
