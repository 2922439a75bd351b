//! The H1 pass and the walk (`language.md` §2): a fresh VM per section (shared
//! library, then globals, then its blocks), off-walk sections, jumps, results.
//! The globals come in as [`Globals`] (the Lua API layer's), so the walk never
//! names the layer above it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::FutureExt;

use crate::error::{RunError, RunErrorKind};
use crate::messages;
use crate::run::chain_var;
use crate::run::context::{Chain, Globals, RunShared, SectionCtx, SectionState};
use crate::run::location::{children_at, Located, SectionPath};
use crate::run::vm::{self, exec_block, BlockFailure, VmControl, VmDebug};
use crate::trace::{EventKind, OpenSpan, SpanKind};
use promptforge_syntax::{Body, Document};

/// How one section's run ended.
#[derive(Debug)]
pub enum SectionOutcome {
    /// A block returned a scalar: the result.
    Result(String),
    /// Every block ran without a result.
    Done,
    /// A block jumped.
    Jump(Located),
}

/// Ends a section's tasks when dropped (the section ended, however it ended): every
/// task it started that is still running is marked cancelled at once and stopped.
struct SectionEnd(Arc<SectionCtx>);

impl Drop for SectionEnd {
    fn drop(&mut self) {
        let (scope, started) = self
            .0
            .with_state(|s| (s.tools.task_scope.clone(), s.tools.started.clone()));
        for id in started {
            self.0.run.tools.tasks.mark_cancelled(&id);
        }
        scope.cancel();
    }
}

/// Runs the section at `path` (the H1 pass for an empty path) in a fresh VM with
/// `globals`.
pub async fn run_section(
    run: Arc<RunShared>,
    chain: Arc<Chain>,
    path: SectionPath,
    globals: Globals,
) -> Result<SectionOutcome, RunError> {
    let document = run.prepared.document.clone();
    let (heading, body, line) = match document.section_at(&path) {
        Some(section) => (
            section.heading.text.to_string(),
            &section.body,
            Some(section.heading.line + 1),
        ),
        None => (
            String::new(),
            &document.h1_body,
            document.title.as_ref().map(|t| t.line + 1),
        ),
    };
    enter_section(&run, &chain, line).await?;
    run.events.section(&heading);
    let span = run.open_span(chain.trace_parent, line, || SpanKind::Section {
        heading: heading.clone(),
        outcome: None,
    });
    let debug = chain.debug.as_ref().map(|debug| {
        let thread = &debug.thread;
        let shown = match path.len() {
            0 => format!("# {}", document.title.as_ref().map_or("", |t| &*t.text)),
            depth => format!("{} {heading}", "#".repeat(depth + 1)),
        };
        thread.debugger().enter_section(thread.id(), shown.clone());
        let shared = document.h1_body.blocks.iter().copied();
        let shared = shared.filter(|&i| document.lua_blocks.get(i).is_some_and(|b| b.shared));
        let blocks = body.blocks.iter().copied().chain(shared).collect();
        VmDebug::new(
            thread.debugger().clone(),
            thread.id(),
            (path.clone(), shown, blocks),
            debug.caller_frames.clone(),
            debug.protected,
        )
    });
    let control = Arc::new(VmControl::new(chain.cancel.clone(), run.limits).with_debug(debug));
    let ctx = Arc::new(SectionCtx {
        run: run.clone(),
        chain: chain.clone(),
        path,
        heading,
        control: control.clone(),
        state: Mutex::new(SectionState::default()),
        trace_span: span.as_ref().and_then(OpenSpan::id),
    });
    let outcome = section_body(&ctx, globals, body).await;
    if let Some(span) = span {
        end_section_span(&document, span, &outcome);
    }
    outcome
}

/// Every step of every walk (a jump, a `call`, a fall-through, a fanout arm's or
/// a task's start) enters a section through here, so the Host is heard there
/// even when the sections never suspend nor reach the instruction budget (a
/// section that jumps to itself): the task yields to its runtime once its
/// budget of work is spent, a cancelled chain stops, and the run's count of
/// sections entered is charged against `[limits] walk_sections` (past it, the
/// limit is at the heading of the section not entered: `line`).
async fn enter_section(run: &RunShared, chain: &Chain, line: Option<u32>) -> Result<(), RunError> {
    tokio::task::consume_budget().await;
    if chain.cancel.is_cancelled() {
        return Err(RunError::cancelled());
    }
    let limit = run.limits.walk_sections;
    if run.sections_entered.fetch_add(1, Ordering::Relaxed) >= limit {
        let message = messages::walk_sections_limit(limit);
        let error = RunError::new(RunErrorKind::Limit, message);
        return Err(match line {
            Some(line) => error.at_line(line),
            None => error,
        });
    }
    Ok(())
}

/// Ends a section's span with how the section ended (a jump is an event naming
/// its target).
fn end_section_span(
    document: &Document,
    span: OpenSpan,
    outcome: &Result<SectionOutcome, RunError>,
) {
    let (word, error) = match outcome {
        Ok(SectionOutcome::Result(_)) => ("result", None),
        Ok(SectionOutcome::Done) => ("done", None),
        Ok(SectionOutcome::Jump(target)) => {
            let mut path = target.parent.clone();
            path.push(target.index);
            let heading = document
                .section_at(&path)
                .map_or_else(String::new, |s| s.heading.text.to_string());
            span.event(EventKind::Jump { target: heading });
            ("jump", None)
        }
        Err(error) => ("error", Some(error.message.clone())),
    };
    span.finish(error, |kind| {
        if let SpanKind::Section { outcome, .. } = kind {
            *outcome = Some(word.to_owned());
        }
    });
}

/// A section's VM from its creation to its outcome.
async fn section_body(
    ctx: &Arc<SectionCtx>,
    globals: Globals,
    body: &Body,
) -> Result<SectionOutcome, RunError> {
    let document = ctx.run.prepared.document.clone();
    let control = ctx.control.clone();
    // Tasks still running when the section ends are cancelled.
    let _end_tasks = SectionEnd(ctx.clone());
    let lua = vm::new_lua(&control)
        .map_err(|e| RunError::internal(format!("a Lua VM cannot be created: {e}")))?;
    lua.set_app_data(vm::errors::BlockStarts(
        document.lua_blocks.iter().map(|b| b.first_line).collect(),
    ));
    let installed = globals.install_base(&lua, ctx);
    installed.map_err(|e| RunError::internal(format!("the Lua API cannot be installed: {e}")))?;

    control
        .shared_loading
        .store(true, std::sync::atomic::Ordering::SeqCst);
    for index in document.h1_body.blocks.iter().copied() {
        if document.lua_blocks.get(index).is_some_and(|b| b.shared) {
            match exec_block(&lua, &control, &document, &ctx.run.prepared.text, index).await {
                Ok(_) => {}
                Err(BlockFailure::Error(error)) => return Err(error),
                Err(BlockFailure::Jump(_)) => {
                    return Err(RunError::internal("a jump escaped the shared library"));
                }
            }
        }
    }
    control
        .shared_loading
        .store(false, std::sync::atomic::Ordering::SeqCst);
    globals
        .install_handles(&lua, ctx)
        .map_err(|e| RunError::internal(format!("the globals cannot be installed: {e}")))?;

    let mut outcome = SectionOutcome::Done;
    for index in body.blocks.iter().copied() {
        if document.lua_blocks.get(index).is_some_and(|b| b.shared) {
            continue;
        }
        match exec_block(&lua, &control, &document, &ctx.run.prepared.text, index).await {
            Ok(Some(result)) => {
                outcome = SectionOutcome::Result(result);
                break;
            }
            Ok(None) => {}
            Err(BlockFailure::Jump(target)) => {
                outcome = SectionOutcome::Jump(target);
                break;
            }
            Err(BlockFailure::Error(error)) => return Err(error),
        }
    }
    chain_var::sync_back(&lua, ctx).map_err(|message| RunError::new(RunErrorKind::Lua, message))?;
    Ok(outcome)
}

/// Walks the children of `parent` from `start` (which runs even when off the walk
/// if `addressed`); returns the result, or None when the walk falls off the end.
pub fn walk_from(
    run: Arc<RunShared>,
    chain: Arc<Chain>,
    parent: SectionPath,
    start: usize,
    addressed: bool,
    globals: Globals,
) -> BoxFuture<'static, Result<Option<String>, RunError>> {
    async move {
        let document = run.prepared.document.clone();
        let mut index = start;
        let mut addressed = addressed;
        loop {
            let siblings = children_at(&document, &parent);
            let Some(section) = siblings.get(index) else {
                return Ok(None);
            };
            if section.off_walk && !addressed {
                index += 1;
                continue;
            }
            addressed = false;
            let mut path = parent.clone();
            path.push(index);
            match run_section(run.clone(), chain.clone(), path.clone(), globals).await? {
                SectionOutcome::Result(result) => return Ok(Some(result)),
                SectionOutcome::Done => index += 1,
                SectionOutcome::Jump(target) if target.parent == parent => {
                    index = target.index;
                    addressed = true;
                }
                SectionOutcome::Jump(target) => {
                    let child_walk = walk_from(
                        run.clone(),
                        chain.clone(),
                        target.parent,
                        target.index,
                        true,
                        globals,
                    );
                    if let Some(result) = child_walk.await? {
                        return Ok(Some(result));
                    }
                    index += 1;
                }
            }
        }
    }
    .boxed()
}

/// A chain from a resolved target: a walk from it with every rule of the walk.
pub fn chain_from(
    run: Arc<RunShared>,
    chain: Arc<Chain>,
    target: Located,
    globals: Globals,
) -> BoxFuture<'static, Result<Option<String>, RunError>> {
    walk_from(run, chain, target.parent, target.index, true, globals)
}

/// The whole run after prepare: the H1 pass, then the walk, every section VM with
/// `globals`.
pub async fn run_main(
    run: Arc<RunShared>,
    chain: Arc<Chain>,
    globals: Globals,
) -> Result<Option<String>, RunError> {
    let h1 = run_section(run.clone(), chain.clone(), Vec::new(), globals)
        .await
        .map_err(|error| match error.kind {
            RunErrorKind::Cancelled => error,
            _ => error.in_h1_pass(),
        })?;
    match h1 {
        SectionOutcome::Result(result) => Ok(Some(result)),
        SectionOutcome::Done => walk_from(run, chain, Vec::new(), 0, false, globals).await,
        SectionOutcome::Jump(target) => chain_from(run, chain, target, globals).await,
    }
}
