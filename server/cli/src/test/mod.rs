//! `promptforge test [PATH...]` (`testing.md`): finds the prompt test files
//! (`*.test.yaml`, folders recursively), reads each one and its prompt, chooses the
//! cases (`--filter`, `--shard`, `--live`) over every case of every file, runs them
//! in parallel on the engine ([`promptforge_engine::prompt_tests::run_case`]) on the
//! Host of each prompt's folder, and prints the verdicts in file order, then case
//! order: as text (streamed), JSON or JUnit XML.
//!
//! A test file with errors of its own (or whose Host configuration cannot be read)
//! runs none of its cases and counts as one failure; its warnings are printed and
//! its cases run.

mod failing_traces;
mod hosts;
mod json;
mod junit;
pub mod load;
mod matrix;
mod results;
mod runner;
mod text;
mod watch;

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use promptforge_engine::prompt_tests::default_seed;
use promptforge_engine::prompt_tests::selection::{Choice, Selection, Shard};
use promptforge_syntax::Code;

use crate::cli::{GlobalArgs, TestArgs, TestFormat};
use crate::exit::Exit;
use crate::files::{self, FileKind, PathError, Target};
use crate::problem::Problem;
use hosts::Hosts;
use load::Loaded;
use promptforge_engine::prompt_tests::CaseOptions;
use results::{CaseResult, FileResult, Totals};
use runner::{Observer, PlannedCase, PlannedFile, Runnable};
use watch::{Inputs, Pass, Scope};

/// Why a file named on the command line is not run.
const NOT_A_TEST_FILE: &str = "not a prompt test file (its name does not end in .test.yaml)";

/// Runs `promptforge test`; returns how it ended (`--watch`: runs until stopped).
pub fn run(args: &TestArgs, global: &GlobalArgs) -> Exit {
    if args.watch {
        return watch::run(args, global);
    }
    pass(args, global, &Scope::Everything).exit
}

/// One run of the chosen cases of the test files `scope` keeps; returns how it
/// ended and the files it read (what `--watch` watches).
fn pass(args: &TestArgs, global: &GlobalArgs, scope: &Scope) -> Pass {
    let mut inputs = Inputs::default();
    let exit = pass_reading(args, global, scope, &mut inputs);
    Pass { exit, inputs }
}

fn pass_reading(args: &TestArgs, global: &GlobalArgs, scope: &Scope, inputs: &mut Inputs) -> Exit {
    let selection = match selection(args) {
        Ok(selection) => selection,
        Err(message) => return refuse(args.format, &message),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return refuse(args.format, &format!("cannot start the runtime: {error}")),
    };
    let collected = files::collect(&args.paths, &[FileKind::Test]);
    let mut errors = collected.errors;
    let mut loaded = Vec::new();
    for target in &collected.targets {
        match read(target) {
            Ok(file) => {
                let prompt = file.prompt.as_ref().map(|(path, _)| path.as_path());
                inputs.add(global, &target.path, prompt);
                if scope.keeps(&target.path, prompt) {
                    loaded.push((target, file));
                }
            }
            Err(error) => errors.push(error),
        }
    }
    // With `--format json` they are the object's `errors`.
    if args.format != TestFormat::Json {
        for error in &errors {
            eprintln!("promptforge: {}: {}", error.path, error.reason);
        }
    }
    let mut hosts = Hosts::new(global, args);
    let case_options = CaseOptions {
        repeat: args.repeat,
        trace: args.trace.is_some(),
        ..CaseOptions::default()
    };
    let plan = plan(&loaded, &selection, &mut hosts);
    if !hosts.unknown_models.is_empty() {
        // Nothing runs: a matrix with a column missing is not the one asked for.
        let messages: Vec<&str> = hosts.unknown_models.iter().map(String::as_str).collect();
        return refuse_all(args.format, &messages);
    }
    let models = args.models.clone().unwrap_or_default();
    let to_run = plan
        .iter()
        .flat_map(|f| &f.cases)
        .filter(|c| c.runs)
        .count();
    let bar =
        (io::stderr().is_terminal() && !global.quiet && to_run > 0).then(|| progress_bar(to_run));
    let (results, written) = match args.format {
        TestFormat::Text => {
            let mut observer = text::TextObserver::new(global.quiet, bar.clone());
            let results = runner::run(&runtime, plan, bar.clone(), &mut observer, &case_options);
            finish(bar.as_ref());
            let written = match observer.error.take() {
                Some(error) => Err(error),
                None => text::write_end(&results, &models, global.quiet, &mut io::stdout().lock()),
            };
            (results, written)
        }
        TestFormat::Json | TestFormat::Junit => {
            let results = runner::run(&runtime, plan, bar.clone(), &mut Silent, &case_options);
            finish(bar.as_ref());
            let mut out = io::BufWriter::new(io::stdout().lock());
            let written = if args.format == TestFormat::Json {
                json::write(&results, &errors, &mut out)
            } else {
                junit::write(&results, &models, &mut out)
            };
            (results, written.and_then(|()| out.flush()))
        }
    };
    if crate::output::failed_to_write(written) {
        return Exit::Usage;
    }
    runtime.shutdown_timeout(Duration::from_millis(100));
    let trace_failed = match &args.trace {
        Some(dir) => failing_traces::write(dir, &results),
        None => false,
    };
    if let Some((reused, asked)) = hosts.cache_counts() {
        eprintln!("promptforge: cache: {reused} answers reused, {asked} requests to a model");
    }
    if !errors.is_empty() || hosts.refused || trace_failed {
        Exit::Usage
    } else if Totals::of(&results).failed > 0 {
        Exit::Problems
    } else {
        Exit::Ok
    }
}

/// A usage error before any case ran, printed as `format` asks: `promptforge:
/// {message}` on stderr, or (`--format json`) the one JSON object with the
/// refusal as its `error`; exits 2.
fn refuse(format: TestFormat, message: &str) -> Exit {
    refuse_all(format, &[message])
}

/// [`refuse`] with several messages: a line each on stderr, one per line in
/// the JSON object's message.
fn refuse_all(format: TestFormat, messages: &[&str]) -> Exit {
    if format == TestFormat::Json {
        let written = json::write_refusal(&messages.join("\n"), &mut io::stdout().lock());
        crate::output::failed_to_write(written);
    } else {
        for message in messages {
            eprintln!("promptforge: {message}");
        }
    }
    Exit::Usage
}

/// `--filter`, `--shard` and `--live` (which `--models` implies); the error is
/// the usage message.
fn selection(args: &TestArgs) -> Result<Selection, String> {
    let shard = args.shard.as_deref().map(Shard::parse).transpose()?;
    if let Some(models) = &args.models {
        matrix::check_names(models)?;
    }
    Ok(Selection {
        filter: args.filter.clone(),
        shard,
        live: args.live || args.models.is_some(),
    })
}

/// Reads one test file found or named.
fn read(target: &Target) -> Result<Loaded, PathError> {
    let fail = |reason: String| PathError {
        path: target.display.clone(),
        reason,
    };
    if target.kind != FileKind::Test {
        return Err(fail(NOT_A_TEST_FILE.to_owned()));
    }
    let text = files::read_text(&target.path).map_err(fail)?;
    load::load(&target.path, &target.display, text)
        .ok_or_else(|| fail(crate::problem::INTERNAL_ERROR.to_owned()))
}

/// The files and cases to run: the selection is made over every case of every file
/// (so shards are global and stable); a file is kept when it has errors or some
/// case chosen.
fn plan(
    loaded: &[(&Target, Loaded)],
    selection: &Selection,
    hosts: &mut Hosts,
) -> Vec<PlannedFile> {
    let keys: Vec<(&str, &str, bool)> = loaded
        .iter()
        .flat_map(|(target, file)| {
            file.file
                .cases
                .iter()
                .map(|case| (target.display.as_str(), case_name(case), case.live))
        })
        .collect();
    let mut choices = selection.choose(&keys).into_iter();
    let mut plan = Vec::new();
    for (target, file) in loaded {
        let chosen: Vec<(&promptforge_syntax::test_file::Case, Choice)> = file
            .file
            .cases
            .iter()
            .map(|case| (case, choices.next().unwrap_or(Choice::Leave)))
            .filter(|(_, choice)| *choice != Choice::Leave)
            .collect();
        let mut problems = file.problems.clone();
        let runnable = match &file.prompt {
            Some((prompt_path, prompt_text)) if !file.has_errors() => {
                match hosts.host_for(prompt_path) {
                    Ok(set) => Some(Runnable {
                        host: set.host,
                        pinned: set.pinned,
                        prompt: Arc::from(prompt_text.as_str()),
                    }),
                    Err(error) => {
                        let code = Code::Configuration { error };
                        let problem =
                            Problem::unlocated(&target.display, code.name(), code.message());
                        problems.push(problem);
                        None
                    }
                }
            }
            _ => None,
        };
        let cases: Vec<PlannedCase> = match &runnable {
            Some(runnable) => chosen
                .into_iter()
                .flat_map(|(case, choice)| {
                    let name = case_name(case);
                    let planned = PlannedCase {
                        case: Arc::new(case.clone()),
                        runs: choice == Choice::Run,
                        name: name.to_owned(),
                        position: file.index.position(&file.text, case.range.start),
                        seed: case.seed.unwrap_or_else(|| default_seed(name)),
                        model: None,
                    };
                    matrix::per_model(planned, &runnable.pinned)
                })
                .collect(),
            None => Vec::new(),
        };
        if runnable.is_none() || !cases.is_empty() {
            plan.push(PlannedFile {
                file: target.display.clone(),
                text: file.text.clone(),
                index: file.index.clone(),
                problems,
                runnable,
                cases,
            });
        }
    }
    plan
}

/// A case's name (empty for a case without one, which is a problem of its file).
fn case_name(case: &promptforge_syntax::test_file::Case) -> &str {
    case.name.as_ref().map_or("", |n| n.value.as_str())
}

/// An observer for the formats written at the end.
struct Silent;

impl Observer for Silent {
    fn file(&mut self, _file: &FileResult) {}
    fn case(&mut self, _file: &FileResult, _case: &CaseResult) {}
}

/// The progress bar on stderr while `cases` cases run.
fn progress_bar(cases: usize) -> ProgressBar {
    let bar = ProgressBar::new(u64::try_from(cases).unwrap_or(u64::MAX));
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} cases {elapsed}") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// Removes the progress bar.
fn finish(bar: Option<&ProgressBar>) {
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}
