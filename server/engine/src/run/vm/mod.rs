//! One Lua VM: the sandbox of §3, the limits of §7 (memory ceiling, instruction
//! budget, cancellation between instructions), `pcall`/`xpcall` that never catch
//! a jump, a cancellation or a limit, and running one block to its outcome.
//!
//! The submodules never name this one; it re-exports what the layers above use.

pub mod block;
pub mod control;
mod debug_hook;
pub mod errors;
pub mod functions;
mod registry;
pub mod sandbox;

pub use block::{exec_block, scalar_result, BlockFailure};
pub use control::{charge_host_bytes, Abort, VmControl};
pub use errors::{engine_error_in, error_message, usage_error, value_error};
pub use functions::{
    describe, lazy_function, load_cached, protected_call, reraising, try_describe,
};
pub use sandbox::{new_lua, HOOK_INTERVAL};
