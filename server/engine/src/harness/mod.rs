//! The Harness: the Plugins the Host registers, and the run's tool catalog built
//! from the Plugins a prompt declares (Tools chapter, "Declaring Plugins" to "Tool slots").

pub mod plugin;
pub mod run_end;
pub mod tool;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub use plugin::{Activation, ActivationError, ActivationLog, Plugin, Services};
pub use run_end::{EndGuard, RunEnd};
pub use tool::{OutputKind, Tool, ToolError, ToolId, ToolOutput, Trust};

/// Which declared Plugins conflict: a pure rule of the requirements, kept in the analysis layer.
pub use promptforge_analysis::requirements::conflicting_pairs;

use crate::messages;

/// The Plugins the Host registered, each under its exact id.
#[derive(Clone, Default)]
pub struct Harness {
    plugins: Vec<Arc<dyn Plugin>>,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.plugins.iter().map(|p| p.id().to_owned()))
            .finish()
    }
}

impl Harness {
    /// An empty Harness.
    pub fn new() -> Self {
        Harness::default()
    }

    /// Registers a Plugin; a second Plugin with the same id replaces the first.
    pub fn register(&mut self, plugin: Arc<dyn Plugin>) {
        self.plugins.retain(|p| p.id() != plugin.id());
        self.plugins.push(plugin);
    }

    /// The Plugin registered under exactly `id`.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn Plugin>> {
        self.plugins.iter().find(|p| p.id() == id)
    }

    /// A Harness of the same Plugins, each passed through `wrap` (a prompt test's
    /// scripted tools, a recording run's listeners), in the same order.
    pub fn wrapped(&self, wrap: &dyn Fn(Arc<dyn Plugin>) -> Arc<dyn Plugin>) -> Harness {
        Harness {
            plugins: self.plugins.iter().map(|p| wrap(p.clone())).collect(),
        }
    }

    /// Every registered Plugin id, in registration order.
    pub fn ids(&self) -> Vec<String> {
        self.plugins.iter().map(|p| p.id().to_owned()).collect()
    }
}

/// One tool of the catalog.
#[derive(Clone)]
pub struct CatalogEntry {
    /// The Plugin that contributed it.
    pub plugin: String,
    /// The tool.
    pub tool: Arc<dyn Tool>,
}

impl std::fmt::Debug for CatalogEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogEntry")
            .field("plugin", &self.plugin)
            .field("tool", &self.tool.id().as_str())
            .finish()
    }
}

/// The run's tool catalog: the activated Plugins' tools, by declaration, then in
/// each Plugin's own order.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<CatalogEntry>,
    /// The first entry of each tool path.
    by_path: HashMap<String, usize>,
    /// The Plugins that contributed at least one tool.
    contributors: HashSet<String>,
}

impl Catalog {
    /// Adds the tools `plugin` contributed, admitting only those whose path is the
    /// Plugin's id plus one name segment; returns the log lines of the refused ones.
    pub fn admit(&mut self, plugin: &str, tools: Vec<Arc<dyn Tool>>) -> Vec<String> {
        let mut refused = Vec::new();
        for tool in tools {
            if tool.id().is_under(plugin) {
                self.by_path
                    .entry(tool.id().as_str().to_owned())
                    .or_insert(self.entries.len());
                self.contributors.insert(plugin.to_owned());
                self.entries.push(CatalogEntry {
                    plugin: plugin.to_owned(),
                    tool,
                });
            } else {
                refused.push(messages::tool_not_admitted(plugin, tool.id().as_str()));
            }
        }
        refused
    }

    /// The tool at exactly `path`.
    pub fn find(&self, path: &str) -> Option<&CatalogEntry> {
        self.by_path.get(path).and_then(|&i| self.entries.get(i))
    }

    /// True when `plugin` contributed at least one tool.
    pub fn has_tools_of(&self, plugin: &str) -> bool {
        self.contributors.contains(plugin)
    }

    /// Every tool, in catalog order.
    pub fn entries(&self) -> &[CatalogEntry] {
        &self.entries
    }
}
