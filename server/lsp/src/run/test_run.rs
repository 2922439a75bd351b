//! `promptforge.test`: runs the cases of a test file (all, or the one named) on
//! the engine's prompt-test runner ([`run_case`]), as `promptforge test` does, on
//! the Host of the prompt's folder; each case ends with a `caseFinished` event, a
//! failed case leaves a diagnostic on its `- name:` line, and the run finishes
//! with `N passed, N failed`.
//!
//! The cases run in parallel (one per core at once) and are reported in file
//! order. Each is traced; a failed case's trace is kept with the session's run
//! traces under `RUN.N` (the run's Nth case), which its `caseFinished` names. Their own run events (log lines, sections, tool calls) are not
//! streamed: the status of a test run is its count of cases ended. A live case
//! runs only when it is the one named (as `promptforge test` needs `--live`);
//! skipped ones are counted in the result (`N passed, N failed, N skipped`).

use std::sync::Arc;
use std::time::Instant;

use promptforge_engine::prompt_tests::failure::Failure;
use promptforge_engine::prompt_tests::{run_case, CaseOptions, CaseReport};
use promptforge_engine::Host;
use promptforge_syntax::test_file::Case;
use promptforge_syntax::{Code, Severity};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::run::events::{millis, LspEvents};
use crate::run::prompt::{failure_diagnostic, line_range};
use crate::run::protocol::{FailureDetail, RunEvent};
use crate::run::{host_for, Runner, Source};
use crate::run_failures::{FailureKey, CASE_FAILED, TEST_SOURCE};
use crate::test_files;

/// The `failed` kind of a `case` that the test file does not hold.
pub const NO_SUCH_CASE: &str = "NoSuchCase";

/// What `promptforge.test` was asked to run.
pub struct TestJob {
    /// The test file as the editor has it (or as its file holds it).
    pub source: Source,
    /// The one case to run, by name.
    pub case: Option<String>,
}

/// The title of a test run's progress.
pub fn title(source: &Source) -> String {
    format!(
        "Testing {}",
        crate::run::prompt::file_name(&source.snapshot)
    )
}

/// The rendered text of a case that could not run to its end.
const CASE_PANICKED: &str = "internal error: the case panicked; please report it";

/// Runs the test file's cases; returns the run's last event.
pub async fn run_tests(
    runner: &Runner,
    run_id: &str,
    job: TestJob,
    events: &Arc<LspEvents>,
    cancel: &CancellationToken,
) -> RunEvent {
    let started = Instant::now();
    let snapshot = &job.source.snapshot;
    let loaded = test_files::load(&runner.documents, &snapshot.uri, &snapshot.text);
    if let Some(problem) = loaded
        .problems
        .iter()
        .find(|d| d.severity == Severity::Error)
    {
        return RunEvent::Failed {
            kind: problem.code.name().to_owned(),
            message: problem.message.clone(),
            range: Some(snapshot.positions().range(&problem.range)),
            trace_id: None,
        };
    }
    let Some((prompt_path, prompt_text)) = loaded.prompt else {
        return RunEvent::Failed {
            kind: "TestFile".to_owned(),
            message: "the prompt of the test file cannot be read".to_owned(),
            range: None,
            trace_id: None,
        };
    };
    let all_cases = loaded.file.cases.len();
    let chosen: Vec<Case> = loaded
        .file
        .cases
        .into_iter()
        .filter(|case| match &job.case {
            Some(name) => case.name.as_ref().is_some_and(|n| &n.value == name),
            None => !case.live,
        })
        .collect();
    if let (Some(name), true) = (&job.case, chosen.is_empty()) {
        return RunEvent::Failed {
            kind: NO_SUCH_CASE.to_owned(),
            message: format!(
                "{} has no case named {name:?}",
                crate::run::prompt::file_name(snapshot)
            ),
            range: None,
            trace_id: None,
        };
    }
    let host = match host_for(&prompt_path, &runner.trust.policy()) {
        Ok(host) => Arc::new(host),
        Err(error) => {
            return RunEvent::Failed {
                kind: Code::Configuration {
                    error: error.clone(),
                }
                .name()
                .to_owned(),
                message: error,
                range: None,
                trace_id: None,
            }
        }
    };
    let prompt: Arc<str> = Arc::from(prompt_text.as_str());
    let prompt_uri = tower_lsp::lsp_types::Url::from_file_path(&prompt_path)
        .ok()
        .map(String::from);
    let total = chosen.len();
    let handles = spawn_cases(&host, &prompt, chosen, cancel);
    events.set_message(format!("0/{total} cases"));
    let (mut passed, mut failed) = (0, 0);
    for (done, (case, handle)) in handles.into_iter().enumerate() {
        let (report, duration_ms) = match handle.await {
            Ok((report, ms)) => (Ok(report), ms),
            Err(error) => (Err(error), 0),
        };
        if cancel.is_cancelled() {
            break;
        }
        let name = case.name.as_ref().map_or("", |n| n.value.as_str());
        let (failures, details) = match &report {
            Ok(report) => (
                report.failures.iter().map(|f| f.render()).collect(),
                report
                    .failures
                    .iter()
                    .map(|f| failure_detail(snapshot, f))
                    .collect(),
            ),
            Err(_) => (vec![CASE_PANICKED.to_owned()], Vec::new()),
        };
        let ok = failures.is_empty();
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
        keep_case(runner, &job.source, name, case.range.start, &failures);
        let trace = match &report {
            Ok(report) if !ok => report.outcome.trace.as_ref(),
            _ => None,
        };
        let trace_run_id = trace
            .map(|trace| (case_trace_id(run_id, done), trace))
            .filter(|(id, trace)| runner.traces.keep(id, trace))
            .map(|(id, _)| id);
        let prompt_uri = trace_run_id.as_ref().and(prompt_uri.clone());
        events.send(RunEvent::CaseFinished {
            name: name.to_owned(),
            ok,
            failures,
            duration_ms,
            details,
            trace_run_id,
            prompt_uri,
        });
        events.set_message(format!("{}/{total} cases", done + 1));
    }
    runner.publisher.refresh(&snapshot.uri).await;
    if cancel.is_cancelled() {
        return cancelled();
    }
    let skipped = match job.case {
        Some(_) => 0,
        None => all_cases.saturating_sub(total),
    };
    let mut result = format!("{passed} passed, {failed} failed");
    if skipped > 0 {
        result.push_str(&format!(", {skipped} skipped"));
    }
    RunEvent::Finished {
        result: Some(result),
        duration_ms: millis(started.elapsed()),
        trace_id: None,
    }
}

/// The id a failed case's trace is kept under: the run's, a dot, and the case's
/// place among the run's cases (from 1).
pub fn case_trace_id(run_id: &str, index: usize) -> String {
    format!("{run_id}.{}", index + 1)
}

fn cancelled() -> RunEvent {
    let error = promptforge_engine::RunError::cancelled();
    RunEvent::Failed {
        kind: error.kind.as_str().to_owned(),
        message: error.message,
        range: None,
        trace_id: None,
    }
}

/// Starts every case, at most one per core at once; the handles are in file order.
fn spawn_cases(
    host: &Arc<Host>,
    prompt: &Arc<str>,
    cases: Vec<Case>,
    cancel: &CancellationToken,
) -> Vec<(Case, tokio::task::JoinHandle<(CaseReport, u64)>)> {
    let slots = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let gate = Arc::new(Semaphore::new(slots));
    cases
        .into_iter()
        .map(|case| {
            let (host, prompt, gate) = (Arc::clone(host), Arc::clone(prompt), Arc::clone(&gate));
            let options = CaseOptions {
                cancel: cancel.child_token(),
                trace: true,
                ..CaseOptions::default()
            };
            let running = case.clone();
            let handle = tokio::spawn(async move {
                let _slot = gate.acquire_owned().await;
                let started = Instant::now();
                let report = run_case(&host, &prompt, &running, options).await;
                (report, millis(started.elapsed()))
            });
            (case, handle)
        })
        .collect()
}

/// A failure's parts, its range in the test file's positions.
fn failure_detail(snapshot: &crate::snapshot::Snapshot, failure: &Failure) -> FailureDetail {
    FailureDetail {
        what: failure.what.clone(),
        message: failure.message.clone(),
        range: failure
            .range
            .as_ref()
            .map(|range| snapshot.positions().range(range)),
        expected: failure.expected.as_ref().map(|e| e.as_str().to_owned()),
        actual: failure.actual.as_ref().map(|a| a.as_str().to_owned()),
        exact: failure.exact,
    }
}

/// Keeps a failed case's failures for its `- name:` line (a passed case's go).
fn keep_case(runner: &Runner, source: &Source, name: &str, start: usize, failures: &[String]) {
    let snapshot = &source.snapshot;
    let line = snapshot.analysis.line_index.line_of(start) + 1;
    let diagnostic = match (failures.is_empty(), line_range(snapshot, line, 1)) {
        (false, Some(range)) => Some(failure_diagnostic(
            range,
            TEST_SOURCE,
            CASE_FAILED,
            failures.join("\n"),
        )),
        _ => None,
    };
    let key = FailureKey::Case(name.to_owned());
    runner
        .publisher
        .failures
        .replace(&snapshot.uri, key, source.version(), diagnostic);
}
