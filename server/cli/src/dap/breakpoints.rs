//! `setBreakpoints`, `setFunctionBreakpoints` and `setExceptionBreakpoints`:
//! each breakpoint checked and answered (verified, or not with the reason), and
//! the ones that apply handed to the run's debugger.
//!
//! Line breakpoints are kept per source; only those of the launched prompt reach
//! the engine, bound to the next line with code of the `lua` block that holds
//! them, with their condition (a Lua expression that must compile), hit
//! condition and log message.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use promptforge_engine::run::debugger::function_name_problem;
use promptforge_engine::run::vm::eval::check_expression;
use promptforge_engine::run::{ExceptionFilters, HitCondition, LineBreakpoint};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::dap::program::Program;

/// Why a breakpoint in another file than the launched prompt is not verified.
pub const NOT_THE_PROGRAM: &str = "breakpoints stop only in the launched prompt";

/// The most breakpoints one request may set (`setBreakpoints` in one source,
/// `setFunctionBreakpoints`): a prompt has a few hundred lines of Lua at most,
/// and each breakpoint costs an answer (a million took 10 s and 3 GB).
pub const MAX_BREAKPOINTS: usize = 10_000;

/// The breakpoints a request gives, refused past [`MAX_BREAKPOINTS`] (the
/// breakpoints set before stay as they were).
fn given_breakpoints(arguments: &Value) -> Result<&Value, String> {
    let given = arguments.get("breakpoints").unwrap_or(&Value::Null);
    let count = given.as_array().map_or(0, Vec::len);
    if count > MAX_BREAKPOINTS {
        return Err(format!(
            "{count} breakpoints in one request are more than the {MAX_BREAKPOINTS} the adapter takes: the breakpoints are unchanged"
        ));
    }
    Ok(given)
}

/// One breakpoint of `setBreakpoints` as the client sends it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SourceBreakpoint {
    line: u32,
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    hit_condition: Option<String>,
    #[serde(default)]
    log_message: Option<String>,
}

/// One breakpoint of `setFunctionBreakpoints`.
#[derive(Debug, Deserialize)]
struct FunctionBreakpoint {
    name: String,
}

/// The exception filters a client may turn on, as `initialize` announces them.
pub fn exception_filters() -> Value {
    json!([
        {
            "filter": ExceptionFilters::UNCAUGHT,
            "label": "Uncaught errors",
            "description": "Stop where an error is raised that no pcall catches (the run error), before the run ends",
            "default": true,
        },
        {
            "filter": ExceptionFilters::RAISED,
            "label": "Every raised error",
            "description": "Stop where any error value is raised, caught by pcall or not",
            "default": false,
        },
    ])
}

/// A path as a key: canonical when it exists.
fn key_of(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// The breakpoints the client set, per source: the engine's form and the ids
/// answered verified.
#[derive(Default)]
pub struct Breakpoints {
    by_source: HashMap<PathBuf, (Vec<LineBreakpoint>, Vec<i64>)>,
    next_id: i64,
}

impl Breakpoints {
    fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// `setBreakpoints` for one source: the answer's body, or the refusal of
    /// more than [`MAX_BREAKPOINTS`]. `program` is the launched prompt, once
    /// known.
    pub fn set_lines(
        &mut self,
        arguments: &Value,
        program: Option<&Program>,
    ) -> Result<Value, String> {
        let path = arguments["source"]["path"].as_str().map(PathBuf::from);
        let given = given_breakpoints(arguments)?;
        let wanted = Vec::<SourceBreakpoint>::deserialize(given).unwrap_or_default();
        let key = path.as_deref().map(key_of);
        let elsewhere = match (&key, program) {
            (Some(key), Some(program)) => *key != key_of(&program.path),
            _ => false,
        };
        let source = path.as_deref().and_then(Program::read);
        let mut kept = Vec::new();
        let mut verified = Vec::new();
        let answers: Vec<Value> = wanted
            .into_iter()
            .map(|wanted| {
                let id = self.id();
                let checked = match &source {
                    None => Err("the source cannot be read".to_owned()),
                    Some(_) if elsewhere => Err(NOT_THE_PROGRAM.to_owned()),
                    Some(source) => bind(source, &wanted),
                };
                match checked {
                    Ok((breakpoint, line)) => {
                        kept.push(breakpoint);
                        verified.push(id);
                        json!({ "id": id, "verified": true, "line": line })
                    }
                    Err(reason) => {
                        json!({ "id": id, "verified": false, "line": wanted.line, "message": reason })
                    }
                }
            })
            .collect();
        if let Some(key) = key {
            self.by_source.insert(key, (kept, verified));
        }
        Ok(json!({ "breakpoints": answers }))
    }

    /// The line breakpoints of the launched prompt.
    pub fn of_program(&self, program: &Program) -> Vec<LineBreakpoint> {
        self.by_source
            .get(&key_of(&program.path))
            .map(|(kept, _)| kept.clone())
            .unwrap_or_default()
    }

    /// Once the prompt is launched: the breakpoints verified earlier in other
    /// sources no longer hold; the `breakpoint` events that say so.
    pub fn launched(&mut self, program: &Program) -> Vec<Value> {
        let key = key_of(&program.path);
        let mut events = Vec::new();
        for (source, (kept, verified)) in &mut self.by_source {
            if *source == key {
                continue;
            }
            kept.clear();
            for id in verified.drain(..) {
                events.push(json!({
                    "reason": "changed",
                    "breakpoint": { "id": id, "verified": false, "message": NOT_THE_PROGRAM },
                }));
            }
        }
        events
    }

    /// `setFunctionBreakpoints`: the names accepted, and the answer's body; or
    /// the refusal of more than [`MAX_BREAKPOINTS`].
    pub fn set_functions(&mut self, arguments: &Value) -> Result<(Vec<String>, Value), String> {
        let given = given_breakpoints(arguments)?;
        let wanted = Vec::<FunctionBreakpoint>::deserialize(given).unwrap_or_default();
        let mut names = Vec::new();
        let answers: Vec<Value> = wanted
            .into_iter()
            .map(|wanted| {
                let id = self.id();
                match function_name_problem(&wanted.name) {
                    None => {
                        names.push(wanted.name);
                        json!({ "id": id, "verified": true })
                    }
                    Some(reason) => json!({ "id": id, "verified": false, "message": reason }),
                }
            })
            .collect();
        Ok((names, json!({ "breakpoints": answers })))
    }
}

/// Binds one source breakpoint: its place and moved line, or why it is refused.
fn bind(program: &Program, wanted: &SourceBreakpoint) -> Result<(LineBreakpoint, u32), String> {
    let (place, line) = program.place(wanted.line).map_err(str::to_owned)?;
    let condition = wanted.condition.clone().filter(|c| !c.trim().is_empty());
    if let Some(condition) = &condition {
        check_expression(condition)
            .map_err(|reason| format!("the condition does not compile: {reason}"))?;
    }
    let hit_condition = match wanted.hit_condition.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(HitCondition::parse(text)?),
    };
    let breakpoint = LineBreakpoint {
        place,
        condition,
        hit_condition,
        log_message: wanted.log_message.clone().filter(|m| !m.is_empty()),
    };
    Ok((breakpoint, line))
}

/// `setExceptionBreakpoints`: the filters turned on, and the answer's body.
pub fn exception_breakpoints(arguments: &Value) -> (ExceptionFilters, Value) {
    let filters: Vec<String> = arguments
        .get("filters")
        .cloned()
        .and_then(|f| serde_json::from_value(f).ok())
        .unwrap_or_default();
    let mut on = ExceptionFilters::default();
    let answers: Vec<Value> = filters
        .iter()
        .map(|filter| match filter.as_str() {
            ExceptionFilters::UNCAUGHT => {
                on.uncaught = true;
                json!({ "verified": true })
            }
            ExceptionFilters::RAISED => {
                on.raised = true;
                json!({ "verified": true })
            }
            other => json!({ "verified": false, "message": format!("unknown exception filter {other:?}") }),
        })
        .collect();
    (on, json!({ "breakpoints": answers }))
}
