//! One Lua VM: the sandbox of §3, the limits of §7 (memory ceiling, instruction
//! budget, cancellation between instructions), `pcall`/`xpcall` that never catch
//! a jump, a cancellation or a limit, running one block to its outcome, and the
//! debugger's hooks, frames and inspection of a paused VM.
//!
//! The submodules never name this one; it re-exports what the layers above use.

pub mod block;
pub mod code_lines;
pub mod control;
pub mod debug_hook;
pub mod errors;
pub mod eval;
pub mod frames;
pub mod functions;
pub mod inspect;
pub mod patterns;
mod registry;
pub mod sandbox;
pub mod shown;

pub use block::{exec_block, scalar_result, BlockFailure};
pub use control::{charge_host_bytes, Abort, VmControl, VmDebug};
pub use debug_hook::{frames_for_chain, inside_pcall, suspending_call, waiting_frames};
pub use errors::{engine_error_in, error_message, usage_error, value_error};
pub use functions::{
    describe, lazy_function, load_cached, protected_call, reraising, try_describe,
};
pub use sandbox::{new_lua, HOOK_INTERVAL};
