//! `promptforge check`: parse and prepare every prompt and print every problem.
//!
//! A prompt without parse problems is prepared against the Host of its own folder
//! (`host.md` §1's discovery), as `run` would: its declared Plugins activate and its
//! slots and model labels bind, so a missing Plugin or an unknown Host model shows
//! here before anything runs.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use promptforge_engine::{prepare, Host, Store};
use promptforge_syntax::{is_prompt, parse, Analysis};
use tokio_util::sync::CancellationToken;

use crate::cli::{CheckArgs, GlobalArgs};
use crate::files::{self, PathError, Target};
use crate::host_setup;
use crate::output;
use crate::problem::Problem;

/// How a `check` ended; each outcome has its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No problem in any file.
    Clean,
    /// At least one problem was printed.
    Problems,
    /// A path could not be read (or the output could not be written).
    Usage,
}

impl Status {
    /// The process exit code: 0, 1 or 2.
    pub fn code(self) -> u8 {
        match self {
            Status::Clean => 0,
            Status::Problems => 1,
            Status::Usage => 2,
        }
    }
}

/// What checking one file gave.
enum FileOutcome {
    /// The file was analysed (or reported as not a prompt).
    Checked(Vec<Problem>),
    /// A Markdown file found in a folder that is not a prompt.
    Skipped,
    /// The file could not be read.
    Failed(PathError),
}

/// Runs `check` and prints its output; returns how it ended.
pub fn run(args: &CheckArgs, global: &GlobalArgs) -> Status {
    let collected = files::collect(&args.paths);
    let mut errors = collected.errors;
    let mut problems = Vec::new();
    let mut checked = 0usize;
    let mut preparer = match Preparer::new(global) {
        Ok(preparer) => preparer,
        Err(error) => {
            eprintln!("promptforge: {error}");
            return Status::Usage;
        }
    };
    for target in &collected.targets {
        match check_file(target, &mut preparer) {
            FileOutcome::Checked(found) => {
                checked += 1;
                if global.verbose {
                    eprintln!("checked {}: {} problem(s)", target.display, found.len());
                }
                problems.extend(found);
            }
            FileOutcome::Skipped => {
                if global.verbose {
                    eprintln!("skipped {}: not a PromptForge prompt", target.display);
                }
            }
            FileOutcome::Failed(error) => errors.push(error),
        }
    }
    for error in &errors {
        eprintln!("promptforge: {}: {}", error.path, error.reason);
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = output::write(args.format, &problems, &mut out).and_then(|()| out.flush());
    if let Err(error) = written {
        if error.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("promptforge: cannot write the output: {error}");
            return Status::Usage;
        }
    }
    if global.verbose {
        eprintln!("{checked} file(s) checked, {} problem(s)", problems.len());
    }
    if !errors.is_empty() {
        Status::Usage
    } else if problems.is_empty() {
        Status::Clean
    } else {
        Status::Problems
    }
}

/// Prepares prompts against the Host of each one's folder (Hosts cached by
/// configuration file).
struct Preparer<'a> {
    global: &'a GlobalArgs,
    runtime: tokio::runtime::Runtime,
    hosts: HashMap<Option<PathBuf>, Arc<Host>>,
}

impl<'a> Preparer<'a> {
    fn new(global: &'a GlobalArgs) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        Ok(Preparer {
            global,
            runtime,
            hosts: HashMap::new(),
        })
    }

    /// The Host for a prompt at `path`.
    fn host_for(&mut self, path: &Path) -> Result<Arc<Host>, String> {
        // Prompts of one folder tree share a configuration: it is read once.
        let key = host_setup::config_path(self.global, Some(host_setup::prompt_dir(path)));
        if let Some(host) = self.hosts.get(&key) {
            return Ok(host.clone());
        }
        let config = host_setup::load_path(self.global, key.as_deref())?;
        let host = Arc::new(host_setup::host_of(config)?);
        self.hosts.insert(key, host.clone());
        Ok(host)
    }

    /// The prepare problem of a parsed prompt, if any.
    fn problems(
        &mut self,
        target: &Target,
        text: &str,
        analysis: &Analysis,
    ) -> Result<Vec<Problem>, String> {
        let host = self.host_for(&target.path)?;
        let store = Arc::new(Store::in_memory());
        let cancel = CancellationToken::new();
        let prepared = self
            .runtime
            .block_on(prepare(text, analysis, &host, store, cancel.clone()));
        // Plugins started for the check (MCP servers) stop now.
        cancel.cancel();
        Ok(match prepared {
            Ok(_) => Vec::new(),
            Err(error) => vec![Problem::from_prepare(
                &target.display,
                text,
                &analysis.line_index,
                &error,
            )],
        })
    }
}

/// Reads, recognises, analyses and prepares one file.
fn check_file(target: &Target, preparer: &mut Preparer<'_>) -> FileOutcome {
    let bytes = match fs::read(&target.path) {
        Ok(bytes) => bytes,
        Err(error) => {
            return FileOutcome::Failed(PathError {
                path: target.display.clone(),
                reason: files::describe_io_error(&error),
            })
        }
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            // A folder may hold Markdown in other encodings that is no prompt of
            // ours: skip it unless it looks like a prompt.
            if !target.explicit && !is_prompt(&String::from_utf8_lossy(error.as_bytes())) {
                return FileOutcome::Skipped;
            }
            let at = error.utf8_error().valid_up_to();
            return FileOutcome::Failed(PathError {
                path: target.display.clone(),
                reason: format!("not UTF-8 text (invalid byte at offset {at})"),
            });
        }
    };
    if !is_prompt(&text) {
        return if target.explicit {
            FileOutcome::Checked(vec![Problem::not_a_prompt(&target.display)])
        } else {
            FileOutcome::Skipped
        };
    }
    let Some((analysis, mut problems)) = analyse(&target.display, &text) else {
        return FileOutcome::Failed(PathError {
            path: target.display.clone(),
            reason: "internal error: the parser failed on this file; please report it".to_owned(),
        });
    };
    if problems.is_empty() {
        match preparer.problems(target, &text, &analysis) {
            Ok(found) => problems = found,
            Err(reason) => {
                return FileOutcome::Failed(PathError {
                    path: target.display.clone(),
                    reason,
                })
            }
        }
    }
    FileOutcome::Checked(problems)
}

/// The analysis and the parse problems of one prompt's text; None if the parser
/// panicked (a bug, reported as such instead of aborting the whole check).
fn analyse(path: &str, text: &str) -> Option<(Analysis, Vec<Problem>)> {
    let analysis = panic::catch_unwind(AssertUnwindSafe(|| parse(text))).ok()?;
    let problems = analysis
        .diagnostics
        .iter()
        .map(|diag| Problem::from_diagnostic(path, text, &analysis.line_index, diag))
        .collect();
    Some((analysis, problems))
}
