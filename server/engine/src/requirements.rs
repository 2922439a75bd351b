//! Requirements against the live Host: the engine's side of the requirement rule.
//! The view and its evaluation are plain data and pure functions in
//! [`promptforge_analysis::requirements`] (re-exported here); this module fills the
//! view in (activating the declared Plugins, binding the model labels with the
//! Host) and builds the run's RequirementsUnmet refusal from the problems found.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use promptforge_syntax::{Code, Diagnostic, Frontmatter};

pub use promptforge_analysis::requirements::{
    declared_ids, evaluate, nearest, CatalogView, LabelBinding, PluginState, PluginView, ToolInfo,
};

use crate::error::{RunError, RunErrorKind};
use crate::harness::{ActivationError, OutputKind, Tool, Trust};
use crate::host::Host;
use crate::messages;

/// The catalog's description of `tool`, copied out of the live tool.
pub fn tool_info(tool: &dyn Tool) -> ToolInfo {
    ToolInfo {
        path: tool.id().as_str().to_owned(),
        wire_name: tool.wire_name().to_owned(),
        description: tool.description().to_owned(),
        parameters: tool.parameters().clone(),
        untrusted: tool.trust() == Trust::Untrusted,
        structured: tool.output_kind() == OutputKind::Structured,
    }
}

/// The state an activation outcome gives: the tools under the Plugin's id (as the
/// Harness admits them), or the failure's reason.
pub fn settled_state(
    id: &str,
    outcome: Result<Vec<Arc<dyn Tool>>, ActivationError>,
) -> PluginState {
    match outcome {
        Ok(tools) => PluginState::Ready(Arc::new(
            tools
                .iter()
                .filter(|t| t.id().is_under(id))
                .map(|t| tool_info(t.as_ref()))
                .collect(),
        )),
        Err(error) => PluginState::Failed(error.reason),
    }
}

/// Binds the frontmatter's model labels in `view` with `host` (`host.md` §2).
pub fn bind_labels(view: &mut CatalogView, host: &Host, frontmatter: &Frontmatter) {
    view.labels = frontmatter
        .models
        .iter()
        .map(|decl| {
            let resolved = host.resolve(
                &decl.label.value,
                decl.model.as_ref().map(|m| m.value.as_str()),
            );
            LabelBinding {
                label: decl.label.value.clone(),
                provider_model: resolved.as_ref().ok().map(|m| m.provider_model.clone()),
                error: resolved.err(),
            }
        })
        .collect();
}

/// The RequirementsUnmet refusal of the problems that refuse the run, if any: the
/// missing Plugins in declaration order (those named only by slots after them),
/// each once, then the conflicts.
pub fn refusal(frontmatter: Option<&Frontmatter>, problems: &[Diagnostic]) -> Option<RunError> {
    let mut declared: HashMap<&str, usize> = HashMap::new();
    let ids = frontmatter
        .into_iter()
        .flat_map(|f| f.plugins.iter().map(|p| p.id.value.as_str()));
    for (index, id) in ids.enumerate() {
        declared.entry(id).or_insert(index);
    }
    let mut missing: Vec<&str> = Vec::new();
    let mut listed: HashSet<&str> = HashSet::new();
    let mut conflicts = Vec::new();
    for problem in problems {
        match &problem.code {
            Code::MissingPlugin { id } | Code::UndeclaredPlugin { id, .. }
                if listed.insert(id.as_str()) =>
            {
                missing.push(id)
            }
            Code::ConflictingPlugins { first, second } => {
                conflicts.push(messages::conflicting_plugins(first, second));
            }
            _ => {}
        }
    }
    if missing.is_empty() && conflicts.is_empty() {
        return None;
    }
    missing.sort_by_key(|id| declared.get(id).copied().unwrap_or(usize::MAX));
    let mut lines = vec![messages::REQUIREMENTS_HEADER.to_owned()];
    lines.extend(missing.iter().map(|id| messages::missing_plugin(id)));
    lines.extend(conflicts);
    Some(RunError::new(
        RunErrorKind::RequirementsUnmet,
        lines.join("\n"),
    ))
}

/// The view of `frontmatter` against `host`: every Plugin it declares activated in
/// order (each listing its tools, then stopped), and its labels bound. What `check`
/// judges a prompt against; the language server builds the same view in the
/// background, one Plugin at a time.
pub async fn activate_declared(
    host: &Host,
    frontmatter: &Frontmatter,
    cancel: &tokio_util::sync::CancellationToken,
) -> CatalogView {
    let mut view = CatalogView {
        registered: host.harness().ids(),
        ..CatalogView::default()
    };
    for id in declared_ids(frontmatter) {
        let Some(plugin) = host.harness().get(id).cloned() else {
            view.plugins.push(PluginView {
                id: id.to_owned(),
                state: PluginState::Unregistered,
                conflicts: Vec::new(),
            });
            continue;
        };
        let stop = cancel.child_token();
        let activation = crate::harness::Activation::new(
            Arc::new(crate::store::Store::in_memory()),
            stop.clone(),
            host.services(),
        );
        let state = settled_state(id, plugin.activate(activation).await);
        // The tools are copied out: a started server can stop now.
        stop.cancel();
        view.plugins.push(PluginView {
            id: id.to_owned(),
            state,
            conflicts: plugin.conflicts(),
        });
    }
    bind_labels(&mut view, host, frontmatter);
    view
}
