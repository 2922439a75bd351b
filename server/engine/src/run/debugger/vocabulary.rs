//! The debugger's vocabulary (the debugger issue): places, stops, steps, the
//! kinds of chain, frames, scopes and variables, the questions a paused chain
//! answers, and the two traits the rest of the engine and the front end fill in
//! (the Run scope of a section, the listener of stops and threads).

use std::sync::Arc;

use mlua::Lua;

use crate::run::location::SectionPath;
use crate::store::Store;

/// A place in a prompt's Lua: the block (its index in `Document::lua_blocks`)
/// and the 1-based line in the block's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockLine {
    /// The block's index in `Document::lua_blocks`.
    pub block: usize,
    /// The 1-based line in the block's code.
    pub line: u32,
}

/// Why a chain stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A line breakpoint.
    Breakpoint,
    /// A step ended.
    Step,
    /// The client asked for a pause.
    Pause,
    /// The launch asked to stop on entry.
    Entry,
    /// An error was raised (an exception filter).
    Exception,
    /// A suspending call named by a function breakpoint.
    Function,
}

impl StopReason {
    /// The reason as DAP's `stopped` event names it.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Breakpoint => "breakpoint",
            StopReason::Step => "step",
            StopReason::Pause => "pause",
            StopReason::Entry => "entry",
            StopReason::Exception => "exception",
            StopReason::Function => "function breakpoint",
        }
    }
}

/// A step the client asks of a paused chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// `next`: the next line of this function or of one that called it.
    Over,
    /// `stepIn`: the next line anywhere in this chain, or in a chain it starts.
    Into,
    /// `stepOut`: the next line of a function that called this one.
    Out,
}

/// What started a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainKind {
    /// The main walk.
    Walk,
    /// A `call` chain.
    Call,
    /// A fanout arm, with its 1-based index.
    Arm(usize),
    /// A task, with its id.
    Task(String),
}

impl ChainKind {
    /// The chain's kind as people read it: `walk`, `call`, `fanout arm N`, `task ID`.
    pub fn describe(&self) -> String {
        match self {
            ChainKind::Walk => "walk".to_owned(),
            ChainKind::Call => "call".to_owned(),
            ChainKind::Arm(index) => format!("fanout arm {index}"),
            ChainKind::Task(id) => format!("task {id}"),
        }
    }
}

/// Where a frame is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FramePlace {
    /// A line of a prompt block.
    Block(BlockLine),
    /// The entry of a section (its heading).
    Section(SectionPath),
}

/// One frame of a stopped chain's stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The function's name (`lua block 2` for a block's own code).
    pub name: String,
    /// Where it is.
    pub place: FramePlace,
    /// The level on the paused VM's Lua stack, for the frames whose locals can
    /// be read; None for a section entry and for a frame of a caller.
    pub level: Option<usize>,
}

/// Why and where a chain stopped, as the front end tells the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// Why.
    pub reason: StopReason,
    /// For an exception stop: the error's kind (`lua` for a plain error) and
    /// its message.
    pub exception: Option<(String, String)>,
}

/// A scope of a frame: its name and the handle that lists its variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeInfo {
    /// `Locals`, `Upvalues` or `Run`.
    pub name: String,
    /// The handle of its variables.
    pub handle: u32,
}

/// A variable as the client shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name (a key, an index in brackets, a local's name).
    pub name: String,
    /// Its value as text (a long string cut, with its full length).
    pub value: String,
    /// Its type (`string`, `table`, ...).
    pub type_name: String,
    /// The handle that lists its children; 0 when it has none.
    pub handle: u32,
}

/// A question to a paused chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Its stack, innermost first.
    Frames,
    /// The scopes of one frame (an index into the stack).
    Scopes {
        /// The frame's index.
        frame: usize,
    },
    /// The children of a handle.
    Variables {
        /// A scope's or a variable's handle.
        handle: u32,
    },
    /// Runs Lua in a frame (the top one when None) and gives its value.
    Evaluate {
        /// The frame's index.
        frame: Option<usize>,
        /// A Lua expression, or statements.
        expression: String,
        /// True to give a string whole (copying, the console).
        whole: bool,
    },
    /// Sets a variable of a handle (a local, an upvalue, a field under `var`)
    /// to the value of a Lua expression.
    SetVariable {
        /// The handle of its container.
        handle: u32,
        /// Its name as the client shows it.
        name: String,
        /// A Lua expression.
        value: String,
    },
}

/// A paused chain's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The stack.
    Frames(Vec<Frame>),
    /// A frame's scopes.
    Scopes(Vec<ScopeInfo>),
    /// A handle's children.
    Variables(Vec<Variable>),
    /// An evaluated or set value.
    Value(Variable),
    /// Why the question has no answer.
    Failed(String),
}

/// A value the Run scope shows.
#[derive(Debug, Clone)]
pub enum RunValue {
    /// A Lua value of the paused VM (its tables expand on demand).
    Lua(mlua::Value),
    /// Data the host keeps.
    Json(serde_json::Value),
    /// Named entries in the order shown, with a summary for the parent.
    Entries(String, Vec<(String, RunValue)>),
    /// The run's store: its paths, each expandable to its text.
    Store(Arc<Store>),
}

/// How the Run scope's owner shows an engine value Lua holds as userdata.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The value as text.
    pub text: String,
    /// Its type as the client shows it.
    pub type_name: String,
    /// What it expands to.
    pub children: Option<RunValue>,
}

/// The Run scope of a paused section: what the run holds beyond Lua's locals.
/// The layer that knows scopes and conversations implements it.
pub trait SectionView: Send + Sync {
    /// The Run scope's entries, in the order shown.
    fn run_scope(&self, lua: &Lua) -> Vec<(String, RunValue)>;
    /// How an engine value held as userdata (a message list, a Tool object, a
    /// model handle, an error value) is shown; None for another.
    fn userdata(&self, lua: &Lua, value: &mlua::AnyUserData) -> Option<Shown>;
}

/// What the debugger's front end hears.
pub trait DebugListener: Send + Sync {
    /// A chain stopped.
    fn stopped(&self, thread: i64, stop: &Stop);
    /// A chain started (`started`) or ended.
    fn thread(&self, thread: i64, started: bool);
    /// A logpoint's message.
    fn output(&self, text: &str);
}
