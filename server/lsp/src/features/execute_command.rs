//! `workspace/executeCommand` (`editor.md` §2): `promptforge.run` `{uri, args?,
//! seed?, offline?}` (`offline: true` answers every model label with `echo`, a
//! preview of the requests that calls no model) and `promptforge.test` `{uri, case?}` answer `{runId}` and start the
//! run ([`crate::run`]); `promptforge.cancel` `{runId}` answers null.
//!
//! The one argument is an object (a client may also send it as the first of
//! several). `args` is a string, or a list of strings joined by spaces as the
//! command line joins its ARGS. Arguments that name no document the server can
//! read are an `InvalidParams` error; a document that cannot run (it does not
//! parse, it has no test file), or a run past the session's runs at once
//! ([`crate::run::MAX_RUNS`]), answers with its run id and a `failed` event.

use std::sync::Arc;

use serde_json::{json, Value};
use tower_lsp::jsonrpc::{Error, Result};
use tower_lsp::lsp_types::{ExecuteCommandOptions, Url, WorkDoneProgressOptions};

use crate::run::prompt::PromptJob;
use crate::run::protocol::{self, RunEvent};
use crate::run::test_run::TestJob;
use crate::run::{Job, Runner};
use crate::test_files;

/// The server's `executeCommandProvider`.
pub fn options() -> ExecuteCommandOptions {
    ExecuteCommandOptions {
        commands: protocol::COMMANDS.iter().map(|c| (*c).to_owned()).collect(),
        work_done_progress_options: WorkDoneProgressOptions::default(),
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::invalid_params(message.into())
}

/// The command's argument object.
fn argument(arguments: &[Value]) -> Result<&serde_json::Map<String, Value>> {
    arguments
        .first()
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("the command takes one object argument"))
}

fn uri_of(argument: &serde_json::Map<String, Value>) -> Result<Url> {
    let text = argument
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("the argument has no \"uri\" string"))?;
    Url::parse(text).map_err(|e| invalid(format!("\"uri\" {text:?} is not a URI: {e}")))
}

/// `args`: a string, a list of strings (joined by spaces) or nothing.
fn args_of(argument: &serde_json::Map<String, Value>) -> Result<String> {
    match argument.get("args") {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| invalid("\"args\" holds a non-string"))
            })
            .collect::<Result<Vec<&str>>>()
            .map(|items| items.join(" ")),
        Some(_) => Err(invalid("\"args\" is not a string")),
    }
}

/// `offline`: true, false or nothing (false).
fn offline_of(argument: &serde_json::Map<String, Value>) -> Result<bool> {
    match argument.get("offline") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(offline)) => Ok(*offline),
        Some(_) => Err(invalid("\"offline\" is not true or false")),
    }
}

fn seed_of(argument: &serde_json::Map<String, Value>) -> Result<Option<u64>> {
    match argument.get("seed") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| invalid("\"seed\" is not a whole number of 0 or more")),
    }
}

/// Runs the command `command` with `arguments`.
pub fn execute(runner: &Arc<Runner>, command: &str, arguments: &[Value]) -> Result<Option<Value>> {
    match command {
        protocol::RUN => {
            let argument = argument(arguments)?;
            let uri = uri_of(argument)?;
            let (args, seed) = (args_of(argument)?, seed_of(argument)?);
            let offline = offline_of(argument)?;
            let job = if crate::test_uris::is_test_uri(&uri) {
                refused(
                    "NotAPrompt",
                    format!("{uri} is a test file: run it with {}", protocol::TEST),
                )
            } else {
                refuse_untrusted(runner, &uri)?;
                let source = runner.source(&uri).map_err(invalid)?;
                Job::Prompt(PromptJob {
                    source,
                    args,
                    seed,
                    offline,
                })
            };
            Ok(Some(json!({ "runId": runner.start(job) })))
        }
        protocol::TEST => {
            let argument = argument(arguments)?;
            let uri = uri_of(argument)?;
            let case = match argument.get("case") {
                None | Some(Value::Null) => None,
                Some(Value::String(name)) => Some(name.clone()),
                Some(_) => return Err(invalid("\"case\" is not a string")),
            };
            refuse_untrusted(runner, &uri)?;
            let job = test_job(runner, &uri, case)?;
            Ok(Some(json!({ "runId": runner.start(job) })))
        }
        protocol::CANCEL => {
            let argument = argument(arguments)?;
            let run_id = argument
                .get("runId")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("the argument has no \"runId\" string"))?;
            // A run that already ended is not an error: the cancel came late.
            runner.cancel(run_id);
            Ok(None)
        }
        protocol::RUN_WITH_ARGUMENTS => Err(invalid(format!(
            "{command} is the editor's: it asks for the arguments, then sends {}",
            protocol::RUN
        ))),
        other => Err(invalid(format!("unknown command {other:?}"))),
    }
}

/// An error answer when the client's Restricted Mode, or a key of the
/// configuration of the file at `uri` that needs trust, forbids the run.
fn refuse_untrusted(runner: &Runner, uri: &Url) -> Result<()> {
    let Ok(path) = uri.to_file_path() else {
        return Ok(());
    };
    match runner.refusal(&path) {
        Some(message) => Err(Error {
            code: tower_lsp::jsonrpc::ErrorCode::InvalidRequest,
            message: message.into(),
            data: None,
        }),
        None => Ok(()),
    }
}

fn refused(kind: &str, message: String) -> Job {
    Job::Refused(RunEvent::Failed {
        kind: kind.to_owned(),
        message,
        range: None,
        trace_id: None,
    })
}

/// The test run of `uri`: a test file runs itself, a prompt the test file beside it.
fn test_job(runner: &Runner, uri: &Url, case: Option<String>) -> Result<Job> {
    let test_uri = if crate::test_uris::is_test_uri(uri) {
        uri.clone()
    } else {
        match crate::test_uris::beside(uri) {
            Some(beside) if test_files::exists(&runner.documents, &beside) => beside,
            _ => {
                let message = format!("{uri} has no test file beside it");
                return Ok(refused("TestFile", message));
            }
        }
    };
    let source = runner.source(&test_uri).map_err(invalid)?;
    Ok(Job::Test(TestJob { source, case }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_are_a_string_or_a_list_of_strings() {
        let object = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert_eq!(args_of(&object(json!({}))).ok().as_deref(), Some(""));
        assert_eq!(
            args_of(&object(json!({"args": "a b"}))).ok().as_deref(),
            Some("a b")
        );
        assert_eq!(
            args_of(&object(json!({"args": ["a", "b"]})))
                .ok()
                .as_deref(),
            Some("a b")
        );
        assert!(args_of(&object(json!({"args": 3}))).is_err());
        assert!(seed_of(&object(json!({"seed": -1}))).is_err());
        assert_eq!(seed_of(&object(json!({"seed": 7}))).ok(), Some(Some(7)));
        assert_eq!(offline_of(&object(json!({}))).ok(), Some(false));
        assert_eq!(
            offline_of(&object(json!({"offline": true}))).ok(),
            Some(true)
        );
        assert!(offline_of(&object(json!({"offline": "yes"}))).is_err());
    }
}
