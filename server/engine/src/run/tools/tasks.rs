//! Tasks (`language.md` §8): `tools.allow_tasks` offers the model the Engine's four
//! task tools; `task` starts a chain in the background, `task_status`,
//! `task_cancel` and `await_tasks` watch it. Tasks still running when their section
//! ends are cancelled (by the walk). The registry is `run::context::tasks`.

use std::sync::{Arc, Mutex};

use mlua::Lua;
use serde_json::{json, Value as Json};
use tokio_util::sync::CancellationToken;

use crate::error::{EngineError, RunError, RunErrorKind};
use crate::messages;
use crate::models::ToolSpec;
use crate::run::chain_var;
use crate::run::context::tasks::{finish, TaskEntry, TaskState};
use crate::run::context::{Globals, SectionCtx};
use crate::run::control::{deeper_chain, ChainOrigin, NewChain};
use crate::run::debugger::ChainKind;
use crate::run::location::resolve;
use crate::run::tools::schema::check_arguments;
use crate::run::vm::usage_error;
use crate::run::walk::chain_from;

fn string_schema(description: &str) -> Json {
    json!({"type": "string", "description": description})
}

/// The four Engine tools as the model sees them (descriptions: the spec leaves them open).
pub fn specs(allowed: &[String]) -> Vec<ToolSpec> {
    let id = || json!({"type": "object", "properties": {"id": string_schema("A task id such as t1")}, "required": ["id"]});
    vec![
        ToolSpec {
            name: "task".to_owned(),
            description: format!(
                "Start a task: run a section of this prompt in the background with an input string, and get its id. Allowed targets: {}",
                messages::list(allowed)
            ),
            parameters: json!({"type": "object", "properties": {
                "target": string_schema("The section to run, exactly as listed, such as '## Name'"),
                "input": string_schema("The task's input string"),
            }, "required": ["target"]}),
        },
        ToolSpec {
            name: "task_cancel".to_owned(),
            description: "Cancel a running task.".to_owned(),
            parameters: id(),
        },
        ToolSpec {
            name: "task_status".to_owned(),
            description: "Report a task's state: running, done: {result}, failed: {message} or cancelled.".to_owned(),
            parameters: id(),
        },
        ToolSpec {
            name: "await_tasks".to_owned(),
            description: "Wait until tasks end (every task started in this section when ids is empty) and report each one as {id}: {state}, one line per task.".to_owned(),
            parameters: json!({"type": "object", "properties": {
                "ids": {"type": "array", "items": {"type": "string"}, "description": "The task ids to wait for"},
            }, "required": []}),
        },
    ]
}

fn text_field<'a>(arguments: &'a Json, key: &str) -> Option<&'a str> {
    arguments.get(key).and_then(Json::as_str)
}

/// Runs one of the Engine's task tools for the model; the text is the tool record's
/// content (Engine text, not wrapped; arguments that break the schema are wrapped
/// like any tool's). `globals` are those of the chain a `task` call starts.
pub async fn engine_call(
    lua: &Lua,
    ctx: &SectionCtx,
    spec: &ToolSpec,
    arguments: &str,
    globals: Globals,
) -> mlua::Result<String> {
    let arguments = match check_arguments(&spec.parameters, arguments) {
        Ok(arguments) => arguments,
        Err(reason) => {
            let text = messages::invalid_arguments(&spec.name, &reason);
            return Ok(ctx.run.identity.envelope(&text));
        }
    };
    let registry = &ctx.run.tools.tasks;
    match spec.name.as_str() {
        "task" => start(lua, ctx, &arguments, globals),
        "task_status" => {
            let id = text_field(&arguments, "id").unwrap_or_default();
            Ok(registry
                .status(id)
                .unwrap_or_else(|| messages::no_such_task(id)))
        }
        "task_cancel" => {
            let id = text_field(&arguments, "id").unwrap_or_default();
            let Some(task) = registry.get(id) else {
                return Ok(messages::no_such_task(id));
            };
            finish(&task.state, TaskState::Cancelled);
            task.cancel.cancel();
            Ok(task.state().status())
        }
        _ => wait(ctx, &arguments).await,
    }
}

/// `task {target, input}`: a chain from an allowed target, in the background.
fn start(lua: &Lua, ctx: &SectionCtx, arguments: &Json, globals: Globals) -> mlua::Result<String> {
    let target = text_field(arguments, "target").unwrap_or_default();
    let input = text_field(arguments, "input")
        .unwrap_or_default()
        .to_owned();
    let allowed = ctx.with_state(|s| s.tools.allow_tasks.clone().unwrap_or_default());
    if !allowed.iter().any(|a| a == target) {
        return Ok(messages::task_target_not_allowed(target, &allowed));
    }
    let located = match resolve(&ctx.run.prepared.sections, &ctx.path, target) {
        Ok(located) => located,
        Err(message) => return Ok(message),
    };
    if ctx.chain.depth + 1 > ctx.run.limits.call_depth {
        return Ok(messages::call_depth_limit(ctx.run.limits.call_depth));
    }
    let var = chain_var::current(lua).map_err(usage_error)?;
    let scope = ctx.with_state(|s| s.tools.task_scope.clone());
    let cancel = ctx.chain.cancel.child_token();
    let entry = TaskEntry {
        state: Arc::new(Mutex::new(TaskState::Running)),
        cancel: cancel.clone(),
        finished: CancellationToken::new(),
    };
    let id = ctx.run.tools.tasks.add(entry.clone());
    ctx.with_state(|s| s.tools.started.push(id.clone()));
    let origin = ChainOrigin::here(ctx, lua);
    let new = NewChain {
        args: input,
        var,
        arm: None,
        races: ctx.chain.races.clone(),
        cancel: cancel.clone(),
    };
    let chain = match deeper_chain(ctx, origin.as_ref(), ChainKind::Task(id.clone()), new) {
        Ok(chain) => chain,
        Err(error) => {
            finish(&entry.state, TaskState::Failed(error.to_string()));
            entry.finished.cancel();
            return Err(error);
        }
    };
    let run = ctx.run.clone();
    tokio::spawn(async move {
        let outcome = tokio::select! {
            outcome = chain_from(run, chain, located, globals) => outcome,
            () = scope.cancelled() => Err(RunError::cancelled()),
            () = cancel.cancelled() => Err(RunError::cancelled()),
        };
        cancel.cancel();
        let end = match outcome {
            Ok(result) => TaskState::Done(result),
            Err(error) if error.kind == RunErrorKind::Cancelled => TaskState::Cancelled,
            Err(error) => TaskState::Failed(error.message),
        };
        finish(&entry.state, end);
        entry.finished.cancel();
    });
    Ok(id)
}

/// `await_tasks {ids}`: waits for those tasks (the section's, when empty) and gives
/// one `{id}: {state}` line per task.
async fn wait(ctx: &SectionCtx, arguments: &Json) -> mlua::Result<String> {
    let mut ids: Vec<String> = arguments
        .get("ids")
        .and_then(Json::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if ids.is_empty() {
        ids = ctx.with_state(|s| s.tools.started.clone());
    }
    let mut lines = Vec::new();
    for id in ids {
        let Some(task) = ctx.run.tools.tasks.get(&id) else {
            lines.push(format!("{id}: {}", messages::no_such_task(&id)));
            continue;
        };
        tokio::select! {
            () = task.finished.cancelled() => {}
            () = ctx.control.cancel().cancelled() => {
                return Err(ctx.control.raise(EngineError::cancelled()));
            }
        }
        lines.push(format!("{id}: {}", task.state().status()));
    }
    Ok(lines.join("\n"))
}
