//! Requirement evaluation (Tools chapter, "Declaring Plugins" to "Tool slots";
//! `language.md` §2): what a frontmatter needs from its Host's catalog, judged
//! against a [`CatalogView`] and returned as diagnostics on the entry, id or slot
//! value each is about. The view is plain data the engine fills in (activating the
//! declared Plugins, binding the labels); `prepare` renders its refusal (the
//! RequirementsUnmet notice) from these same diagnostics; the language server and
//! `check` place them on their ranges.
//!
//! A missing or failed required Plugin and two conflicting Plugins refuse the run;
//! a slot whose Plugin contributed no tools too. An optional Plugin that is
//! skipped, and a slot whose path the catalog lacks (it stays unbound, the run goes
//! ahead), are warnings. A Plugin whose activation has not finished gives nothing.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use promptforge_syntax::frontmatter::PluginDecl;
use promptforge_syntax::messages;
use promptforge_syntax::{Code, Diagnostic, Frontmatter};

/// One tool of a Plugin, as the catalog describes it (copied out of the engine's `Tool`, so the view is plain data).
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
    /// The provider's model name it resolves to, when it binds (what its token
    /// counts are made for).
    pub provider_model: Option<String>,
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

/// The pairs `(i, j)`, `i < j`, of declared Plugins that cannot be activated
/// together: either names the other as a conflict. Each entry is a declaration in
/// order, `Some((id, its conflicts))` when the Harness registers it; an
/// unregistered one conflicts with nothing.
pub fn conflicting_pairs(declared: &[Option<(&str, &[String])>]) -> Vec<(usize, usize)> {
    // Index the ids, then look up each Plugin's conflicts: linear in the entries
    // and their conflicts (plus the pairs found), not quadratic in the entries.
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, entry) in declared.iter().enumerate() {
        if let Some((id, _)) = entry {
            positions.entry(id).or_default().push(index);
        }
    }
    let mut pairs = BTreeSet::new();
    for (index, entry) in declared.iter().enumerate() {
        let Some((_, conflicts)) = entry else {
            continue;
        };
        for other in conflicts.iter().filter_map(|c| positions.get(c.as_str())) {
            for &at in other.iter().filter(|&&at| at != index) {
                pairs.insert((index.min(at), index.max(at)));
            }
        }
    }
    pairs.into_iter().collect()
}
