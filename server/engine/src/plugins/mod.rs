//! The Plugins the Host registers: MCP servers (`host.md` §3) and the first-party ones.

pub mod mcp;
pub mod web;
