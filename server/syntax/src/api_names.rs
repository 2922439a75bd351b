//! The names the Lua API gives a prompt, defined once: the globals of a section VM
//! (`language.md` §3.1 and Lua's own), the Engine's task tools and the parameter
//! types of `tools.add_local`. The engine builds its VMs from these lists, the
//! frontmatter reserves them, and the editor's hover and completion read them.

/// The globals `language.md` §3.1 gives every section VM.
pub const SECTION_GLOBALS: &[&str] = &[
    "args",
    "var",
    "sys",
    "store",
    "tools",
    "models",
    "messages",
    "log",
    "untrusted",
    "call",
    "jump",
    "fanout",
    "input",
    "item",
];

/// Lua's own globals that `language.md` §1 reserves (no alias or label may take them).
pub const LUA_GLOBALS: &[&str] = &[
    "_G",
    "_VERSION",
    "assert",
    "error",
    "getmetatable",
    "ipairs",
    "next",
    "pairs",
    "pcall",
    "print",
    "rawequal",
    "rawlen",
    "select",
    "setmetatable",
    "tonumber",
    "tostring",
    "type",
    "xpcall",
    "string",
    "table",
    "math",
    "utf8",
];

/// Lua's own globals the sandbox keeps that `language.md` §1 does not reserve: a
/// section VM has them too (an alias of one of these names shadows it).
pub const UNRESERVED_LUA_GLOBALS: &[&str] = &["coroutine", "rawget", "rawset", "warn"];

/// The globals `language.md` §3.1 gives only a fanout arm's VM.
pub const ARM_GLOBALS: &[&str] = &["item"];

/// The names of the Engine's own task tools (`language.md` §8): a model may call
/// them in a loop that allows tasks; `tools.call` never reaches them.
pub const ENGINE_TOOLS: [&str; 4] = ["task", "task_cancel", "task_status", "await_tasks"];

/// True for one of [`ENGINE_TOOLS`].
pub fn is_engine_tool(name: &str) -> bool {
    ENGINE_TOOLS.contains(&name)
}

/// The error kinds a run can end with, as printed in `error[Kind]` (`language.md`
/// §3.3): the parse kinds, then the run error kinds, each once. A test file's
/// `expect.error.kind` is one of them.
pub const RUN_ERROR_KINDS: [&str; 13] = [
    "Frontmatter",
    "Version",
    "Structure",
    "Lua",
    "RequirementsUnmet",
    "Binding",
    "Tool",
    "Model",
    "Store",
    "Input",
    "Limit",
    "Cancelled",
    "Internal",
];

/// The parameter types `tools.add_local` accepts.
pub const PARAM_TYPES: [&str; 4] = ["string", "integer", "number", "boolean"];
