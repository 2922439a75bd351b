//! Call counts (Tools chapter, "Counting calls"): `tools.calls`, a read-only live
//! view of the section's counts, and the run-wide counts of the outcome.

use std::sync::Arc;

use mlua::{Lua, MetaMethod, UserData, UserDataMethods, Value};

use crate::messages;
use crate::run::context::SectionCtx;
use crate::run::tools::object::ToolObject;
use crate::run::tools::scope::bound_scope;
use crate::run::vm::{describe, usage_error};

/// Counts one call attempt of `alias` in the calling section, when the call is made
/// and before the tool runs: the section's bound scope is seeded with 0, then the
/// alias counts up. The section's first tool call also makes `sys.model` readable.
pub fn count_call(ctx: &SectionCtx, alias: &str) {
    let scope = bound_scope(ctx);
    ctx.with_state(|s| {
        s.first_call = true;
        let counts = s.tools.counts.get_or_insert_with(Default::default);
        for scoped in scope {
            counts.entry(scoped).or_insert(0);
        }
        *counts.entry(alias.to_owned()).or_insert(0) += 1;
    });
    ctx.run.tools.count_run(alias);
}

/// True once the section made its first tool call (`tools.calls` exists).
pub fn has_counts(ctx: &SectionCtx) -> bool {
    ctx.with_state(|s| s.tools.counts.is_some())
}

/// `tools.calls`: reads the section's counts at the moment of each read.
pub struct CallsView(pub Arc<SectionCtx>);

impl CallsView {
    fn read(&self, key: &str) -> Result<u64, String> {
        let ctx = &self.0;
        let counts = ctx.with_state(|s| s.tools.counts.clone().unwrap_or_default());
        if let Some(count) = counts.get(key) {
            return Ok(*count);
        }
        let seeded: Vec<String> = counts.keys().cloned().collect();
        let bound_unscoped = ctx.run.prepared.bound_aliases().iter().any(|a| a == key)
            && !bound_scope(ctx).iter().any(|a| a == key);
        Err(messages::calls_no_seeded_count(
            key,
            &seeded,
            bound_unscoped,
        ))
    }
}

/// The alias a key names: a string, or a Tool object's alias.
fn key_text(lua: &Lua, key: Value) -> String {
    match key {
        Value::String(s) => s.to_string_lossy(),
        Value::UserData(ud) if ud.is::<ToolObject>() => ud
            .borrow::<ToolObject>()
            .map(|t| t.alias.clone())
            .unwrap_or_default(),
        other => describe(lua, other),
    }
}

impl UserData for CallsView {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::Index, |lua, this, key: Value| {
            let key = key_text(lua, key);
            this.read(&key).map_err(usage_error)
        });
        methods.add_meta_method(MetaMethod::NewIndex, |_, _, (_, _): (Value, Value)| {
            Err::<(), _>(usage_error(messages::TOOLS_CALLS_READ_ONLY))
        });
        methods.add_meta_method(MetaMethod::Pairs, |lua, this, ()| {
            let counts = this
                .0
                .with_state(|s| s.tools.counts.clone().unwrap_or_default());
            let snapshot = lua.create_table()?;
            for (alias, count) in counts {
                snapshot.raw_set(alias, count)?;
            }
            let next: mlua::Function = lua.globals().raw_get("next")?;
            Ok((next, snapshot, Value::Nil))
        });
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            let counts = this
                .0
                .with_state(|s| s.tools.counts.clone().unwrap_or_default());
            let items: Vec<String> = counts.iter().map(|(a, c)| format!("{a}={c}")).collect();
            Ok(format!("tools.calls {}", messages::list(&items)))
        });
    }
}
