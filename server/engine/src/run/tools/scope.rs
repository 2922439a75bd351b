//! A section's scope (Tools chapter, "Advertising tools to the model"): the bound
//! scope in scope order, description precedence, and the tools each round offers.

use std::sync::Arc;

use promptforge_syntax::frontmatter::names::is_valid_alias;
use serde_json::Value as Json;

use crate::error::{EngineError, ErrorKind};
use crate::harness::Tool;
use crate::messages;
use crate::models::ToolSpec;
use crate::run::context::SectionCtx;
use crate::run::tools::{is_engine_tool, tasks};

/// The alias rule, checked first by `tools.always`, `tools.add` and `tools.add_local`.
pub fn check_alias(alias: &str) -> Result<(), String> {
    if is_valid_alias(alias) {
        Ok(())
    } else {
        Err(messages::invalid_alias(alias))
    }
}

/// The tool bound under `alias`, when the alias is a bound tool slot (a slot whose
/// path the catalog lacks is not bound).
pub fn bound_tool(ctx: &SectionCtx, alias: &str) -> Option<Arc<dyn Tool>> {
    ctx.run.prepared.slot(alias).and_then(|s| s.tool.clone())
}

/// The section's bound scope in scope order: the `tools.always` aliases, then the
/// section's `tools.add` aliases in the order first added, each alias once.
pub fn bound_scope(ctx: &SectionCtx) -> Vec<String> {
    let mut scope = ctx.run.tools.always().aliases;
    let added = ctx.with_state(|s| s.tools.added.clone());
    for alias in added {
        if !scope.contains(&alias) {
            scope.push(alias);
        }
    }
    scope
}

/// Records `tools.add` entries (already checked) and the section's override.
pub fn record_add(ctx: &SectionCtx, aliases: Vec<String>, description: Option<String>) {
    ctx.with_state(|s| {
        for alias in aliases {
            if let Some(description) = &description {
                s.tools.overrides.insert(alias.clone(), description.clone());
            }
            if !s.tools.added.contains(&alias) {
                s.tools.added.push(alias);
            }
        }
    });
}

/// The description the model sees: a `tools.add` override, else a `tools.always`
/// override, else the catalog's.
pub fn description(ctx: &SectionCtx, alias: &str, tool: &dyn Tool) -> String {
    if let Some(text) = ctx.with_state(|s| s.tools.overrides.get(alias).cloned()) {
        return text;
    }
    if let Some(text) = ctx.run.tools.always().overrides.get(alias) {
        return text.clone();
    }
    tool.description().to_owned()
}

/// The tools one round offers: the bound scope in scope order, then the local tools
/// in registration order, then the Engine's task tools when `tools.allow_tasks` set
/// a list. A name of an Engine tool is never offered as an alias (the Engine's tool
/// takes precedence). A bound tool whose schema is not a JSON object fails the run
/// with kind Binding.
pub fn offered(ctx: &SectionCtx) -> Result<Vec<ToolSpec>, EngineError> {
    let mut specs: Vec<ToolSpec> = Vec::new();
    for alias in bound_scope(ctx) {
        if is_engine_tool(&alias) {
            continue;
        }
        let Some(tool) = bound_tool(ctx, &alias) else {
            continue;
        };
        let parameters = tool.parameters().clone();
        if !matches!(parameters, Json::Object(_)) {
            return Err(EngineError::new(
                ErrorKind::Binding,
                messages::schema_build_failure(&alias),
            ));
        }
        specs.push(ToolSpec {
            description: description(ctx, &alias, tool.as_ref()),
            name: alias,
            parameters,
        });
    }
    let (locals, allowed) =
        ctx.with_state(|s| (s.tools.locals.clone(), s.tools.allow_tasks.clone()));
    for local in locals {
        if is_engine_tool(&local.alias) || specs.iter().any(|s| s.name == local.alias) {
            continue;
        }
        specs.push(ToolSpec {
            name: local.alias,
            description: local.description,
            parameters: local.schema,
        });
    }
    if let Some(allowed) = allowed.filter(|a| !a.is_empty()) {
        specs.extend(tasks::specs(&allowed));
    }
    Ok(specs)
}

/// The in-scope aliases a message lists: the offered names without the Engine's tools.
pub fn in_scope_aliases(offered: &[ToolSpec]) -> Vec<String> {
    offered
        .iter()
        .filter(|s| !is_engine_tool(&s.name))
        .map(|s| s.name.clone())
        .collect()
}
