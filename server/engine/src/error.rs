//! Errors: the error values the engine raises in Lua (`kind`, `name`, `__tostring`)
//! and the run error a failed run ends with (`language.md` §3.3).

use std::fmt;

use mlua::{MetaMethod, UserData, UserDataFields, UserDataMethods};
use promptforge_syntax::ParseKind;

use crate::messages;

/// The kinds of the error values the engine raises in Lua.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A tool failed, or a tool loop reached its round cap.
    Tool,
    /// A script call to a name that is not bound.
    UnboundTool,
    /// A model call to a tool outside the round's scope.
    OutOfScopeTool,
    /// A model call failed.
    Model,
    /// A store operation failed.
    Store,
    /// `input.ask` with no operator.
    InputUnavailable,
    /// A limit of §7.
    Limit,
    /// The run was cancelled.
    Cancelled,
    /// A tool offered to the model whose schema cannot be built (Tools chapter,
    /// "Scope errors"): it fails the run, so no `pcall` catches it.
    Binding,
}

impl ErrorKind {
    /// The `kind` field as Lua reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Tool => "tool",
            ErrorKind::UnboundTool => "unbound_tool",
            ErrorKind::OutOfScopeTool => "out_of_scope_tool",
            ErrorKind::Model => "model",
            ErrorKind::Store => "store",
            ErrorKind::InputUnavailable => "input_unavailable",
            ErrorKind::Limit => "limit",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Binding => "binding",
        }
    }

    /// The run error kind an uncaught error value of this kind ends the run with.
    pub fn run_kind(self) -> RunErrorKind {
        match self {
            ErrorKind::Tool | ErrorKind::UnboundTool | ErrorKind::OutOfScopeTool => {
                RunErrorKind::Tool
            }
            ErrorKind::Model => RunErrorKind::Model,
            ErrorKind::Store => RunErrorKind::Store,
            ErrorKind::InputUnavailable => RunErrorKind::Input,
            ErrorKind::Limit => RunErrorKind::Limit,
            ErrorKind::Cancelled => RunErrorKind::Cancelled,
            ErrorKind::Binding => RunErrorKind::Binding,
        }
    }

    /// True for the kinds no `pcall` catches.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            ErrorKind::Limit | ErrorKind::Cancelled | ErrorKind::Binding
        )
    }
}

/// An error value raised in Lua: `err.kind`, `err.name`, `tostring(err)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    /// The kind.
    pub kind: ErrorKind,
    /// The tool name, for `unbound_tool` and `out_of_scope_tool`.
    pub name: Option<String>,
    /// The message `tostring` gives.
    pub message: String,
    /// Where in the prompt file it happened, when that is not where it is raised
    /// (the error a `call` chain or a fanout arm ended with).
    pub origin: Option<Position>,
}

impl EngineError {
    /// An error value without a name.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        EngineError {
            kind,
            name: None,
            message: message.into(),
            origin: None,
        }
    }

    /// An error value with a `name` field.
    pub fn named(kind: ErrorKind, name: impl Into<String>, message: impl Into<String>) -> Self {
        EngineError {
            kind,
            name: Some(name.into()),
            message: message.into(),
            origin: None,
        }
    }

    /// The cancellation error value.
    pub fn cancelled() -> Self {
        EngineError::new(ErrorKind::Cancelled, messages::CANCELLED)
    }

    /// A `limit` error value.
    pub fn limit(message: impl Into<String>) -> Self {
        EngineError::new(ErrorKind::Limit, message)
    }

    /// The run error this value ends a run with when uncaught.
    pub fn into_run_error(self) -> RunError {
        RunError::new(self.kind.run_kind(), self.message).at(self.origin)
    }

    /// The same value, remembering where it first happened.
    pub fn with_origin(mut self, origin: Option<Position>) -> Self {
        self.origin = origin;
        self
    }
}

impl UserData for EngineError {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("kind", |_, this| Ok(this.kind.as_str()));
        fields.add_field_method_get("name", |_, this| Ok(this.name.clone()));
        fields.add_field_method_get("message", |_, this| Ok(this.message.clone()));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(this.message.clone()));
    }
}

/// The kinds of a run error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunErrorKind {
    /// The prompt did not parse; the parse kind says why.
    Parse(ParseKind),
    /// Prepare could not satisfy the prompt's Plugins and slots.
    RequirementsUnmet,
    /// A tool or model could not be bound.
    Binding,
    /// A tool failed (or an unbound or out-of-scope call, or the round cap).
    Tool,
    /// A model call failed.
    Model,
    /// A store operation failed.
    Store,
    /// `input.ask` had no one to ask.
    Input,
    /// A Lua error.
    Lua,
    /// A limit was reached.
    Limit,
    /// The run was cancelled.
    Cancelled,
    /// A bug in the engine.
    Internal,
}

impl RunErrorKind {
    /// The kind as printed in `error[Kind]`: the parse kind for parse errors.
    pub fn as_str(self) -> &'static str {
        match self {
            RunErrorKind::Parse(kind) => kind.as_str(),
            RunErrorKind::RequirementsUnmet => "RequirementsUnmet",
            RunErrorKind::Binding => "Binding",
            RunErrorKind::Tool => "Tool",
            RunErrorKind::Model => "Model",
            RunErrorKind::Store => "Store",
            RunErrorKind::Input => "Input",
            RunErrorKind::Lua => "Lua",
            RunErrorKind::Limit => "Limit",
            RunErrorKind::Cancelled => "Cancelled",
            RunErrorKind::Internal => "Internal",
        }
    }
}

impl fmt::Display for RunErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A 1-based line and column in the prompt file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

/// A plain Lua error that a `call` chain or a fanout arm ended with, raised again
/// in the caller: Lua code sees its message (a string); an uncaught one keeps the
/// place it first happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ChainFailure {
    /// The message.
    pub message: String,
    /// Where in the prompt file it happened.
    pub position: Option<Position>,
}

/// What a failed run (or a refused prepare) ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// The kind.
    pub kind: RunErrorKind,
    /// The message; it may span several lines (the RequirementsUnmet notice).
    pub message: String,
    /// Where in the prompt file, when there is a place.
    pub position: Option<Position>,
}

impl RunError {
    /// A run error without a position.
    pub fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        RunError {
            kind,
            message: message.into(),
            position: None,
        }
    }

    /// The same error at a 1-based line, column 1 (Lua errors name lines only).
    pub fn at_line(mut self, line: u32) -> Self {
        self.position = Some(Position { line, column: 1 });
        self
    }

    /// The same error at a position.
    pub fn at(mut self, position: Option<Position>) -> Self {
        self.position = position;
        self
    }

    /// The cancelled run's error.
    pub fn cancelled() -> Self {
        RunError::new(RunErrorKind::Cancelled, messages::CANCELLED)
    }

    /// An engine bug, reported instead of a panic.
    pub fn internal(message: impl Into<String>) -> Self {
        RunError::new(RunErrorKind::Internal, message)
    }

    /// The same error raised in the H1 pass: its message starts `H1 pass: `.
    pub fn in_h1_pass(mut self) -> Self {
        self.message = format!("{}{}", messages::H1_PASS_PREFIX, self.message);
        self
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}]: {}", self.kind, self.message)
    }
}

impl std::error::Error for RunError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_kind_maps_to_its_run_kind() {
        let cases = [
            (ErrorKind::Tool, "tool", RunErrorKind::Tool),
            (ErrorKind::UnboundTool, "unbound_tool", RunErrorKind::Tool),
            (
                ErrorKind::OutOfScopeTool,
                "out_of_scope_tool",
                RunErrorKind::Tool,
            ),
            (ErrorKind::Model, "model", RunErrorKind::Model),
            (ErrorKind::Store, "store", RunErrorKind::Store),
            (
                ErrorKind::InputUnavailable,
                "input_unavailable",
                RunErrorKind::Input,
            ),
            (ErrorKind::Limit, "limit", RunErrorKind::Limit),
            (ErrorKind::Cancelled, "cancelled", RunErrorKind::Cancelled),
        ];
        for (kind, name, run) in cases {
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.run_kind(), run);
        }
        assert!(ErrorKind::Limit.is_fatal() && ErrorKind::Cancelled.is_fatal());
        assert!(!ErrorKind::Tool.is_fatal());
    }

    #[test]
    fn error_values_read_from_lua() {
        let lua = mlua::Lua::new();
        let value = EngineError::named(ErrorKind::OutOfScopeTool, "fetch", "tool \"fetch\" ...");
        lua.globals().set("err", value).unwrap();
        let read: String = lua
            .load("return err.kind .. '|' .. err.name .. '|' .. tostring(err)")
            .eval()
            .unwrap();
        assert_eq!(read, "out_of_scope_tool|fetch|tool \"fetch\" ...");
        let nameless: bool = lua
            .load("err = ...; return err.name == nil")
            .call(EngineError::new(ErrorKind::Store, "x"))
            .unwrap();
        assert!(nameless);
    }

    #[test]
    fn h1_prefix_and_parse_kinds() {
        let error = RunError::new(RunErrorKind::Lua, "boom").in_h1_pass();
        assert_eq!(error.message, "H1 pass: boom");
        assert_eq!(
            RunErrorKind::Parse(ParseKind::Structure).as_str(),
            "Structure"
        );
    }
}
