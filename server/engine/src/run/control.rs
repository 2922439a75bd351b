//! `jump`, `call` and `fanout` (`language.md` §3.2). The chains they start get the
//! section globals the Lua API layer hands down at install.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use mlua::{Lua, Table, Value};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::error::{ChainFailure, EngineError, ErrorKind, RunError, RunErrorKind};
use crate::messages;
use crate::run::chain_var;
use crate::run::context::{Chain, ChainDebug, Globals, RaceTracker, SectionCtx};
use crate::run::debugger::{ChainKind, Frame};
use crate::run::json::{self, type_name};
use crate::run::location::{resolve, Located};
use crate::run::vm::{
    frames_for_chain, inside_pcall, lazy_function, suspending_call, usage_error, Abort,
};
use crate::run::walk::chain_from;
use crate::trace::{OpenSpan, SpanKind};

fn target_arg(function: &str, value: &Value) -> mlua::Result<String> {
    match value {
        Value::String(s) => Ok(s.to_string_lossy()),
        other => Err(usage_error(messages::target_not_string(
            function,
            type_name(other),
        ))),
    }
}

fn resolve_target(ctx: &SectionCtx, target: &str) -> mlua::Result<Located> {
    resolve(&ctx.run.prepared.sections, &ctx.path, target).map_err(usage_error)
}

/// Raises a chain's run error in the caller: limits and cancellations stay fatal,
/// error values keep their kind, anything else is a plain error.
fn raise_chain_error(ctx: &SectionCtx, error: RunError) -> mlua::Error {
    let kind = match error.kind {
        RunErrorKind::Limit => ErrorKind::Limit,
        RunErrorKind::Cancelled => ErrorKind::Cancelled,
        RunErrorKind::Tool => ErrorKind::Tool,
        RunErrorKind::Model => ErrorKind::Model,
        RunErrorKind::Store => ErrorKind::Store,
        RunErrorKind::Input => ErrorKind::InputUnavailable,
        RunErrorKind::Binding => ErrorKind::Binding,
        _ => {
            return mlua::Error::external(ChainFailure {
                message: error.message,
                position: error.position,
            })
        }
    };
    ctx.control
        .raise(EngineError::new(kind, error.message).with_origin(error.position))
}

/// Where the chains a `call`, a `fanout` or a `task` starts come from, as the
/// run's debugger shows them (taken once, at the call).
pub(crate) struct ChainOrigin {
    /// The caller's frames, innermost first.
    frames: Vec<Frame>,
    /// The caller's stack depth.
    depth: usize,
    /// True when the call is protected (a `pcall` on the caller's stack, or a
    /// protected caller chain).
    protected: bool,
}

impl ChainOrigin {
    /// The origin of chains started here; None when no debugger is attached.
    pub(crate) fn here(ctx: &SectionCtx, lua: &Lua) -> Option<Self> {
        let parent = ctx.chain.debug.as_ref()?;
        let (frames, depth) = frames_for_chain(lua, &ctx.control);
        Some(ChainOrigin {
            frames,
            depth,
            protected: parent.protected || inside_pcall(lua),
        })
    }
}

/// The registration of a new chain of `kind` with the debugger.
fn chain_debug(
    ctx: &SectionCtx,
    origin: Option<&ChainOrigin>,
    kind: ChainKind,
) -> Option<ChainDebug> {
    let (parent, origin) = (ctx.chain.debug.as_ref()?, origin?);
    let protected = origin.protected || matches!(kind, ChainKind::Task(_));
    let thread = parent.thread.debugger().start_thread(
        Some((parent.thread.id(), origin.depth)),
        kind,
        String::new(),
    );
    Some(ChainDebug {
        thread,
        caller_frames: origin.frames.clone(),
        protected,
    })
}

/// The parts of a new chain besides its place in the debugger.
pub(crate) struct NewChain {
    /// `args`.
    pub args: String,
    /// Its copy of `var`.
    pub var: serde_json::Value,
    /// A fanout arm's index and member.
    pub arm: Option<(usize, serde_json::Value)>,
    /// The fanouts its writes count for.
    pub races: Vec<(Arc<RaceTracker>, usize)>,
    /// Its cancel signal.
    pub cancel: tokio_util::sync::CancellationToken,
}

/// A chain one deeper than the caller's, or the depth limit.
pub(crate) fn deeper_chain(
    ctx: &SectionCtx,
    origin: Option<&ChainOrigin>,
    kind: ChainKind,
    new: NewChain,
) -> mlua::Result<Arc<Chain>> {
    let depth = ctx.chain.depth + 1;
    if depth > ctx.run.limits.call_depth {
        return Err(ctx
            .control
            .raise(EngineError::limit(messages::call_depth_limit(
                ctx.run.limits.call_depth,
            ))));
    }
    let trace_span = ctx.run.open_span(ctx.trace_span, None, || SpanKind::Chain {
        kind: kind.describe(),
    });
    Ok(Arc::new(Chain {
        depth,
        args: new.args,
        var: Mutex::new(new.var),
        arm: new.arm,
        races: new.races,
        cancel: new.cancel,
        debug: chain_debug(ctx, origin, kind),
        trace_parent: trace_span
            .as_ref()
            .and_then(OpenSpan::id)
            .or(ctx.trace_span),
        trace_span,
    }))
}

fn current_var(lua: &Lua) -> mlua::Result<serde_json::Value> {
    chain_var::current(lua).map_err(usage_error)
}

/// Installs `jump`, `call` and `fanout`; the chains `call` and `fanout` start get
/// `globals`.
pub fn install(lua: &Lua, ctx: &Arc<SectionCtx>, globals: Globals) -> mlua::Result<()> {
    let table = lua.globals();
    let c = ctx.clone();
    table.set(
        "jump",
        lua.create_function(move |lua, target: Value| {
            if c.control.shared_loading.load(Ordering::SeqCst) {
                return Err::<(), _>(usage_error(messages::JUMP_WHILE_SHARED_LOADS));
            }
            if c.control.handlers.load(Ordering::SeqCst) > 0 {
                return Err(usage_error(messages::JUMP_IN_HANDLER));
            }
            let target = target_arg("jump", &target)?;
            let located = resolve_target(&c, &target)?;
            suspending_call(lua, &c.control, "jump")?;
            Err(c.control.abort(Abort::Jump(located)))
        })?,
    )?;

    let outer = ctx.clone();
    table.set(
        "call",
        lazy_function(lua, move |lua| {
            let c = outer.clone();
            lua.create_async_function(move |lua, (target, input): (Value, Value)| {
                let ctx = c.clone();
                async move {
                    let target = target_arg("call", &target)?;
                    let input = match &input {
                        Value::Nil => String::new(),
                        Value::String(s) => s.to_string_lossy(),
                        other => {
                            return Err(usage_error(messages::call_input_not_string(type_name(
                                other,
                            ))))
                        }
                    };
                    let located = resolve_target(&ctx, &target)?;
                    let var = current_var(&lua)?;
                    suspending_call(&lua, &ctx.control, "call")?;
                    let origin = ChainOrigin::here(&ctx, &lua);
                    let new = NewChain {
                        args: input,
                        var,
                        arm: None,
                        races: ctx.chain.races.clone(),
                        cancel: ctx.chain.cancel.child_token(),
                    };
                    let chain = deeper_chain(&ctx, origin.as_ref(), ChainKind::Call, new)?;
                    match chain_from(ctx.run.clone(), chain, located, globals).await {
                        Ok(result) => Ok(result),
                        Err(error) => Err(raise_chain_error(&ctx, error)),
                    }
                }
            })
        })?,
    )?;

    let outer = ctx.clone();
    table.set(
        "fanout",
        lazy_function(lua, move |lua| {
            let c = outer.clone();
            lua.create_async_function(move |lua, (target, collection): (Value, Value)| {
                let ctx = c.clone();
                async move {
                    let target = target_arg("fanout", &target)?;
                    let members = members_of(&collection)?;
                    let located = resolve_target(&ctx, &target)?;
                    let var = current_var(&lua)?;
                    suspending_call(&lua, &ctx.control, "fanout")?;
                    let origin = ChainOrigin::here(&ctx, &lua);
                    let results =
                        fanout(&ctx, origin.as_ref(), located, members, var, globals).await?;
                    let table = lua.create_table_with_capacity(results.len(), 0)?;
                    for (i, result) in results.into_iter().enumerate() {
                        match result {
                            Some(text) => table.raw_set(i + 1, text)?,
                            None => table.raw_set(i + 1, false)?,
                        }
                    }
                    Ok(table)
                }
            })
        })?,
    )?;
    Ok(())
}

/// The members of a non-empty array table, as JSON.
fn members_of(collection: &Value) -> mlua::Result<Vec<serde_json::Value>> {
    let table: &Table = match collection {
        Value::Table(table) if table.raw_len() > 0 => table,
        Value::Table(_) => return Err(usage_error(messages::fanout_needs_array("an empty table"))),
        other => return Err(usage_error(messages::fanout_needs_array(type_name(other)))),
    };
    let mut members = Vec::new();
    for i in 1..=table.raw_len() {
        let value: Value = table.raw_get(i)?;
        let member = json::to_json(&value)
            .map_err(|t| usage_error(messages::fanout_needs_array(&format!("a member {t}"))))?;
        members.push(member);
    }
    Ok(members)
}

/// Runs one chain per member, at most the Host's concurrency at once; results in
/// member order. The first arm to fail cancels the others and its error is raised.
async fn fanout(
    ctx: &Arc<SectionCtx>,
    origin: Option<&ChainOrigin>,
    target: Located,
    members: Vec<serde_json::Value>,
    var: serde_json::Value,
    globals: Globals,
) -> mlua::Result<Vec<Option<String>>> {
    let tracker = Arc::new(RaceTracker::default());
    let arms_cancel = ctx.chain.cancel.child_token();
    let permits = Arc::new(Semaphore::new(
        ctx.run.limits.fanout_concurrency.max(1) as usize
    ));
    // Arms run as tasks of the runtime, so they use every worker thread; they
    // start in member order as permits free up; dropping the set (the caller
    // stopped waiting) aborts them.
    let mut running: JoinSet<(usize, Result<Option<String>, RunError>)> = JoinSet::new();
    let _stop_arms_when_dropped = arms_cancel.clone().drop_guard();
    let mut first_failure: Option<RunError> = None;
    let mut collected: Vec<(usize, Option<String>)> = Vec::new();
    let mut record =
        |joined: Result<(usize, Result<Option<String>, RunError>), tokio::task::JoinError>,
         first_failure: &mut Option<RunError>| {
            let (i, outcome) = match joined {
                Ok(arm) => arm,
                Err(error) => (
                    usize::MAX,
                    Err(RunError::internal(format!("a fanout arm stopped: {error}"))),
                ),
            };
            // The results wait in host memory until they become the caller's table:
            // they count against the caller's memory ceiling as they arrive.
            let outcome = outcome.and_then(|result| {
                let size = result.as_ref().map_or(0, String::len);
                match ctx.control.charge_host_bytes(size) {
                    Ok(()) => Ok(result),
                    Err(_) => Err(ctx.control.memory_error().into_run_error()),
                }
            });
            match outcome {
                Ok(result) => collected.push((i, result)),
                Err(error) => {
                    if first_failure.is_none() {
                        arms_cancel.cancel();
                        *first_failure = Some(error);
                    }
                }
            }
        };
    let mut members = members.into_iter().enumerate();
    let mut next = members.next();
    while let Some((i, member)) = next.take() {
        if first_failure.is_some() || arms_cancel.is_cancelled() {
            break;
        }
        tokio::select! {
            biased;
            Some(joined) = running.join_next(), if !running.is_empty() => {
                record(joined, &mut first_failure);
                next = Some((i, member));
            }
            permit = permits.clone().acquire_owned() => {
                let Ok(permit) = permit else { break };
                let index = i + 1;
                let mut races = ctx.chain.races.clone();
                races.push((tracker.clone(), index));
                let new = NewChain { args: String::new(), var: var.clone(), arm: Some((index, member)), races, cancel: arms_cancel.child_token() };
                let chain = deeper_chain(ctx, origin, ChainKind::Arm(index), new)?;
                let run = ctx.run.clone();
                let target = target.clone();
                let cancel = arms_cancel.clone();
                running.spawn(async move {
                    let outcome = tokio::select! {
                        outcome = chain_from(run, chain, target, globals) => outcome,
                        () = cancel.cancelled() => Err(RunError::cancelled()),
                    };
                    drop(permit);
                    (i, outcome)
                });
                next = members.next();
            }
            () = arms_cancel.cancelled() => break,
        }
    }
    while let Some(joined) = running.join_next().await {
        record(joined, &mut first_failure);
    }
    let mut results: Vec<Option<String>> = Vec::new();
    if ctx.chain.cancel.is_cancelled() {
        return Err(ctx.control.raise(EngineError::cancelled()));
    }
    if let Some(error) = first_failure {
        return Err(raise_chain_error(ctx, error));
    }
    collected.sort_by_key(|(i, _)| *i);
    results.extend(collected.into_iter().map(|(_, r)| r));
    Ok(results)
}
