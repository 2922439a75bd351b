//! Requirement evaluation (Tools chapter, "Declaring Plugins" to "Tool slots";
//! `language.md` §2): what a frontmatter needs from its Host's catalog, judged
//! against a [`CatalogView`] and returned as diagnostics on the entry, id or slot
//! value each is about. `prepare` renders its refusal (the RequirementsUnmet
//! notice) from these same diagnostics; the language server and `check` place
//! them on their ranges.
//!
//! A missing or failed required Plugin and two conflicting Plugins refuse the run;
//! a slot whose Plugin contributed no tools too. An optional Plugin that is
//! skipped, and a slot whose path the catalog lacks (it stays unbound, the run goes
//! ahead), are warnings. A Plugin whose activation has not finished gives nothing.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use promptforge_syntax::frontmatter::PluginDecl;
use promptforge_syntax::{Code, Diagnostic, Document, Frontmatter};

use crate::error::{RunError, RunErrorKind};
use crate::harness::{conflicting_pairs, ActivationError, OutputKind, Tool, Trust};
use crate::host::Host;
use crate::messages;

/// One tool of a Plugin, as the catalog describes it (copied out of the engine's `Tool`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The tool path, `namespace/plugin/name`.
    pub path: String,
    /// The name the model sees.
    pub wire_name: String,
    /// The description the model sees.
    pub description: String,
    /// The JSON Schema of its parameters.
    pub parameters: serde_json::Value,
    /// True when its output arrives in the untrusted envelope.
    pub untrusted: bool,
    /// True when a script call receives its output decoded from JSON.
    pub structured: bool,
}

impl ToolInfo {
    /// The description of `tool`.
    pub fn of(tool: &dyn Tool) -> Self {
        ToolInfo {
            path: tool.id().as_str().to_owned(),
            wire_name: tool.wire_name().to_owned(),
            description: tool.description().to_owned(),
            parameters: tool.parameters().clone(),
            untrusted: tool.trust() == Trust::Untrusted,
            structured: tool.output_kind() == OutputKind::Structured,
        }
    }
}

/// What is known of one declared Plugin.
#[derive(Debug, Clone, PartialEq)]
pub enum PluginState {
    /// The Host registers no Plugin with this id.
    Unregistered,
    /// Its activation has not finished (or, with a conflict, was never started).
    Pending,
    /// It activated and contributed these tools (only those under its id), in its order.
    Ready(Arc<Vec<ToolInfo>>),
    /// It failed to activate, for this reason.
    Failed(String),
    /// Its configuration is not trusted, so it is not started (`host.md` §1.1): the refusal.
    Untrusted(String),
}

impl PluginState {
    /// The state an activation outcome gives: the tools under the Plugin's id (as the
    /// Harness admits them), or the failure's reason.
    pub fn settled(id: &str, outcome: Result<Vec<Arc<dyn Tool>>, ActivationError>) -> Self {
        match outcome {
            Ok(tools) => PluginState::Ready(Arc::new(
                tools
                    .iter()
                    .filter(|t| t.id().is_under(id))
                    .map(|t| ToolInfo::of(t.as_ref()))
                    .collect(),
            )),
            Err(error) => PluginState::Failed(error.reason),
        }
    }
}

/// One declared Plugin of a view.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginView {
    /// The Plugin id.
    pub id: String,
    /// Its state.
    pub state: PluginState,
    /// The ids of the Plugins it conflicts with.
    pub conflicts: Vec<String>,
}

/// A model label and what the Host made of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelBinding {
    /// The label.
    pub label: String,
    /// The Host's reason when it cannot bind the label.
    pub error: Option<String>,
}

/// What one prompt sees of its Host: the catalog of the Plugins it declares and
/// the binding of its model labels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogView {
    /// The configuration file of the Host (None: the built-in defaults).
    pub config: Option<PathBuf>,
    /// The configuration's error, when no Host could be built from it.
    pub error: Option<String>,
    /// Every Plugin id the Host registers, in registration order.
    pub registered: Vec<String>,
    /// The Plugins asked for (the ones the prompt declares), in the order asked.
    pub plugins: Vec<PluginView>,
    /// The model labels, in declaration order (empty when not asked for).
    pub labels: Vec<LabelBinding>,
}

impl CatalogView {
    /// The view of the Plugin `id`, when it was asked for.
    pub fn plugin(&self, id: &str) -> Option<&PluginView> {
        self.plugins.iter().find(|p| p.id == id)
    }

    /// Every tool of the Plugins asked for that are ready, in declaration order.
    pub fn tools(&self) -> impl Iterator<Item = &ToolInfo> {
        self.plugins.iter().flat_map(|p| match &p.state {
            PluginState::Ready(tools) => tools.as_slice(),
            _ => &[],
        })
    }

    /// The tool at exactly `path` among the Plugins asked for.
    pub fn tool(&self, path: &str) -> Option<&ToolInfo> {
        self.tools().find(|t| t.path == path)
    }

    /// True when no declared Plugin is still activating.
    pub fn settled(&self) -> bool {
        self.plugins.iter().all(|p| p.state != PluginState::Pending)
    }

    /// Binds the frontmatter's model labels with `host` (`host.md` §2).
    pub fn bind_labels(&mut self, host: &Host, frontmatter: &Frontmatter) {
        self.labels = frontmatter
            .models
            .iter()
            .map(|decl| LabelBinding {
                label: decl.label.value.clone(),
                error: host
                    .resolve(
                        &decl.label.value,
                        decl.model.as_ref().map(|m| m.value.as_str()),
                    )
                    .err(),
            })
            .collect();
    }
}

/// The Plugin ids whose catalog a frontmatter needs: its valid declarations, in order.
pub fn declared_ids(frontmatter: &Frontmatter) -> Vec<&str> {
    frontmatter
        .plugins
        .iter()
        .filter(|d| d.valid)
        .map(|d| d.id.value.as_str())
        .collect()
}

/// Every requirement problem of `frontmatter` against `view`, in frontmatter order
/// (a configuration error alone; else conflicts, Plugin entries, slots, labels).
pub fn evaluate(frontmatter: &Frontmatter, view: &CatalogView) -> Vec<Diagnostic> {
    if frontmatter.keys.is_empty() {
        return Vec::new();
    }
    if let Some(error) = &view.error {
        let start = frontmatter.range.start;
        return vec![Diagnostic::new(
            Code::Configuration {
                error: error.clone(),
            },
            start..start + 3,
        )];
    }
    // Indexed by id: a prompt may declare many Plugins, and every slot names one.
    let mut views: HashMap<&str, &PluginView> = HashMap::with_capacity(view.plugins.len());
    for plugin in &view.plugins {
        views.entry(plugin.id.as_str()).or_insert(plugin);
    }
    let declared: Vec<(&PluginDecl, &PluginView)> = frontmatter
        .plugins
        .iter()
        .filter(|d| d.valid)
        .filter_map(|d| Some((d, *views.get(d.id.value.as_str())?)))
        .collect();
    let mut out = Vec::new();
    let conflict = conflicts(&declared, &mut out);
    plugin_entries(&declared, conflict, &mut out);
    if !conflict {
        slots(frontmatter, &declared, view, &mut out);
    }
    labels(frontmatter, view, &mut out);
    out
}

/// The conflicting pairs, each on the later declaration; true when there is one.
fn conflicts(declared: &[(&PluginDecl, &PluginView)], out: &mut Vec<Diagnostic>) -> bool {
    let entries: Vec<Option<(&str, &[String])>> = declared
        .iter()
        .map(|(_, view)| {
            (view.state != PluginState::Unregistered)
                .then_some((view.id.as_str(), view.conflicts.as_slice()))
        })
        .collect();
    let pairs = conflicting_pairs(&entries);
    for &(i, j) in &pairs {
        let (Some((first, _)), Some((second, _))) = (declared.get(i), declared.get(j)) else {
            continue;
        };
        out.push(
            Diagnostic::new(
                Code::ConflictingPlugins {
                    first: first.id.value.clone(),
                    second: second.id.value.clone(),
                },
                second.id.range.clone(),
            )
            .with_related(first.id.range.clone(), messages::RELATED_CONFLICT),
        );
    }
    !pairs.is_empty()
}

/// Declared Plugins the Host lacks or that failed: missing when required, skipped
/// (a warning) when optional. With a conflict nothing activates: only unregistered
/// Plugins are reported.
fn plugin_entries(
    declared: &[(&PluginDecl, &PluginView)],
    conflict: bool,
    out: &mut Vec<Diagnostic>,
) {
    for (decl, view) in declared {
        let reason = match &view.state {
            PluginState::Unregistered => messages::PLUGIN_NOT_REGISTERED.to_owned(),
            PluginState::Failed(reason) if !conflict => reason.clone(),
            PluginState::Untrusted(reason) => {
                // Not the prompt's fault: said once, on the entry, as information.
                let id = view.id.clone();
                let reason = reason.clone();
                out.push(Diagnostic::new(
                    Code::UntrustedPlugin { id, reason },
                    decl.id.range.clone(),
                ));
                continue;
            }
            _ => continue,
        };
        let id = view.id.clone();
        out.push(if decl.optional {
            Diagnostic::new(
                Code::SkippedOptionalPlugin { id, reason },
                decl.id.range.clone(),
            )
        } else {
            Diagnostic::new(Code::MissingPlugin { id }, decl.id.range.clone())
                .with_related(decl.id.range.clone(), reason)
        });
    }
}

/// Each slot: its Plugin undeclared or without tools refuses the run; a path the
/// catalog lacks leaves it unbound (a warning, with the nearest catalog path).
fn slots(
    frontmatter: &Frontmatter,
    declared: &[(&PluginDecl, &PluginView)],
    view: &CatalogView,
    out: &mut Vec<Diagnostic>,
) {
    let mut by_id: HashMap<&str, (&PluginDecl, &PluginView)> = HashMap::new();
    for &(decl, plugin_view) in declared {
        by_id
            .entry(decl.id.value.as_str())
            .or_insert((decl, plugin_view));
    }
    for slot in frontmatter.tools.iter().filter(|s| s.valid) {
        let (Some(path), Some(plugin)) = (&slot.path, slot.plugin_id()) else {
            continue;
        };
        let Some(&(decl, plugin_view)) = by_id.get(plugin) else {
            let undeclared = Code::UndeclaredPlugin {
                id: plugin.to_owned(),
                alias: slot.alias.value.clone(),
                path: path.value.clone(),
                registered: view.registered.iter().any(|id| id == plugin),
            };
            out.push(Diagnostic::new(undeclared, path.range.clone()));
            continue;
        };
        let missing = Code::MissingPlugin {
            id: plugin.to_owned(),
        };
        // A slot backed by an optional Plugin is a parse error already.
        let PluginState::Ready(tools) = &plugin_view.state else {
            continue;
        };
        if decl.optional {
            continue;
        }
        if tools.is_empty() {
            out.push(
                Diagnostic::new(missing, path.range.clone())
                    .with_related(decl.id.range.clone(), messages::RELATED_NO_TOOLS),
            );
            continue;
        }
        if tools.iter().any(|t| t.path == path.value) {
            continue;
        }
        let nearest = nearest(&path.value, view.tools().map(|t| t.path.as_str()));
        out.push(Diagnostic::new(
            Code::UnknownToolPath {
                path: path.value.clone(),
                alias: slot.alias.value.clone(),
                nearest: nearest.map(str::to_owned),
            },
            path.range.clone(),
        ));
    }
}

/// Labels the Host cannot bind, at their `model:` value (or the label without one).
fn labels(frontmatter: &Frontmatter, view: &CatalogView, out: &mut Vec<Diagnostic>) {
    for (decl, binding) in frontmatter.models.iter().zip(&view.labels) {
        let Some(reason) = &binding.error else {
            continue;
        };
        let range = decl
            .model
            .as_ref()
            .map_or(decl.label.range.clone(), |m| m.range.clone());
        out.push(Diagnostic::new(
            Code::UnboundModelLabel {
                label: binding.label.clone(),
                reason: reason.clone(),
            },
            range,
        ));
    }
}

/// The candidate nearest to `word` by edit distance (the first of equals).
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates.min_by_key(|c| strsim::levenshtein(word, c))
}

/// The RequirementsUnmet refusal of the problems that refuse the run, if any: the
/// missing Plugins in declaration order (those named only by slots after them),
/// each once, then the conflicts.
pub fn refusal(document: &Document, problems: &[Diagnostic]) -> Option<RunError> {
    let mut declared: HashMap<&str, usize> = HashMap::new();
    let ids = document
        .frontmatter
        .iter()
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
        let state = PluginState::settled(id, plugin.activate(activation).await);
        // The tools are copied out: a started server can stop now.
        stop.cancel();
        view.plugins.push(PluginView {
            id: id.to_owned(),
            state,
            conflicts: plugin.conflicts(),
        });
    }
    view.bind_labels(host, frontmatter);
    view
}
