//! The debugger's places in a VM (the debugger issue): the line and count hooks
//! (breakpoints with their conditions, hit counts and logpoints, steps, pauses),
//! the top of a suspending call (function breakpoints), and a raised error
//! (exception filters). A stop pauses the chain on its own thread, where an
//! [`Inspector`] answers the front end until it is resumed.
//!
//! A VM watches its lines only while the debugger wants them (a breakpoint set,
//! a step or a pause pending); without that it pays one flag load per count
//! event, and a run without a debugger pays nothing.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use mlua::debug::{Debug, HookTriggers};
use mlua::{Function, Lua, Value, VmState};

use super::control::{Abort, VmControl, VmDebug};
use super::errors::{engine_error_in, error_message, split_position, usage_error};
use super::eval::{evaluate, truthy};
use super::frames;
use super::inspect::{log_message, Inspector};
use super::registry::{DRIVER_KEY, RAW_XPCALL_KEY};
use crate::error::{EngineError, ErrorKind};
use crate::run::debugger::{BlockLine, Frame, FramePlace, StepKind, Stop, StopReason};

/// How many frames a stop reports at most.
const MAX_FRAMES: usize = 64;

/// How much deeper than any stack a local tool handler's frames count, so a
/// step over a call that runs a handler does not stop inside it.
const HANDLER_DEPTH: usize = 1000;

/// The VM's hook function, kept so that the triggers can change while it runs.
pub type HookFunction = Arc<dyn Fn(&Lua, &Debug) -> mlua::Result<VmState> + Send + Sync>;

/// Where a VM keeps its hook function and its instruction interval (Lua's app
/// data), so that its triggers can change while it runs.
pub(super) struct KeptHook {
    /// The hook function.
    pub function: HookFunction,
    /// Instructions between two count events.
    pub interval: u32,
}

/// The hook's triggers: every `interval` instructions, and every line when
/// `lines`.
pub fn triggers(interval: u32, lines: bool) -> HookTriggers {
    let triggers = HookTriggers::new().every_nth_instruction(interval);
    if lines {
        triggers.every_line()
    } else {
        triggers
    }
}

/// Makes the VM watch its lines (or stop watching them) as the debugger wants
/// now: the threads it creates from now on, and the running one.
fn sync_lines(lua: &Lua, vm: &VmDebug) -> mlua::Result<()> {
    let want = vm.debugger.wants_lines(&vm.blocks);
    if vm.lines_on.swap(want, Ordering::SeqCst) != want {
        let kept = lua
            .app_data_ref::<KeptHook>()
            .map(|k| (k.function.clone(), k.interval));
        if let Some((hook, interval)) = kept {
            lua.set_global_hook(triggers(interval, want), move |lua, debug| hook(lua, debug))?;
        }
    } else {
        frames::set_line_events(lua, want);
    }
    Ok(())
}

/// The block and line of a frame whose function comes from a prompt block
/// (chunk name `=b{index}`).
fn block_line(debug: &Debug) -> Option<BlockLine> {
    let source = debug.source().source?;
    let block = source.strip_prefix("=b")?.parse::<usize>().ok()?;
    let line = u32::try_from(debug.current_line()?).ok()?;
    Some(BlockLine { block, line })
}

/// The frames of the running thread that are in prompt blocks, innermost first.
fn live_frames(lua: &Lua) -> Vec<Frame> {
    let mut frames = Vec::new();
    for level in 0..MAX_FRAMES {
        let Some(found) = lua.inspect_stack(level, |debug| {
            let place = block_line(debug)?;
            let name = if debug.source().what == "main" {
                format!("lua block {}", place.block + 1)
            } else {
                debug
                    .names()
                    .name
                    .map_or_else(|| "function".to_owned(), |n| n.into_owned())
            };
            Some((place, name))
        }) else {
            break;
        };
        if let Some((place, name)) = found {
            frames.push(Frame {
                name,
                place: FramePlace::Block(place),
                level: Some(level),
            });
        }
    }
    frames
}

/// Every frame of a stop, innermost first: the running thread's, those of the
/// VM's threads waiting for it, the section's entry, then the chain's callers;
/// and how many of them are this VM's.
fn stop_frames(lua: &Lua, vm: &VmDebug) -> (Vec<Frame>, usize) {
    let mut frames = live_frames(lua);
    frames.extend(vm.waiting());
    frames.push(Frame {
        name: vm.heading.clone(),
        place: FramePlace::Section(vm.section.clone()),
        level: None,
    });
    let own = frames.len();
    frames.extend(vm.caller_frames.iter().cloned());
    (frames, own)
}

/// The frames a chain started here shows below its own, and the depth to come
/// back to: this VM's frames as they are now (not inspectable from there).
pub fn frames_for_chain(lua: &Lua, control: &VmControl) -> (Vec<Frame>, usize) {
    let Some(vm) = &control.debug else {
        return (Vec::new(), 0);
    };
    let (frames, _) = stop_frames(lua, vm);
    (shown_only(frames), depth(lua, control))
}

/// The frames of a thread of this VM that waits for a local tool handler it
/// called, kept while the handler runs (see [`VmDebug::waiting`]).
pub fn waiting_frames(lua: &Lua) -> Vec<Frame> {
    shown_only(live_frames(lua))
}

/// `frames` as another thread shows them: without Lua levels to inspect.
fn shown_only(mut frames: Vec<Frame>) -> Vec<Frame> {
    for frame in &mut frames {
        frame.level = None;
    }
    frames
}

/// The stack depth steps compare: the running thread's frames, and deeper
/// still inside a local tool handler.
fn depth(lua: &Lua, control: &VmControl) -> usize {
    frames::depth(lua) + control.handlers.load(Ordering::SeqCst) * HANDLER_DEPTH
}

/// True when a `pcall` (other than the block's own driver) is on the running
/// thread's stack: an error raised here would be caught.
pub fn inside_pcall(lua: &Lua) -> bool {
    let (Ok(raw), Ok(driver)) = (
        lua.named_registry_value::<Function>(RAW_XPCALL_KEY),
        lua.named_registry_value::<Function>(DRIVER_KEY),
    ) else {
        return false;
    };
    let frame_at = |level: usize| lua.inspect_stack(level, |d| (d.function(), d.is_tail_call()));
    let mut level = 0;
    while let Some((function, tail)) = frame_at(level) {
        if function == raw && !tail {
            let called_by_driver = frame_at(level + 1).is_some_and(|(caller, _)| caller == driver);
            if !called_by_driver {
                return true;
            }
        }
        level += 1;
    }
    false
}

/// Pauses the chain here until the debugger resumes it; a cancel while paused
/// ends the VM as cancelled.
fn pause(lua: &Lua, control: &VmControl, vm: &VmDebug, stop: Stop) -> mlua::Result<()> {
    let at = depth(lua, control);
    let (frames, own) = stop_frames(lua, vm);
    let mut inspector = Inspector::new(lua, (control, vm), frames, own);
    let resumed = vm.debugger.stop(
        vm.thread,
        at,
        stop,
        &mut |query| inspector.answer(query),
        &control.cancel,
    );
    if !resumed {
        return Err(control.abort(Abort::Error(EngineError::cancelled())));
    }
    sync_lines(lua, vm)
}

fn plain(reason: StopReason) -> Stop {
    Stop {
        reason,
        exception: None,
    }
}

/// A line event: a wanted stop, a step that ends here, or a breakpoint (its
/// condition true, its hit count reached; a logpoint logs and goes on).
pub fn on_line(lua: &Lua, debug: &Debug, control: &VmControl) -> mlua::Result<VmState> {
    let Some(vm) = &control.debug else {
        return Ok(VmState::Continue);
    };
    if vm.evaluating.load(Ordering::SeqCst) {
        // Nothing stops inside an evaluation: its thread stops watching lines
        // rather than pay a hook call per line (a thread of the run that it
        // resumed watches them again at its next count event, see `on_count`).
        frames::set_line_events(lua, false);
        return Ok(VmState::Continue);
    }
    let debugger = &vm.debugger;
    if !debugger.lines_wanted() {
        sync_lines(lua, vm)?;
        return Ok(VmState::Continue);
    }
    // The hot path: no stop pending and no breakpoint on this line of any block.
    let attention = debugger.attention();
    let line = debug
        .current_line()
        .and_then(|l| u32::try_from(l).ok())
        .unwrap_or(0);
    if !attention && !debugger.may_break_at(line) {
        return Ok(VmState::Continue);
    }
    let Some(here) = block_line(debug) else {
        return Ok(VmState::Continue);
    };
    // The shared library replays in every VM: it stops in the H1 pass only.
    if control.shared_loading.load(Ordering::SeqCst) && !vm.is_h1() {
        return Ok(VmState::Continue);
    }
    if let Some(reason) = debugger.wanted(vm.thread) {
        pause(lua, control, vm, plain(reason))?;
        return Ok(VmState::Continue);
    }
    if let Some((kind, from)) = debugger.step(vm.thread) {
        let now = depth(lua, control);
        let done = match kind {
            StepKind::Into => true,
            StepKind::Over => now <= from,
            StepKind::Out => now < from,
        };
        if done {
            pause(lua, control, vm, plain(StopReason::Step))?;
            return Ok(VmState::Continue);
        }
    }
    let Some(breakpoint) = debugger.line_breakpoint(here) else {
        return Ok(VmState::Continue);
    };
    if let Some(condition) = &breakpoint.condition {
        match evaluate(lua, (control, vm), Some(0), condition) {
            Ok(value) if !truthy(&value) => return Ok(VmState::Continue),
            Ok(_) => {}
            Err(message) => debugger.output(&format!(
                "the breakpoint condition {condition:?} failed: {message}\n"
            )),
        }
    }
    let hits = debugger.count_hit(here);
    if breakpoint.hit_condition.is_some_and(|h| !h.stops_at(hits)) {
        return Ok(VmState::Continue);
    }
    if let Some(message) = &breakpoint.log_message {
        let text = log_message(lua, (control, vm), Some(0), message);
        debugger.output(&format!("{text}\n"));
        return Ok(VmState::Continue);
    }
    pause(lua, control, vm, plain(StopReason::Breakpoint))?;
    Ok(VmState::Continue)
}

/// A count event of a debugged VM (the budget is counted before): a pause
/// asked of a chain that runs without reaching a new line stops here, and the
/// VM's line events follow the debugger's wish.
pub fn on_count(lua: &Lua, control: &VmControl, vm: &VmDebug) -> mlua::Result<()> {
    let debugger = &vm.debugger;
    if debugger.lines_wanted() || vm.lines_on.load(Ordering::Relaxed) {
        sync_lines(lua, vm)?;
    }
    if debugger.attention() && debugger.wanted(vm.thread) == Some(StopReason::Pause) {
        pause(lua, control, vm, plain(StopReason::Pause))?;
    }
    Ok(())
}

/// The top of the suspending call `name` (`tools.call`, `models.loop`,
/// `tool:ALIAS`, ...): refused while the debugger evaluates in the paused VM;
/// a function breakpoint on `name` stops here, before the call runs.
pub fn suspending_call(lua: &Lua, control: &VmControl, name: &str) -> mlua::Result<()> {
    let Some(vm) = &control.debug else {
        return Ok(());
    };
    if vm.evaluating.load(Ordering::SeqCst) {
        return Err(usage_error(format!(
            "{name} is not available while the run is paused"
        )));
    }
    if vm.debugger.function_breakpoint(name) {
        pause(lua, control, vm, plain(StopReason::Function))?;
    }
    Ok(())
}

/// The kind and message of a raised error value, as an exception stop shows it
/// (without Lua's `b{block}:{line}: ` position: the stack shows where).
fn exception_of(lua: &Lua, error: &Value) -> (String, String) {
    let (kind, message) = raw_exception_of(lua, error);
    (kind, split_position(&message).0)
}

fn raw_exception_of(lua: &Lua, error: &Value) -> (String, String) {
    match error {
        Value::UserData(data) => match data.borrow::<EngineError>() {
            Ok(engine) => (engine.kind.as_str().to_owned(), engine.message.clone()),
            Err(_) => (
                "lua".to_owned(),
                super::functions::describe(lua, error.clone()),
            ),
        },
        Value::Error(inner) => match engine_error_in(inner) {
            Some(engine) => (engine.kind.as_str().to_owned(), engine.message),
            None => ("lua".to_owned(), error_message(inner)),
        },
        Value::String(text) => ("lua".to_owned(), text.to_string_lossy()),
        other => (
            "lua".to_owned(),
            super::functions::describe(lua, other.clone()),
        ),
    }
}

/// True for an error value a chain ended with, raised again in its caller: it
/// stopped where it was first raised.
fn is_chain_error(error: &Value) -> bool {
    match error {
        Value::Error(inner) => {
            engine_error_in(inner).is_some_and(|e| e.origin.is_some())
                || super::errors::is_chain_failure(inner)
        }
        Value::UserData(data) => data
            .borrow::<EngineError>()
            .is_ok_and(|e| e.origin.is_some()),
        _ => false,
    }
}

/// An error raised in a debugged VM, seen where it is raised (before Lua
/// unwinds) by a `pcall` (`caught`) or by the block's driver: stops when an
/// exception filter asks for it. Jumps and cancellations are not errors; a
/// limit passes through every `pcall` and stops at the driver.
pub fn on_raise(lua: &Lua, control: &VmControl, error: &Value, caught: bool) -> mlua::Result<()> {
    let Some(vm) = &control.debug else {
        return Ok(());
    };
    if vm.evaluating.load(Ordering::SeqCst) {
        return Ok(());
    }
    let filters = vm.debugger.exception_filters();
    if !filters.raised && !filters.uncaught {
        return Ok(());
    }
    let exception = match control.pending_abort() {
        Some(Abort::Jump(_)) => return Ok(()),
        Some(Abort::Error(error)) if error.kind == ErrorKind::Cancelled => return Ok(()),
        Some(Abort::Error(_)) if caught => return Ok(()),
        Some(Abort::Error(error)) => (error.kind.as_str().to_owned(), error.message),
        None if is_chain_error(error) => return Ok(()),
        None => exception_of(lua, error),
    };
    let uncaught = !caught && !vm.protected;
    if !(filters.raised || (filters.uncaught && uncaught)) {
        return Ok(());
    }
    let stop = Stop {
        reason: StopReason::Exception,
        exception: Some(exception),
    };
    pause(lua, control, vm, stop)
}
