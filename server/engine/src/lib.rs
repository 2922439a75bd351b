//! PromptForge engine: the Host and its configuration, the Harness (Plugins,
//! catalog, slots), prepare, and the run of a prompt (`language.md` §2–§7).

pub mod models;
