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

fn usage(path: &str, reason: impl std::fmt::Display) -> Exit {
    eprintln!("promptforge: {path}: {reason}");
    Exit::Usage
}

/// The argument string: ARGS joined by spaces, or `--args-file` (`-` for stdin),
/// read as every file the user names ([`promptforge_engine::user_file`]).
fn argument_string(args: &RunArgs) -> Result<String, Exit> {
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

/// Runs `promptforge run`; returns the exit status.
pub fn run(args: &RunArgs, global: &GlobalArgs) -> Exit {
    let display = args.file.display().to_string();
    let text = match crate::files::read_text(&args.file) {
        Ok(text) => text,
        Err(reason) => return usage(&display, reason),
    };
    if !is_prompt(&text) {
        for problem in crate::problem::Problem::not_a_prompt(&display, &text) {
            eprintln!("{}", crate::output::text_line(&problem));
        }
        return Exit::Problems;
    }
    let arguments = match argument_string(args) {
        Ok(arguments) => arguments,
        Err(code) => return code,
    };
    let recording = match &args.record {
        Some(path) => match record::Recording::start(
            path,
            &args.file,
            args.record_name.as_deref(),
            &arguments,
        ) {
            Ok(recording) => Some(recording),
            Err(error) => return usage(&error.display, error.reason),
        },
        None => None,
    };
    let config = match host_setup::load_config(global, Some(host_setup::prompt_dir(&args.file))) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("promptforge: {error}");
            return Exit::Usage;
        }
    };
    let traces = traces::TraceTargets::new(args, &config);
    let mut host = match host_setup::host_of(config) {
        Ok(host) => host,
        Err(error) => {
            eprintln!("promptforge: {error}");
            return Exit::Usage;
        }
    };
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
        Some(dir) => match Store::directory(dir) {
            Ok(store) => store,
            Err(e) => return usage(&dir.display().to_string(), e),
        },
        None => Store::in_memory(),
    };
    // The case replays against the files the store on disk starts with.
    if let (Some(recording), Some(_)) = (&recording, &global.store) {
        match starting_store(&store) {
            Ok(files) => recording.recorder.starting_files(files),
            Err(reason) => return usage(&recording.display, reason),
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return usage("runtime", e),
    };
    let cancel = CancellationToken::new();
    let options = RunOptions {
        args: arguments.clone(),
        seed,
        cancel: cancel.clone(),
        debugger: None,
        trace: traces.wanted(),
    };
    let outcome = runtime.block_on(async {
        tokio::spawn(cancel_on_ctrl_c(cancel));
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
        RunFormat::Json => {
            let object = report::json_object(&outcome);
            let mut out = io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &object)
                .map_err(io::Error::other)
                .and_then(|()| writeln!(out))
                .and_then(|()| out.flush())
        }
    };
    if let Err(error) = written {
        if error.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("promptforge: cannot write the output: {error}");
            return Exit::Usage;
        }
    }
    let cancelled = outcome
        .error
        .as_ref()
        .is_some_and(|e| e.kind == RunErrorKind::Cancelled);
    if let (Some(recording), Some(seed), false) = (&recording, seed, cancelled) {
        match recording.finish(&arguments, seed, &outcome) {
            Ok(name) => eprintln!("recorded case \"{name}\" in {}", recording.display),
            Err(error) => return usage(&error.display, error.reason),
        }
    }
    if undelivered.iter().any(|failure| failure.fails) {
        return Exit::Usage;
    }
    match &outcome.error {
        None => Exit::Ok,
        Some(error) if error.kind == RunErrorKind::Cancelled => Exit::Cancelled,
        Some(_) => Exit::Problems,
    }
}

/// A seed from the operating system's random source (else from the clock).
fn random_seed() -> u64 {
    getrandom::u64().unwrap_or_else(|_| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    })
}

/// The first Ctrl-C cancels the run; a second one exits at once.
async fn cancel_on_ctrl_c(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        // The MCP servers, in process groups of their own, did not get the Ctrl-C.
        promptforge_shipped::kill_plugin_processes();
        std::process::exit(i32::from(Exit::Cancelled.code()));
    }
}
