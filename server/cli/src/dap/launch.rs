//! `launch`: the prompt the client names, run exactly as `promptforge run` runs
//! it (the text on disk, the same configuration discovery and Host, the seed),
//! with the run's log and its outcome sent to the client as `output` events. With
//! `case`, `program` is a prompt test file and that case runs as `promptforge
//! test` runs it (its scripts, store and input), its verdict sent as output; the
//! frames and breakpoints are then the tested prompt's.

use std::path::PathBuf;
use std::sync::Arc;

use promptforge_engine::input::ScriptedInput;
use promptforge_engine::prompt_tests::{run_case, CaseOptions};
use promptforge_engine::run::{run_text, Debugger, RunEvents, RunOptions};
use promptforge_engine::{RunErrorKind, Store};
use promptforge_syntax::test_file::Case;
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
    /// With `program` a prompt test file: the case of this name runs.
    #[serde(default)]
    pub case: Option<String>,
    /// The case to run, read from the test file `launch` named (then `program`
    /// is the prompt it tests).
    #[serde(skip)]
    pub tested: Option<TestedCase>,
}

/// A case launched from its test file.
#[derive(Debug)]
pub struct TestedCase {
    /// The test file, as the client named it.
    pub test_file: PathBuf,
    /// The case.
    pub case: Case,
    /// The prompt's text.
    pub prompt: String,
}

impl LaunchArguments {
    /// Reads `launch`'s arguments; the error is the response's message.
    pub fn parse(arguments: &Value) -> Result<Self, String> {
        let mut launch: LaunchArguments = serde_json::from_value(arguments.clone())
            .map_err(|e| format!("invalid launch arguments: {}", echoed(&e.to_string())))?;
        launch.argument_string()?;
        if let Some(name) = launch.case.clone() {
            let tested = read_case(&launch.program, &name)?;
            launch.program = tested.1;
            launch.tested = Some(tested.0);
        }
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

/// The most characters of a text from the client that a message echoes.
const ECHOED: usize = 200;

/// `text` as a message echoes it: whole, or its first [`ECHOED`] characters,
/// `…` and its length.
fn echoed(text: &str) -> String {
    match text.char_indices().nth(ECHOED) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
    }
}

/// A case's name as a message quotes it: whole, or its first [`ECHOED`]
/// characters quoted, then `…` and its length.
fn quoted_name(name: &str) -> String {
    match name.char_indices().nth(ECHOED) {
        None => format!("{name:?}"),
        Some((at, _)) => format!("{:?}… ({} bytes)", &name[..at], name.len()),
    }
}

/// The message of a `case` launched with `program` not a test file, naming
/// the test file of a prompt beside it.
fn not_a_test_file(path: &std::path::Path) -> String {
    let suffix = promptforge_syntax::test_file::TEST_FILE_SUFFIX;
    let display = echoed(&path.display().to_string());
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let hint = match name.strip_suffix(".md") {
        Some(stem) if !stem.is_empty() => echoed(&format!("{stem}{suffix}")),
        _ => format!("NAME{suffix}"),
    };
    format!(
        "{display} is not a prompt test file: with \"case\", \"program\" is the test file that holds the case ({hint})"
    )
}

/// The case `name` of the test file `path`, and the path of the prompt it tests;
/// the error is the launch's message.
fn read_case(path: &std::path::Path, name: &str) -> Result<(TestedCase, PathBuf), String> {
    let is_test_file = path
        .to_str()
        .is_some_and(|p| p.ends_with(promptforge_syntax::test_file::TEST_FILE_SUFFIX));
    if !is_test_file {
        return Err(not_a_test_file(path));
    }
    let display = echoed(&path.display().to_string());
    let text = crate::files::read_text(path).map_err(|reason| format!("{display}: {reason}"))?;
    let loaded = crate::test::load::load(path, &display, text)
        .ok_or_else(|| format!("{display}: {}", crate::problem::INTERNAL_ERROR))?;
    if let Some(problem) = loaded
        .problems
        .iter()
        .find(|p| p.severity == promptforge_syntax::Severity::Error)
    {
        return Err(crate::output::text_line(problem));
    }
    let case = loaded
        .file
        .cases
        .into_iter()
        .find(|c| c.name.as_ref().is_some_and(|n| n.value == name))
        .ok_or_else(|| format!("{display} has no case named {}", quoted_name(name)))?;
    let (prompt_path, prompt) = loaded
        .prompt
        .ok_or_else(|| format!("{display}: its prompt cannot be read"))?;
    let tested = TestedCase {
        test_file: path.to_path_buf(),
        case,
        prompt,
    };
    Ok((tested, prompt_path))
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
    if let Some(tested) = &launch.tested {
        return run_tested(tested, &launch, global, out, cancel, debugger).await;
    }
    let display = launch.program.display().to_string();
    let prepared = prepare(&launch, global);
    let (text, host, store) = match prepared {
        Ok(parts) => parts,
        Err(message) => return refused(out, &message).await,
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

/// Sends `message` (why the launched prompt or case cannot run) on `stderr`;
/// returns `run`'s exit status for it, 2.
async fn refused(out: &Outgoing, message: &str) -> i64 {
    out.event(
        "output",
        json!({ "category": "stderr", "output": format!("{message}\n") }),
    )
    .await;
    2
}

/// Runs a launched case as `promptforge test` runs it and sends its verdict as
/// `promptforge test` prints it; returns 0 when it passed, else 1 (2: its Host
/// cannot be made).
async fn run_tested(
    tested: &TestedCase,
    launch: &LaunchArguments,
    global: &GlobalArgs,
    out: &Outgoing,
    cancel: CancellationToken,
    debugger: Option<Arc<Debugger>>,
) -> i64 {
    let host = match host_of(launch, global) {
        Ok(host) => host,
        Err(message) => return refused(out, &message).await,
    };
    let options = CaseOptions {
        cancel,
        events: Arc::new(OutputEvents { out: out.clone() }),
        debugger,
        ..CaseOptions::default()
    };
    let report = run_case(&host, &tested.prompt, &tested.case, options).await;
    let file = tested.test_file.display();
    let mut text = if report.passed() {
        format!("ok      {file}: {}\n", report.name)
    } else {
        format!("FAILED  {file}: {}\n", report.name)
    };
    for failure in &report.failures {
        text.push_str(&failure.render());
        text.push('\n');
    }
    let category = if report.passed() { "stdout" } else { "stderr" };
    out.event("output", json!({ "category": category, "output": text }))
        .await;
    i64::from(!report.passed())
}

/// The Host of the launched prompt's folder, as `run` makes it.
fn host_of(
    launch: &LaunchArguments,
    global: &GlobalArgs,
) -> Result<promptforge_engine::host::Host, String> {
    let mut global = global.clone();
    if launch.config.is_some() {
        global.config.clone_from(&launch.config);
    }
    let dir = host_setup::prompt_dir(&launch.program);
    let config =
        host_setup::load_config(&global, Some(dir)).map_err(|e| format!("promptforge: {e}"))?;
    host_setup::host_of(config).map_err(|e| format!("promptforge: {e}"))
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
    let mut host = host_of(launch, global)?;
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
