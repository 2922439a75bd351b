//! `launch`: the prompt the client names, run exactly as `promptforge run` runs
//! it (the text on disk, the same configuration discovery and Host, the seed),
//! with the run's log and its outcome sent to the client as `output` events.

use std::path::PathBuf;
use std::sync::Arc;

use promptforge_engine::input::ScriptedInput;
use promptforge_engine::run::{run_text, Debugger, RunEvents, RunOptions};
use promptforge_engine::{RunErrorKind, Store};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::cli::GlobalArgs;
use crate::dap::protocol::Outgoing;
use crate::host_setup;

/// `launch`'s arguments (other keys a client adds, such as `type`, `name` and
/// `request`, are ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchArguments {
    /// The prompt file.
    pub program: PathBuf,
    /// The argument string, or words joined by spaces (as `run`'s ARGS).
    #[serde(default)]
    pub args: Option<Value>,
    /// The seed (as `--seed`).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The configuration file (as `--config`).
    #[serde(default)]
    pub config: Option<PathBuf>,
    /// Stop at the first line of Lua the run reaches.
    #[serde(default)]
    pub stop_on_entry: bool,
    /// Run without the debugger (VS Code's "Run Without Debugging").
    #[serde(default)]
    pub no_debug: bool,
    /// The answers `input.ask` gets, in order (the protocol holds stdin, so no
    /// one is asked); past them `input.ask` raises `input_unavailable`.
    #[serde(default)]
    pub input: Vec<String>,
}

impl LaunchArguments {
    /// Reads `launch`'s arguments; the error is the response's message.
    pub fn parse(arguments: &Value) -> Result<Self, String> {
        let mut launch: LaunchArguments = serde_json::from_value(arguments.clone())
            .map_err(|e| format!("invalid launch arguments: {e}"))?;
        launch.argument_string()?;
        // Frames name the prompt by this path: absolute, whatever the client sent.
        if let Ok(absolute) = std::path::absolute(&launch.program) {
            launch.program = absolute;
        }
        Ok(launch)
    }

    fn argument_string(&self) -> Result<String, String> {
        match &self.args {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(Value::Array(words)) => words
                .iter()
                .map(|w| w.as_str().ok_or("\"args\" holds a non-string"))
                .collect::<Result<Vec<&str>, _>>()
                .map(|w| w.join(" "))
                .map_err(str::to_owned),
            Some(_) => Err("\"args\" is neither a string nor a list of strings".to_owned()),
        }
    }
}

/// The run's events as `output` events, in order: log lines on `stdout`,
/// notices on `console`.
struct OutputEvents {
    out: Outgoing,
}

impl OutputEvents {
    fn output(&self, category: &str, text: String) {
        self.out
            .event_now("output", json!({ "category": category, "output": text }));
    }
}

impl RunEvents for OutputEvents {
    fn log(&self, line: &str) {
        self.output("stdout", format!("{line}\n"));
    }

    fn notice(&self, text: &str) {
        self.output("console", format!("note: {text}\n"));
    }
}

/// Runs the launched prompt until it ends or `cancel` fires, sends its outcome
/// (`output`, then `exited` with `run`'s exit status), and returns that status.
/// A prompt that cannot be read or configured is reported the same way.
pub async fn run(
    launch: LaunchArguments,
    global: &GlobalArgs,
    out: &Outgoing,
    cancel: CancellationToken,
    debugger: Option<Arc<Debugger>>,
) -> i64 {
    let display = launch.program.display().to_string();
    let prepared = prepare(&launch, global);
    let (text, host, store) = match prepared {
        Ok(parts) => parts,
        Err(message) => {
            out.event(
                "output",
                json!({ "category": "stderr", "output": format!("{message}\n") }),
            )
            .await;
            return 2;
        }
    };
    let events = Arc::new(OutputEvents { out: out.clone() });
    let options = RunOptions {
        args: launch.argument_string().unwrap_or_default(),
        seed: launch.seed,
        cancel,
        debugger,
        trace: false,
    };
    let outcome = run_text(&text, Arc::new(host), Arc::new(store), options, events).await;
    let (category, text, status) = match (&outcome.error, &outcome.result) {
        (Some(error), _) => {
            let status = if error.kind == RunErrorKind::Cancelled {
                130
            } else {
                1
            };
            let line = crate::run::report::problem_line(&display, error);
            ("stderr", format!("{line}\n"), status)
        }
        (None, Some(result)) => ("stdout", format!("{result}\n"), 0),
        (None, None) => ("stdout", String::new(), 0),
    };
    if !text.is_empty() {
        out.event("output", json!({ "category": category, "output": text }))
            .await;
    }
    status
}

/// The prompt's text, its Host and its store, found as `run` finds them; the
/// error is the line `run` would print.
fn prepare(
    launch: &LaunchArguments,
    global: &GlobalArgs,
) -> Result<(String, promptforge_engine::host::Host, Store), String> {
    let display = launch.program.display().to_string();
    let text = crate::files::read_text(&launch.program)
        .map_err(|reason| format!("promptforge: {display}: {reason}"))?;
    if !promptforge_syntax::is_prompt(&text) {
        let problems = crate::problem::Problem::not_a_prompt(&display, &text);
        let lines: Vec<String> = problems.iter().map(crate::output::text_line).collect();
        return Err(lines.join("\n"));
    }
    let mut global = global.clone();
    if launch.config.is_some() {
        global.config.clone_from(&launch.config);
    }
    let dir = host_setup::prompt_dir(&launch.program);
    let config =
        host_setup::load_config(&global, Some(dir)).map_err(|e| format!("promptforge: {e}"))?;
    let mut host = host_setup::host_of(config).map_err(|e| format!("promptforge: {e}"))?;
    if !launch.input.is_empty() {
        host.set_input(Some(Arc::new(ScriptedInput::new(launch.input.clone()))));
    }
    let store = match &global.store {
        Some(dir) => {
            Store::directory(dir).map_err(|e| format!("promptforge: {}: {e}", dir.display()))?
        }
        None => Store::in_memory(),
    };
    Ok((text, host, store))
}
