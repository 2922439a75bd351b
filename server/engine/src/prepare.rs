//! Prepare (`language.md` §2; Tools chapter, "Declaring Plugins" to "Tool slots"):
//! activate the declared Plugins in order, build the catalog, bind the slots and
//! resolve the model labels, or refuse the run.

use std::collections::HashMap;
use std::sync::Arc;

use promptforge_syntax::{Analysis, Document, Sections};
use tokio_util::sync::CancellationToken;

use crate::error::{Position, RunError, RunErrorKind};
use crate::harness::{conflicting_pairs, Activation, Catalog, Plugin, RunEnd, Tool};
use crate::host::{Host, HostModel};
use crate::messages;
use crate::requirements::{self, CatalogView, PluginState, PluginView};
use crate::store::Store;

/// A tool slot after binding.
#[derive(Clone)]
pub struct BoundSlot {
    /// The alias.
    pub alias: String,
    /// The tool path as written.
    pub path: String,
    /// The tool, when the catalog has exactly that path; None leaves the slot unbound.
    pub tool: Option<Arc<dyn Tool>>,
}

impl std::fmt::Debug for BoundSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundSlot")
            .field("alias", &self.alias)
            .field("path", &self.path)
            .field("bound", &self.tool.is_some())
            .finish()
    }
}

/// A `models:` label resolved to its Host model.
#[derive(Debug, Clone)]
pub struct ModelLabel {
    /// The label.
    pub label: String,
    /// The Host model it resolved to.
    pub model: HostModel,
    /// `temperature:`.
    pub temperature: Option<f64>,
    /// `max_tokens:`.
    pub max_tokens: Option<u64>,
}

/// A prompt ready to run.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The document.
    pub document: Arc<Document>,
    /// The text it was parsed from: its blocks' code is read from it.
    pub text: Arc<str>,
    /// Its sections, which resolve the targets of `jump`, `call` and `fanout`.
    pub sections: Arc<Sections>,
    /// The prompt's name.
    pub name: String,
    /// The run's tool catalog.
    pub catalog: Catalog,
    /// The tool slots in declaration order.
    pub slots: Vec<BoundSlot>,
    /// The model labels in declaration order.
    pub labels: Vec<ModelLabel>,
    /// `max_tool_iterations`.
    pub round_cap: u32,
    /// Log lines of prepare (skipped optional Plugins, refused tools).
    pub log: Vec<String>,
    /// The end of the run it was prepared for: [`crate::run::run`] reaches it
    /// when it returns (or its future is dropped), which kills the processes its
    /// Plugins started, so a prompt is prepared for one run.
    pub end: RunEnd,
    /// The first slot of each alias, by alias.
    slot_index: HashMap<String, usize>,
    /// The first label declaration of each name, by name.
    label_index: HashMap<String, usize>,
}

/// The position of the first item of each name.
fn first_positions<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut index = HashMap::new();
    for (at, name) in names.enumerate() {
        index.entry(name.to_owned()).or_insert(at);
    }
    index
}

impl Prepared {
    /// The slot with this alias.
    pub fn slot(&self, alias: &str) -> Option<&BoundSlot> {
        self.slot_index.get(alias).and_then(|&i| self.slots.get(i))
    }

    /// The label declaration with this name.
    pub fn label(&self, label: &str) -> Option<&ModelLabel> {
        self.label_index
            .get(label)
            .and_then(|&i| self.labels.get(i))
    }

    /// Every bound alias, in declaration order.
    pub fn bound_aliases(&self) -> Vec<String> {
        self.slots
            .iter()
            .filter(|s| s.tool.is_some())
            .map(|s| s.alias.clone())
            .collect()
    }
}

/// A declared Plugin: its id, whether it is optional, the Plugin the Harness has under it.
type Declared<'a> = (&'a str, bool, Option<Arc<dyn Plugin>>);

/// The first parse problem of an analysis, as a run error (`run` refuses at the first).
pub fn first_parse_error(text: &str, analysis: &Analysis) -> Option<RunError> {
    let (diagnostic, kind) = analysis
        .diagnostics
        .iter()
        .find_map(|d| Some((d, d.parse_kind()?)))?;
    let position = diagnostic.located.then(|| {
        let (line, column) = analysis.line_index.position(text, diagnostic.offset);
        Position { line, column }
    });
    Some(RunError::new(RunErrorKind::Parse(kind), diagnostic.message.clone()).at(position))
}

/// Prepares a parsed prompt against `host`; `store` and `cancel` are the run's,
/// handed to the Plugins as they activate. A refusal (or this future dropped)
/// ends the run at once: what the Plugins activated so far started is undone.
pub async fn prepare(
    text: &str,
    analysis: &Analysis,
    host: &Host,
    store: Arc<Store>,
    cancel: CancellationToken,
) -> Result<Prepared, RunError> {
    if let Some(error) = first_parse_error(text, analysis) {
        return Err(error);
    }
    let document = &analysis.document;
    let Some(frontmatter) = &document.frontmatter else {
        return Err(RunError::internal(
            "a prompt without frontmatter passed the parse",
        ));
    };
    let end = RunEnd::default();
    let refused = end.guard();
    let mut log = Vec::new();
    let declared: Vec<Declared> = frontmatter
        .plugins
        .iter()
        .map(|d| {
            (
                d.id.value.as_str(),
                d.optional,
                host.harness().get(&d.id.value).cloned(),
            )
        })
        .collect();

    // Conflicts among the registered declared Plugins, in the order of their earlier Plugin.
    let named: Vec<(&str, Option<Vec<String>>)> = declared
        .iter()
        .map(|(id, _, plugin)| (*id, plugin.as_ref().map(|p| p.conflicts())))
        .collect();
    let entries: Vec<Option<(&str, &[String])>> = named
        .iter()
        .map(|(id, conflicts)| conflicts.as_deref().map(|c| (*id, c)))
        .collect();
    let conflicts: Vec<(String, String)> = conflicting_pairs(&entries)
        .into_iter()
        .filter_map(|(i, j)| Some((named.get(i)?.0.to_owned(), named.get(j)?.0.to_owned())))
        .collect();

    let mut catalog = Catalog::default();
    let mut view = CatalogView::default();
    for (id, optional, plugin) in &declared {
        let state = match plugin {
            None => PluginState::Unregistered,
            // With a conflict nothing activates.
            Some(_) if !conflicts.is_empty() => PluginState::Pending,
            Some(plugin) => {
                let activation =
                    Activation::new(store.clone(), cancel.clone(), host.services()).for_run(&end);
                let activation_log = activation.log.clone();
                let activated = plugin.activate(activation).await;
                // What the Plugin skipped while activating (an MCP tool whose name
                // does not fit the segment grammar) goes to the run log.
                log.extend(activation_log.take());
                match activated {
                    Ok(tools) => {
                        let start = catalog.entries().len();
                        log.extend(catalog.admit(id, tools));
                        let admitted = catalog.entries().get(start..).unwrap_or_default();
                        PluginState::Ready(Arc::new(
                            admitted
                                .iter()
                                .map(|e| requirements::tool_info(e.tool.as_ref()))
                                .collect(),
                        ))
                    }
                    Err(error) => PluginState::Failed(error.reason),
                }
            }
        };
        if let (PluginState::Unregistered | PluginState::Failed(_), true) = (&state, *optional) {
            let reason = match &state {
                PluginState::Failed(reason) => reason.as_str(),
                _ => messages::PLUGIN_NOT_REGISTERED,
            };
            log.push(messages::skipped_optional_plugin(id, reason));
        }
        view.plugins.push(PluginView {
            id: (*id).to_owned(),
            state,
            conflicts: plugin.as_ref().map(|p| p.conflicts()).unwrap_or_default(),
        });
    }
    let problems = requirements::evaluate(frontmatter, &view);
    if let Some(refusal) = requirements::refusal(document.frontmatter.as_ref(), &problems) {
        return Err(refusal);
    }

    let slots: Vec<BoundSlot> = frontmatter
        .tools
        .iter()
        .filter_map(|slot| {
            let path = slot.path.as_ref()?;
            Some(BoundSlot {
                alias: slot.alias.value.clone(),
                path: path.value.clone(),
                tool: catalog.find(&path.value).map(|e| e.tool.clone()),
            })
        })
        .collect();

    let mut labels = Vec::new();
    for decl in &frontmatter.models {
        let model = decl.model.as_ref().map(|m| m.value.as_str());
        match host.resolve(&decl.label.value, model) {
            Ok(resolved) => labels.push(ModelLabel {
                label: decl.label.value.clone(),
                model: resolved,
                temperature: decl.temperature.as_ref().map(|t| t.value),
                max_tokens: decl.max_tokens.as_ref().map(|t| t.value),
            }),
            Err(message) => {
                let offset = decl
                    .model
                    .as_ref()
                    .map_or(decl.label.range.start, |m| m.range.start);
                let (line, column) = analysis.line_index.position(text, offset);
                return Err(RunError::new(RunErrorKind::Binding, message)
                    .at(Some(Position { line, column })));
            }
        }
    }

    refused.disarm();
    Ok(Prepared {
        slot_index: first_positions(slots.iter().map(|s| s.alias.as_str())),
        label_index: first_positions(labels.iter().map(|l| l.label.as_str())),
        document: Arc::new(document.clone()),
        text: Arc::from(text),
        sections: Arc::new(Sections::new(document)),
        name: frontmatter
            .name
            .as_ref()
            .map(|n| n.value.clone())
            .unwrap_or_default(),
        catalog,
        slots,
        labels,
        round_cap: frontmatter.round_cap(),
        log,
        end,
    })
}
