//! PromptForge engine: the Host and its configuration, the Harness (Plugins,
//! catalog, slots), prepare, and the run of a prompt (`language.md` §2–§7).

pub mod atomic_file;
pub mod error;
pub mod harness;
pub mod host;
pub mod input;
pub mod messages;
pub mod models;
pub mod prepare;
pub mod prompt_tests;
pub mod requirements;
pub mod run;
pub mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod trace;
pub mod user_file;

pub use error::{EngineError, ErrorKind, Position, RunError, RunErrorKind};
pub use host::Host;
pub use prepare::{prepare, Prepared};
pub use run::{run, run_text, NoEvents, Outcome, RunEvents, RunOptions};
pub use store::Store;
