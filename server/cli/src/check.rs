//! `promptforge check`: parse every prompt and print every problem.

use std::fs;
use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};

use promptforge_syntax::{is_prompt, parse};

use crate::cli::{CheckArgs, GlobalArgs};
use crate::files::{self, PathError, Target};
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
    for target in &collected.targets {
        match check_file(target) {
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

/// Reads, recognises and analyses one file.
fn check_file(target: &Target) -> FileOutcome {
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
    match analyse(&target.display, &text) {
        Some(problems) => FileOutcome::Checked(problems),
        None => FileOutcome::Failed(PathError {
            path: target.display.clone(),
            reason: "internal error: the parser failed on this file; please report it".to_owned(),
        }),
    }
}

/// The problems of one prompt's text; None if the parser panicked (a bug, reported
/// as such instead of aborting the whole check).
fn analyse(path: &str, text: &str) -> Option<Vec<Problem>> {
    let analysis = panic::catch_unwind(AssertUnwindSafe(|| parse(text))).ok()?;
    Some(
        analysis
            .diagnostics
            .iter()
            .map(|diag| Problem::from_diagnostic(path, text, &analysis.line_index, diag))
            .collect(),
    )
}
