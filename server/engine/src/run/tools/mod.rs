//! The Tools chapter's run-time half: each section's scope and call counts, local
//! tools, script and model tool calls, Tool objects, and the Engine's task tools
//! (`language.md` §8). The state they work on is `run::context::tools`; the Lua
//! table is `run::api::tools`.

pub mod calls;
pub mod dispatch;
pub mod local;
pub mod object;
pub mod schema;
pub mod scope;
pub mod tasks;

/// The four names of the tools the Engine itself offers the model (defined once,
/// with the other names of the Lua API, in `promptforge_syntax::api_names`). They
/// take precedence over any alias of the same name: a model call to one goes to the
/// Engine's tool, and a script `tools.call` to one fails with `unbound_tool`.
pub use promptforge_syntax::api_names::{is_engine_tool, ENGINE_TOOLS};
