//! Running the selected cases: each case a task on one multi-thread runtime (at
//! most one per core at once), every verdict delivered in file order, then case
//! order, as soon as all earlier ones are known, whatever order they finish in.

use std::sync::Arc;

use indicatif::ProgressBar;
use promptforge_engine::prompt_tests::answer_cache::CacheUse;
use promptforge_engine::prompt_tests::repeats::PassRate;
use promptforge_engine::prompt_tests::{run_case, CaseOptions, CaseReport, Failure};
use promptforge_engine::trace::Trace;
use promptforge_engine::Host;
use promptforge_syntax::test_file::Case;
use promptforge_syntax::LineIndex;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::problem::Problem;
use crate::test::hosts::PinnedHost;
use crate::test::results::{position, CaseResult, FileResult, Placed, Status};

/// Said for a case whose task panicked (a bug of the engine).
const CASE_PANICKED: &str = "internal error: the case panicked; please report it";

/// What a test file's cases run on.
pub struct Runnable {
    /// The Host of the prompt's folder.
    pub host: Arc<Host>,
    /// Its Hosts pinned to each model of `--models`, in order.
    pub pinned: Vec<PinnedHost>,
    /// The prompt's text.
    pub prompt: Arc<str>,
}

/// A case chosen to run or to be reported as skipped.
pub struct PlannedCase {
    /// The case.
    pub case: Arc<Case>,
    /// True when it runs; false for a skipped live case.
    pub runs: bool,
    /// Its name.
    pub name: String,
    /// Its 1-based line and column in the test file.
    pub position: (u32, u32),
    /// The seed it runs with.
    pub seed: u64,
    /// The model of `--models` it runs on (None: the prompt's own labels).
    pub model: Option<PinnedHost>,
}

/// One test file and what of it runs.
pub struct PlannedFile {
    /// The file's path as printed.
    pub file: String,
    /// The file's text, for the failures' positions.
    pub text: String,
    /// Positions in the text.
    pub index: LineIndex,
    /// Its own problems.
    pub problems: Vec<Problem>,
    /// What its cases run on; None when the file cannot run (it has errors, or its
    /// configuration failed).
    pub runnable: Option<Runnable>,
    /// Its chosen cases, in file order (none when it cannot run).
    pub cases: Vec<PlannedCase>,
}

/// Hears each file's and each case's turn, in order.
pub trait Observer {
    /// A file's turn comes, before its cases.
    fn file(&mut self, file: &FileResult);
    /// A case of `file` is decided.
    fn case(&mut self, file: &FileResult, case: &CaseResult);
}

/// Runs every planned case on `runtime` and returns the results in order, telling
/// `observer` as they become known; `progress` counts the cases that ended.
pub fn run(
    runtime: &tokio::runtime::Runtime,
    plan: Vec<PlannedFile>,
    progress: Option<ProgressBar>,
    observer: &mut dyn Observer,
    options: &CaseOptions,
) -> Vec<FileResult> {
    runtime.block_on(async move {
        let slots = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let gate = Arc::new(Semaphore::new(slots));
        let handles: Vec<Vec<Option<JoinHandle<Ran>>>> = plan
            .iter()
            .map(|file| {
                file.cases
                    .iter()
                    .map(|planned| {
                        let runnable = file.runnable.as_ref().filter(|_| planned.runs)?;
                        let host = planned.model.as_ref().map_or(&runnable.host, |m| &m.host);
                        Some(spawn_case(
                            host.clone(),
                            runnable.prompt.clone(),
                            planned.case.clone(),
                            gate.clone(),
                            progress.clone(),
                            options.clone(),
                        ))
                    })
                    .collect()
            })
            .collect();
        let mut results = Vec::with_capacity(plan.len());
        for (file, handles) in plan.into_iter().zip(handles) {
            let mut result = FileResult {
                file: file.file.clone(),
                problems: file.problems.clone(),
                broken: file.runnable.is_none(),
                cases: Vec::new(),
            };
            observer.file(&result);
            for (planned, handle) in file.cases.iter().zip(handles) {
                let case = match handle {
                    Some(handle) => verdict(&file, planned, handle.await.ok()),
                    None => skipped(planned),
                };
                observer.case(&result, &case);
                result.cases.push(case);
            }
            results.push(result);
        }
        results
    })
}

/// What the verdict of a case that ran needs of its report: not its run's log,
/// result or store, which a case that ends before an earlier one would
/// otherwise hold until that one's verdict is given.
struct Ran {
    failures: Vec<Failure>,
    duration: std::time::Duration,
    seed: u64,
    runs: Option<PassRate>,
    cache: CacheUse,
    /// The trace of a failed case's run.
    trace: Option<Trace>,
}

impl From<CaseReport> for Ran {
    fn from(report: CaseReport) -> Self {
        let trace = (!report.passed()).then_some(report.outcome.trace).flatten();
        Ran {
            failures: report.failures,
            duration: report.duration,
            seed: report.seed,
            runs: report.runs,
            cache: report.cache,
            trace,
        }
    }
}

/// Starts one case; it waits for a free slot first.
fn spawn_case(
    host: Arc<Host>,
    prompt: Arc<str>,
    case: Arc<Case>,
    gate: Arc<Semaphore>,
    progress: Option<ProgressBar>,
    options: CaseOptions,
) -> JoinHandle<Ran> {
    tokio::spawn(async move {
        // The gate is never closed: a failed acquire only runs the case at once.
        let permit = gate.acquire_owned().await.ok();
        let report = run_case(&host, &prompt, &case, options).await;
        drop(permit);
        if let Some(bar) = &progress {
            bar.inc(1);
        }
        Ran::from(report)
    })
}

/// The result of a case that ran (None: its task panicked).
fn verdict(file: &PlannedFile, planned: &PlannedCase, report: Option<Ran>) -> CaseResult {
    let Some(report) = report else {
        return CaseResult {
            name: planned.name.clone(),
            model: model_name(planned),
            position: planned.position,
            status: Status::Failed,
            duration: std::time::Duration::ZERO,
            seed: planned.seed,
            runs: None,
            cache: CacheUse::default(),
            trace: None,
            failures: vec![Placed {
                failure: Failure::new("run", CASE_PANICKED),
                position: planned.position,
            }],
        };
    };
    let failures: Vec<Placed> = report
        .failures
        .into_iter()
        .map(|failure| {
            let at = failure.range.as_ref().map_or(planned.position, |range| {
                position(&file.text, &file.index, range)
            });
            Placed {
                failure,
                position: at,
            }
        })
        .collect();
    let trace = report.trace.map(Box::new);
    CaseResult {
        name: planned.name.clone(),
        model: model_name(planned),
        position: planned.position,
        status: if failures.is_empty() {
            Status::Ok
        } else {
            Status::Failed
        },
        duration: report.duration,
        seed: report.seed,
        failures,
        runs: report.runs,
        cache: report.cache,
        trace,
    }
}

/// The result of a live case not run.
fn skipped(planned: &PlannedCase) -> CaseResult {
    CaseResult {
        name: planned.name.clone(),
        model: model_name(planned),
        position: planned.position,
        status: Status::Skipped,
        duration: std::time::Duration::ZERO,
        seed: planned.seed,
        failures: Vec::new(),
        runs: None,
        cache: CacheUse::default(),
        trace: None,
    }
}

/// The name of the `--models` model a case runs on.
fn model_name(planned: &PlannedCase) -> Option<String> {
    planned.model.as_ref().map(|m| m.model.clone())
}
