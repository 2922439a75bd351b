//! `promptforge run FILE [ARGS...]` (`host.md` §4): reads the prompt, finds the
//! configuration, runs the prompt on the engine and prints the outcome; with
//! `--record CASE.test.yaml` the run is also appended to that test file as a case.

mod input;
mod record;
pub(crate) mod report;
mod status;
mod traces;

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use promptforge_engine::prompt_tests::record::starting_store;
use promptforge_engine::run::{run_text, RunOptions};
use promptforge_engine::user_file;
use promptforge_engine::{RunErrorKind, Store};
use promptforge_syntax::is_prompt;
use tokio_util::sync::CancellationToken;

use crate::cli::{GlobalArgs, RunArgs, RunFormat};
use crate::exit::Exit;
use crate::host_setup;

/// A run refused before it started: a usage error (exit 2) or a file that is
/// not a prompt (exit 1). [`Refusal::report`] prints it as the format asks: the
/// text lines on stderr, or the one JSON object of `--format json` on stdout.
struct Refusal {
    exit: Exit,
    /// The `kind` of the JSON object's error (`Usage`, or the problem's kind).
    kind: &'static str,
    message: String,
    /// The 1-based line and column, where there is a place.
    position: Option<(u32, u32)>,
    /// What the text format prints on stderr, a line each.
    lines: Vec<String>,
}

impl Refusal {
    /// Prints the refusal as `format` asks; returns its exit status.
    fn report(self, format: RunFormat) -> Exit {
        match format {
            RunFormat::Text => {
                for line in &self.lines {
                    eprintln!("{line}");
                }
            }
            RunFormat::Json => {
                let object = report::json_refusal(self.kind, &self.message, self.position);
                crate::output::failed_to_write(print_json(&object));
            }
        }
        self.exit
    }
}

/// A usage error about `path`: `promptforge: {path}: {reason}` (exit 2).
fn usage(path: &str, reason: impl std::fmt::Display) -> Refusal {
    refused(format!("{path}: {reason}"))
}

/// A usage error: `promptforge: {message}` (exit 2).
fn refused(message: String) -> Refusal {
    Refusal {
        exit: Exit::Usage,
        kind: "Usage",
        lines: vec![format!("promptforge: {message}")],
        message,
        position: None,
    }
}

/// A file that is not a prompt: its problems (exit 1); the JSON object's error
/// is the first.
fn not_a_prompt(display: &str, text: &str) -> Refusal {
    let problems = crate::problem::Problem::not_a_prompt(display, text);
    let first = problems.first();
    Refusal {
        exit: Exit::Problems,
        kind: first.map_or("Frontmatter", |p| p.kind),
        message: first.map_or_else(String::new, |p| p.message.clone()),
        position: first.and_then(|p| p.position),
        lines: problems.iter().map(crate::output::text_line).collect(),
    }
}

/// Prints `object` as the one pretty-printed JSON object of `--format json`.
fn print_json(object: &impl serde::Serialize) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, object)
        .map_err(io::Error::other)
        .and_then(|()| writeln!(out))
        .and_then(|()| out.flush())
}

/// The argument string: ARGS joined by spaces, or `--args-file` (`-` for stdin),
/// read as every file the user names ([`promptforge_engine::user_file`]).
fn argument_string(args: &RunArgs) -> Result<String, Refusal> {
    let Some(file) = &args.args_file else {
        return Ok(args.args.join(" "));
    };
    if file.as_os_str() == "-" {
        let bytes = user_file::read_stream(io::stdin().lock())
            .map_err(|e| usage("stdin", crate::files::describe_io_error(&e)))?;
        return String::from_utf8(bytes).map_err(|e| usage("stdin", crate::files::not_utf8(&e)));
    }
    crate::files::read_text(file).map_err(|reason| usage(&file.display().to_string(), reason))
}

/// Runs `promptforge run`; returns the exit status. Every refusal is printed as
/// the format asks (with `--format json`, one JSON object like a run's).
pub fn run(args: &RunArgs, global: &GlobalArgs) -> Exit {
    match run_or_refuse(args, global) {
        Ok(exit) => exit,
        Err(refusal) => refusal.report(args.format),
    }
}

fn run_or_refuse(args: &RunArgs, global: &GlobalArgs) -> Result<Exit, Refusal> {
    let display = args.file.display().to_string();
    let text = crate::files::read_text(&args.file).map_err(|reason| usage(&display, reason))?;
    if !is_prompt(&text) {
        return Err(not_a_prompt(&display, &text));
    }
    let arguments = argument_string(args)?;
    let recording = match &args.record {
        Some(path) => Some(
            record::Recording::start(path, &args.file, args.record_name.as_deref(), &arguments)
                .map_err(|error| usage(&error.display, error.reason))?,
        ),
        None => None,
    };
    let config = host_setup::load_config(global, Some(host_setup::prompt_dir(&args.file)))
        .map_err(|error| refused(error.to_string()))?;
    let traces = traces::TraceTargets::new(args, &config);
    let mut host = host_setup::host_of(config).map_err(|error| refused(error.to_string()))?;
    let live = args.format == RunFormat::Text && io::stderr().is_terminal() && !global.quiet;
    let events = Arc::new(status::CliEvents::new(
        live,
        args.format == RunFormat::Text,
        global.quiet,
    ));
    let stdin_is_operator = !global.no_input
        && args.args_file.as_deref() != Some(Path::new("-"))
        && io::stdin().is_terminal();
    if stdin_is_operator {
        host.set_input(Some(Arc::new(input::TerminalInput::new(events.pause()))));
    }
    if let Some(recording) = &recording {
        host = recording.recorder.host(&host);
    }
    // A recorded run always has a seed: the case replays it.
    let seed = match &recording {
        Some(_) => Some(global.seed.unwrap_or_else(random_seed)),
        None => global.seed,
    };
    let store = match &global.store {
        Some(dir) => Store::directory(dir).map_err(|e| usage(&dir.display().to_string(), e))?,
        None => Store::in_memory(),
    };
    // The case replays against the files the store on disk starts with.
    if let (Some(recording), Some(_)) = (&recording, &global.store) {
        let files = starting_store(&store).map_err(|reason| usage(&recording.display, reason))?;
        recording.recorder.starting_files(files);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| usage("runtime", e))?;
    let cancel = CancellationToken::new();
    let options = RunOptions {
        args: arguments.clone(),
        seed,
        cancel: cancel.clone(),
        debugger: None,
        trace: traces.wanted(),
    };
    let outcome = runtime.block_on(async {
        // Listening starts before the run does, so no Ctrl-C is missed.
        if let Ok(interrupts) = ctrl_c_listener() {
            tokio::spawn(cancel_on_ctrl_c(interrupts, cancel));
        }
        run_text(
            &text,
            Arc::new(host),
            Arc::new(store),
            options,
            events.clone(),
        )
        .await
    });
    events.finish();
    let undelivered = match &outcome.trace {
        Some(trace) => runtime.block_on(traces.deliver(trace, &display)),
        None => Vec::new(),
    };
    runtime.shutdown_timeout(Duration::from_millis(100));
    for failure in &undelivered {
        eprintln!("{}", failure.line);
    }

    let written = match args.format {
        RunFormat::Text => {
            if let Some(error) = &outcome.error {
                eprintln!("{}", report::problem_line(&display, error));
            }
            report::write_result(outcome.result.as_deref(), &mut io::stdout().lock())
        }
        RunFormat::Json => print_json(&report::json_object(&outcome)),
    };
    if crate::output::failed_to_write(written) {
        return Ok(Exit::Usage);
    }
    let cancelled = outcome
        .error
        .as_ref()
        .is_some_and(|e| e.kind == RunErrorKind::Cancelled);
    if let (Some(recording), Some(seed), false) = (&recording, seed, cancelled) {
        match recording.finish(&arguments, seed, &outcome) {
            Ok(name) => eprintln!("recorded case \"{name}\" in {}", recording.display),
            Err(error) => {
                // The run's own output is printed already: this is a line on stderr.
                eprintln!("promptforge: {}: {}", error.display, error.reason);
                return Ok(Exit::Usage);
            }
        }
    }
    if undelivered.iter().any(|failure| failure.fails) {
        return Ok(Exit::Usage);
    }
    Ok(match &outcome.error {
        None => Exit::Ok,
        Some(error) if error.kind == RunErrorKind::Cancelled => Exit::Cancelled,
        Some(_) => Exit::Problems,
    })
}

/// A seed from the operating system's random source (else from the clock).
fn random_seed() -> u64 {
    getrandom::u64().unwrap_or_else(|_| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    })
}

/// Ctrl-C, heard from the moment the listener is made (a listener made inside a
/// spawned task would miss a Ctrl-C sent before the task first ran).
#[cfg(unix)]
fn ctrl_c_listener() -> io::Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
}

/// Ctrl-C, heard from the moment the listener is made.
#[cfg(windows)]
fn ctrl_c_listener() -> io::Result<tokio::signal::windows::CtrlC> {
    tokio::signal::windows::ctrl_c()
}

/// The first Ctrl-C cancels the run; a second one exits at once.
async fn cancel_on_ctrl_c(mut interrupts: impl InterruptListener, cancel: CancellationToken) {
    if interrupts.next().await.is_none() {
        return;
    }
    cancel.cancel();
    if interrupts.next().await.is_some() {
        // The MCP servers, in process groups of their own, did not get the Ctrl-C.
        promptforge_shipped::kill_plugin_processes();
        std::process::exit(i32::from(Exit::Cancelled.code()));
    }
}

/// The platform's Ctrl-C listener, as [`cancel_on_ctrl_c`] reads it.
trait InterruptListener: Send + 'static {
    /// The next Ctrl-C (None: no more can come).
    fn next(&mut self) -> impl std::future::Future<Output = Option<()>> + Send;
}

#[cfg(unix)]
impl InterruptListener for tokio::signal::unix::Signal {
    async fn next(&mut self) -> Option<()> {
        self.recv().await
    }
}

#[cfg(windows)]
impl InterruptListener for tokio::signal::windows::CtrlC {
    async fn next(&mut self) -> Option<()> {
        self.recv().await
    }
}
