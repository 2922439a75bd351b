//! `promptforge check`: every diagnostic the language server shows, for CI.
//!
//! Each prompt is judged against the Host of its own folder (`host.md` §1's
//! discovery), as `run` would prepare it: its declared Plugins activate and its
//! model labels bind. The diagnostics are the semantic layer's, the same the
//! editor places on ranges ([`promptforge_analysis::diagnostics`]), made with the
//! Lua facts read in batches ([`promptforge_analysis::streamed_diagnostics`]);
//! the problems that refuse the run at prepare print as the run's RequirementsUnmet
//! notice. Prompt test files (`*.test.yaml`) are checked too: their own problems
//! ([`crate::test::load`]), in path order with the prompts. Errors exit 1; warnings
//! print and exit 0 unless `--deny warnings`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

use promptforge_analysis::{streamed_diagnostics, Parsed};
use promptforge_engine::host::Found;
use promptforge_engine::requirements::{self, CatalogView};
use promptforge_engine::Host;
use promptforge_luacheck::index_owned;
use promptforge_syntax::{is_prompt, Code, Diagnostic, Frontmatter, Indexed, LineIndex, Severity};
use tokio_util::sync::CancellationToken;

use crate::cli::{CheckArgs, GlobalArgs};
use crate::drop_later::drop_analysis;
use crate::exit::Exit;
use crate::files::{self, FileKind, PathError, Target};
use crate::host_setup;
use crate::output;
use crate::problem::Problem;

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
pub fn run(args: &CheckArgs, global: &GlobalArgs) -> Exit {
    let collected = files::collect(&args.paths, &[FileKind::Prompt, FileKind::Test]);
    let mut errors = collected.errors;
    let mut problems = Vec::new();
    let mut checked = 0usize;
    let mut preparer = match Preparer::new(global) {
        Ok(preparer) => preparer,
        Err(error) => {
            eprintln!("promptforge: {error}");
            return Exit::Usage;
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
    if args.format == crate::cli::Format::Json {
        // The paths that cannot be used are problems of the one JSON array.
        problems.extend(errors.iter().map(|e| Problem::usage(&e.path, &e.reason)));
    } else {
        for error in &errors {
            eprintln!("promptforge: {}: {}", error.path, error.reason);
        }
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = output::write(args.format, &problems, &mut out).and_then(|()| out.flush());
    if output::failed_to_write(written) {
        return Exit::Usage;
    }
    if global.verbose {
        eprintln!("{checked} file(s) checked, {} problem(s)", problems.len());
    }
    let failing = problems.iter().any(|p| match p.severity {
        Severity::Error => true,
        Severity::Warning => args.deny_warnings(),
        Severity::Information => false,
    });
    if !errors.is_empty() {
        Exit::Usage
    } else if failing {
        Exit::Problems
    } else {
        Exit::Ok
    }
}

/// Judges prompts against the Host of each one's folder (Hosts cached by
/// configuration file).
struct Preparer<'a> {
    global: &'a GlobalArgs,
    runtime: tokio::runtime::Runtime,
    hosts: HashMap<Found, Arc<Host>>,
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
        let key = host_setup::find_config(self.global, Some(host_setup::prompt_dir(path)));
        if let Some(host) = self.hosts.get(&key) {
            return Ok(host.clone());
        }
        let config = host_setup::load_path(self.global, &key)?;
        let host = Arc::new(host_setup::host_of(config)?);
        self.hosts.insert(key, host.clone());
        Ok(host)
    }

    /// What a prompt sees of its Host: its declared Plugins activated (and stopped
    /// again), its labels bound.
    fn view(
        &mut self,
        target: &Target,
        frontmatter: Option<&Frontmatter>,
    ) -> Result<CatalogView, String> {
        let host = self.host_for(&target.path)?;
        let Some(frontmatter) = frontmatter else {
            return Ok(CatalogView::default());
        };
        let cancel = CancellationToken::new();
        let view =
            self.runtime
                .block_on(requirements::activate_declared(&host, frontmatter, &cancel));
        // Plugins started for the check (MCP servers) stop now.
        cancel.cancel();
        Ok(view)
    }
}

/// Reads, recognises, analyses and judges one file.
fn check_file(target: &Target, preparer: &mut Preparer<'_>) -> FileOutcome {
    let bytes = match promptforge_engine::user_file::read(&target.path) {
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
            let prompt_kind = target.kind == FileKind::Prompt;
            if !target.explicit
                && prompt_kind
                && !is_prompt(&String::from_utf8_lossy(error.as_bytes()))
            {
                return FileOutcome::Skipped;
            }
            return FileOutcome::Failed(PathError {
                path: target.display.clone(),
                reason: files::not_utf8(&error),
            });
        }
    };
    if target.kind == FileKind::Test {
        return check_test_file(target, text);
    }
    if !is_prompt(&text) {
        return if target.explicit {
            FileOutcome::Checked(Problem::not_a_prompt(&target.display, &text))
        } else {
            FileOutcome::Skipped
        };
    }
    let Some((indexed, text)) = analyse(text) else {
        return FileOutcome::Failed(PathError {
            path: target.display.clone(),
            reason: crate::problem::INTERNAL_ERROR.to_owned(),
        });
    };
    let view = match preparer.view(target, indexed.frontmatter.as_ref()) {
        Ok(view) => view,
        Err(reason) => {
            return FileOutcome::Failed(PathError {
                path: target.display.clone(),
                reason,
            })
        }
    };
    let found = panic::catch_unwind(AssertUnwindSafe(|| {
        let parsed = Parsed::of_indexed(&indexed);
        streamed_diagnostics::diagnostics(&text, parsed, &indexed.sections, &view)
    }));
    let Ok(found) = found else {
        return FileOutcome::Failed(PathError {
            path: target.display.clone(),
            reason: crate::problem::INTERNAL_ERROR.to_owned(),
        });
    };
    let frontmatter = indexed.frontmatter.as_ref();
    let problems = problems(
        &target.display,
        &text,
        frontmatter,
        &indexed.line_index,
        found,
    );
    let text_len = text.len();
    drop_analysis((indexed, text), text_len);
    FileOutcome::Checked(problems)
}

/// The problems of one prompt test file.
fn check_test_file(target: &Target, text: String) -> FileOutcome {
    match crate::test::load::load(&target.path, &target.display, text) {
        Some(loaded) => FileOutcome::Checked(loaded.problems),
        None => FileOutcome::Failed(PathError {
            path: target.display.clone(),
            reason: crate::problem::INTERNAL_ERROR.to_owned(),
        }),
    }
}

/// The analysis and the sections index of one prompt's text, and the text
/// (moved through the parse, not copied); None if the parser panicked (a bug,
/// reported as such instead of aborting the whole check). The section tree is
/// never built: the index, built as the body is read, has what the checks read
/// of it (on a 10 MiB prompt the tree weighs 11 MiB). The Lua facts are read in
/// batches, each dropped once its blocks are checked ([`streamed_diagnostics`]).
fn analyse(text: String) -> Option<(Indexed, String)> {
    panic::catch_unwind(AssertUnwindSafe(|| index_owned(text))).ok()
}

/// The diagnostics as problems, in order; those that refuse the run at prepare
/// print as one RequirementsUnmet notice, where the first of them is. A slot whose
/// Plugin the prompt does not declare also prints on its own, at the slot: the
/// notice says the Plugin is missing, the slot says why.
pub fn problems(
    path: &str,
    text: &str,
    frontmatter: Option<&Frontmatter>,
    index: &LineIndex,
    found: Vec<Diagnostic>,
) -> Vec<Problem> {
    let located = |d: &Diagnostic| matches!(d.code, Code::UndeclaredPlugin { .. });
    let grouped: Vec<&Diagnostic> = found
        .iter()
        .filter(|d| d.code.refuses_requirements() && !located(d))
        .collect();
    // The notice stands where the first refusing diagnostic is, once.
    let first_refusing = found.iter().position(|d| d.code.refuses_requirements());
    let mut notice = requirements::refusal(frontmatter, &found)
        .map(|error| Problem::refusal(path, text, index, &error, &grouped));
    let mut out = Vec::with_capacity(found.len());
    for (at, diag) in found.into_iter().enumerate() {
        if Some(at) == first_refusing {
            out.extend(notice.take());
        }
        if !diag.code.refuses_requirements() || located(&diag) {
            out.push(Problem::from_owned_diagnostic(path, text, index, diag));
        }
    }
    out
}
