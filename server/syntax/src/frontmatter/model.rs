//! The frontmatter model: every value the prompt declares, with its byte ranges.

use std::ops::Range;

pub use crate::spanned::Spanned;

/// One top-level key as written, for the editor (hover, completion, folding).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyEntry {
    /// The key text and its range.
    pub key: Spanned<String>,
    /// Byte range of the key's value node (empty at the end of the key line when there is none).
    pub value_range: Range<usize>,
}

/// One `plugins:` entry that parsed into an id (valid or not).
#[derive(Debug, Clone, PartialEq)]
pub struct PluginDecl {
    /// The Plugin id as written, with the range of its scalar.
    pub id: Spanned<String>,
    /// `optional: true` in the map form.
    pub optional: bool,
    /// Range of the `optional` value when written (for the "drop optional" code action).
    pub optional_range: Option<Range<usize>>,
    /// `config:` in the map form, any YAML value.
    pub config: Option<serde_yaml::Value>,
    /// Byte range of the whole entry (after `- `).
    pub entry_range: Range<usize>,
    /// True when the id passed the Plugin id grammar.
    pub valid: bool,
}

/// One `tools:` slot.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSlot {
    /// The alias key and its range.
    pub alias: Spanned<String>,
    /// The tool path value and its range (None when the value is not a string).
    pub path: Option<Spanned<String>>,
    /// True when both the alias and the path are valid.
    pub valid: bool,
}

impl ToolSlot {
    /// The Plugin id of a valid path: its first two segments.
    pub fn plugin_id(&self) -> Option<&str> {
        let path = self.path.as_ref()?;
        let (plugin, _) = path.value.rsplit_once('/')?;
        Some(plugin)
    }
}

/// One `models:` label with its options.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelDecl {
    /// The label key and its range.
    pub label: Spanned<String>,
    /// `model:`: a Host model name.
    pub model: Option<Spanned<String>>,
    /// `temperature:` (0 to 2).
    pub temperature: Option<Spanned<f64>>,
    /// `max_tokens:` (at least 1).
    pub max_tokens: Option<Spanned<u64>>,
    /// Byte range of the label's options value.
    pub options_range: Range<usize>,
}

/// The validated frontmatter. Fields hold what was valid; errors go to diagnostics.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    /// Byte range of the whole frontmatter, from the opening `---` to the end of the closing `---` line.
    pub range: Range<usize>,
    /// Byte range of the YAML text between the two `---` lines.
    pub yaml_range: Range<usize>,
    /// Every top-level key as written, in order.
    pub keys: Vec<KeyEntry>,
    /// `name:` when valid.
    pub name: Option<Spanned<String>>,
    /// `description:` when valid.
    pub description: Option<Spanned<String>>,
    /// `promptforge:` when it is an integer (0 is the only supported version).
    pub version: Option<Spanned<i64>>,
    /// `plugins:` in declaration order.
    pub plugins: Vec<PluginDecl>,
    /// `tools:` in declaration order.
    pub tools: Vec<ToolSlot>,
    /// `models:` in declaration order.
    pub models: Vec<ModelDecl>,
    /// `max_tool_iterations:` when valid.
    pub max_tool_iterations: Option<Spanned<u32>>,
}

impl Frontmatter {
    /// Default `max_tool_iterations` when the key is absent.
    pub const DEFAULT_MAX_TOOL_ITERATIONS: u32 = 24;

    /// The round cap in force.
    pub fn round_cap(&self) -> u32 {
        self.max_tool_iterations
            .as_ref()
            .map_or(Self::DEFAULT_MAX_TOOL_ITERATIONS, |v| v.value)
    }

    /// The tool slot with this alias.
    pub fn slot(&self, alias: &str) -> Option<&ToolSlot> {
        self.tools.iter().find(|s| s.alias.value == alias)
    }

    /// The model declaration with this label.
    pub fn model(&self, label: &str) -> Option<&ModelDecl> {
        self.models.iter().find(|m| m.label.value == label)
    }
}
