//! `promptforge.run`: runs a prompt as the editor has it, on the Host of its
//! folder (found as `promptforge run` finds it), with `input.ask` going to the
//! editor; a run that fails at a known place leaves a diagnostic there.

use std::sync::Arc;
use std::time::Instant;

use promptforge_engine::models::echo::EchoProvider;
use promptforge_engine::run::{run, RunOptions};
use promptforge_engine::{prepare, RunError, RunErrorKind, Store};
use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Range};

use crate::run::ask::EditorInput;
use crate::run::events::{millis, LspEvents};
use crate::run::protocol::RunEvent;
use crate::run::{host_for, Runner, Source};
use crate::run_failures::{FailureKey, RUN_SOURCE};
use crate::snapshot::Snapshot;

/// What `promptforge.run` was asked to run.
pub struct PromptJob {
    /// The prompt as the editor has it (or as its file holds it, when not open).
    pub source: Source,
    /// The argument string.
    pub args: String,
    /// The seed.
    pub seed: Option<u64>,
    /// Every label answered by `echo`: a preview of the requests, no model called.
    pub offline: bool,
}

/// The title of the run's progress: `Running {name}` (the frontmatter's name, else
/// the file's).
pub fn title(snapshot: &Snapshot) -> String {
    let name = snapshot
        .analysis
        .document
        .frontmatter
        .as_ref()
        .and_then(|f| f.name.as_ref())
        .map(|n| n.value.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| file_name(snapshot));
    format!("Running {name}")
}

/// The last segment of the document's path.
pub fn file_name(snapshot: &Snapshot) -> String {
    let path = crate::test_uris::path_of(&snapshot.uri);
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| snapshot.uri.to_string())
}

/// The LSP range of the 1-based `line` of the snapshot (its text without the
/// indentation and the line end), from the 1-based `column` when it is past 1.
pub fn line_range(snapshot: &Snapshot, line: u32, column: u32) -> Option<Range> {
    let index = &snapshot.analysis.line_index;
    let bytes = index.line_range(&snapshot.text, line.checked_sub(1)?)?;
    let text = snapshot.text.get(bytes.clone())?;
    let skip = if column > 1 {
        let chars = usize::try_from(column - 1).unwrap_or(usize::MAX);
        text.char_indices()
            .nth(chars)
            .map_or(text.len(), |(at, _)| at)
    } else {
        text.len() - text.trim_start().len()
    };
    let start = (bytes.start + skip).min(bytes.end);
    Some(snapshot.positions().range(&(start..bytes.end)))
}

/// A failure's diagnostic at `range`.
pub fn failure_diagnostic(range: Range, source: &str, code: &str, message: String) -> Diagnostic {
    Diagnostic {
        range,
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String(code.to_owned())),
        source: Some(source.to_owned()),
        message,
        ..Diagnostic::default()
    }
}

/// Runs the prompt; returns the run's last event.
pub async fn run_prompt(
    runner: &Runner,
    run_id: &str,
    job: PromptJob,
    events: &Arc<LspEvents>,
    cancel: &CancellationToken,
) -> RunEvent {
    let started = Instant::now();
    let snapshot = Arc::clone(&job.source.snapshot);
    let analysis = &snapshot.analysis;
    let problems = if snapshot.text_is_prompt {
        analysis.diagnostics.clone()
    } else {
        analysis.not_a_prompt_diagnostics(&snapshot.text)
    };
    if let Some(problem) = problems.iter().find(|d| d.code.parse_kind().is_some()) {
        let range = snapshot.positions().range(&problem.range);
        let kind = problem.code.name().to_owned();
        let message = problem.message.clone();
        show(runner, &job.source, Some((range, &kind, &message))).await;
        return RunEvent::Failed {
            kind,
            message,
            range: Some(range),
            trace_id: None,
        };
    }
    let mut host = match host_for(
        &crate::test_uris::path_of(&snapshot.uri),
        &runner.trust.policy(),
    ) {
        Ok(host) => host,
        Err(message) => {
            return RunEvent::Failed {
                kind: promptforge_syntax::Code::Configuration {
                    error: message.clone(),
                }
                .name()
                .to_owned(),
                message,
                range: None,
                trace_id: None,
            }
        }
    };
    if job.offline {
        host.override_models("echo", Arc::new(EchoProvider));
    }
    let input = EditorInput::new(runner.client.clone(), run_id.to_owned());
    host.set_input(Some(Arc::new(input)));
    let host = Arc::new(host);
    let store = Arc::new(Store::in_memory());
    let options = RunOptions {
        args: job.args,
        seed: job.seed,
        cancel: cancel.clone(),
        debugger: None,
        trace: true,
    };
    let prepared = prepare(
        &snapshot.text,
        analysis,
        &host,
        Arc::clone(&store),
        cancel.clone(),
    )
    .await;
    let (result, error, trace) = match prepared {
        Ok(prepared) => {
            let outcome = run(Arc::new(prepared), host, store, options, events.clone()).await;
            (outcome.result, outcome.error, outcome.trace)
        }
        Err(error) => (None, Some(error), None),
    };
    let last = match error {
        None => {
            show(runner, &job.source, None).await;
            RunEvent::Finished {
                result,
                duration_ms: millis(started.elapsed()),
                trace_id: None,
            }
        }
        Some(error) => failed(runner, &job.source, error).await,
    };
    match trace {
        Some(trace) if runner.traces.keep(run_id, &trace) => last.with_trace_id(trace.run_id),
        _ => last,
    }
}

/// The last event of a failed run, after its diagnostic is shown (a cancelled
/// run leaves the diagnostics as they were).
async fn failed(runner: &Runner, source: &Source, error: RunError) -> RunEvent {
    let range = error
        .position
        .and_then(|p| line_range(&source.snapshot, p.line, p.column));
    let kind = error.kind.as_str().to_owned();
    if error.kind != RunErrorKind::Cancelled {
        let shown = range.map(|range| (range, kind.as_str(), error.message.as_str()));
        show(runner, source, shown).await;
    }
    RunEvent::Failed {
        kind,
        message: error.message,
        range,
        trace_id: None,
    }
}

/// Shows the run's failure in place (None: the run left none) and re-publishes
/// the document.
async fn show(runner: &Runner, source: &Source, failure: Option<(Range, &str, &str)>) {
    let diagnostic = failure.map(|(range, kind, message)| {
        failure_diagnostic(range, RUN_SOURCE, kind, message.to_owned())
    });
    let uri = &source.snapshot.uri;
    let failures = &runner.publisher.failures;
    let had = !failures.shown(uri, source.version()).is_empty();
    if diagnostic.is_none() && !had {
        return;
    }
    failures.replace(uri, FailureKey::Run, source.version(), diagnostic);
    runner.publisher.refresh(uri).await;
}
