//! Test support, behind the `testing` feature (never in a release build): the
//! helpers the engine's unit tests, its integration tests and benches, and the
//! workspace's end-to-end suites share.
//!
//! - [`prompts`]: prompt texts ([`prompt`], [`lua`], [`section`], ...).
//! - [`runs`]: the runtime, prepare and runs ([`run`], [`run_on`], [`result`], ...).
//! - [`tools`]: [`TestTool`] and [`FixedPlugin`].
//! - [`hosts`]: the scripted model ([`scripted`], [`Recorder`]) and [`TestHost`].
//! - [`http`]: the loopback HTTP test server.
//!
//! Enable it from `[dev-dependencies]`:
//! `promptforge-engine = { workspace = true, features = ["testing"] }`.

pub mod hosts;
pub mod http;
pub mod prompts;
pub mod runs;
pub mod tools;

pub use hosts::*;
pub use prompts::*;
pub use runs::*;
pub use tools::*;
