//! The line hook of a VM with a debugger attached (the debugger issue): a VM
//! watches its lines only when the run's debugger has breakpoints when the VM
//! is created, so a run without breakpoints keeps the instruction hook alone.

use mlua::debug::Debug;
use mlua::debug::HookTriggers;
use mlua::{Lua, VmState};

use super::control::{Abort, VmControl};
use crate::error::EngineError;
use crate::run::context::debugger::{BlockLine, Stop};

/// How many frames a stop reports at most.
const MAX_FRAMES: usize = 64;

/// The hook's triggers: every `interval` instructions, and every line when a
/// debugger with breakpoints is attached.
pub fn triggers(control: &VmControl, interval: u32) -> HookTriggers {
    let triggers = HookTriggers::new().every_nth_instruction(interval);
    match &control.debug {
        Some((debugger, _)) if debugger.has_breakpoints() => triggers.every_line(),
        _ => triggers,
    }
}

/// The block and line of a frame whose function comes from a prompt block
/// (chunk name `=b{index}`).
fn block_line(debug: &Debug) -> Option<BlockLine> {
    let source = debug.source().source?;
    let block = source.strip_prefix("=b")?.parse::<usize>().ok()?;
    let line = u32::try_from(debug.current_line()?).ok()?;
    Some(BlockLine { block, line })
}

/// A line event: at a breakpoint, pauses the chain until the debugger resumes
/// it; a cancel while paused ends the run as cancelled.
pub fn on_line(lua: &Lua, debug: &Debug, control: &VmControl) -> mlua::Result<VmState> {
    let Some((debugger, section)) = &control.debug else {
        return Ok(VmState::Continue);
    };
    let Some(here) = block_line(debug) else {
        return Ok(VmState::Continue);
    };
    if !debugger.is_breakpoint(here) {
        return Ok(VmState::Continue);
    }
    let mut frames = vec![here];
    for level in 1..MAX_FRAMES {
        match lua.inspect_stack(level, block_line) {
            Some(Some(place)) => frames.push(place),
            Some(None) => {}
            None => break,
        }
    }
    let stop = Stop {
        frames,
        section: section.clone(),
    };
    if debugger.pause(stop, &control.cancel) {
        Ok(VmState::Continue)
    } else {
        Err(control.abort(Abort::Error(EngineError::cancelled())))
    }
}
