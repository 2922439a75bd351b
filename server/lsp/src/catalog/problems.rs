//! The prepare problems a document has against its Host's catalog (Tools chapter,
//! "Declaring Plugins" to "Tool slots"), each placed on the entry, id or slot
//! value it is about. They follow the engine's prepare: a missing or failed
//! required Plugin and two conflicting Plugins refuse the run (severity Error, the
//! notice's line without its `- `); a slot whose Plugin contributed no tools too;
//! an optional Plugin that is skipped, and a slot whose path the catalog lacks
//! (it stays unbound, the run goes ahead), are warnings. A Plugin whose activation
//! has not finished yet gives no problem.

use std::ops::Range;

use promptforge_engine::harness::conflicting_pairs;
use promptforge_engine::messages;
use promptforge_syntax::frontmatter::PluginDecl;
use promptforge_syntax::Frontmatter;

use super::{DocCatalog, PluginState, PluginView};

/// The code of every prepare problem.
pub const CODE: &str = "RequirementsUnmet";
/// The code of a configuration that gives no Host.
pub const CONFIGURATION_CODE: &str = "Configuration";

/// Related-information text on the earlier of two conflicting Plugins.
pub const RELATED_CONFLICT: &str = "conflicts with this earlier declaration";
/// Related-information text on a declared Plugin that contributed no tools.
pub const RELATED_NO_TOOLS: &str = "this Plugin contributed no tools";

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The run is refused.
    Error,
    /// The run goes ahead without it.
    Warning,
}

/// A code action a problem offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// Add this Plugin id to `plugins:`.
    AddPlugin(String),
    /// Replace the slot's tool path with this one.
    ReplacePath(String),
}

/// One prepare problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogProblem {
    /// Byte range in the file text.
    pub range: Range<usize>,
    /// Its severity.
    pub severity: Severity,
    /// Its code ([`CODE`] or [`CONFIGURATION_CODE`]).
    pub code: &'static str,
    /// The message.
    pub message: String,
    /// Other places (here: the same file) with what each is.
    pub related: Vec<(Range<usize>, String)>,
    /// The fix it offers.
    pub fix: Option<Fix>,
}

impl CatalogProblem {
    fn new(range: Range<usize>, severity: Severity, message: String) -> Self {
        CatalogProblem {
            range,
            severity,
            code: CODE,
            message,
            related: Vec::new(),
            fix: None,
        }
    }
}

/// A notice line without its `- `.
fn line(notice_line: String) -> String {
    notice_line
        .strip_prefix("- ")
        .map(str::to_owned)
        .unwrap_or(notice_line)
}

/// The message of a slot path the catalog lacks; `nearest` is the hint.
pub fn unknown_path(path: &str, alias: &str, nearest: Option<&str>) -> String {
    let mut message =
        format!("the catalog has no tool {path}, so the slot \"{alias}\" stays unbound");
    if let Some(nearest) = nearest {
        message.push_str(&format!("; did you mean {nearest}?"));
    }
    message
}

/// The message of a configuration that gives no Host.
pub fn configuration_error(error: &str) -> String {
    format!("the Host configuration cannot be used: {error}")
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

/// Every prepare problem of `frontmatter` against `catalog`, in frontmatter order
/// (conflicts and Plugin entries first, then slots).
pub fn problems(frontmatter: &Frontmatter, catalog: &DocCatalog) -> Vec<CatalogProblem> {
    if frontmatter.keys.is_empty() {
        return Vec::new();
    }
    if let Some(error) = &catalog.error {
        let start = frontmatter.range.start;
        let mut problem = CatalogProblem::new(
            start..start + 3,
            Severity::Warning,
            configuration_error(error),
        );
        problem.code = CONFIGURATION_CODE;
        return vec![problem];
    }
    let declared: Vec<(&PluginDecl, &PluginView)> = frontmatter
        .plugins
        .iter()
        .filter(|d| d.valid)
        .filter_map(|d| Some((d, catalog.plugin(&d.id.value)?)))
        .collect();
    let mut out = Vec::new();
    let entries: Vec<Option<(&str, &[String])>> = declared
        .iter()
        .map(|(_, view)| {
            (view.state != PluginState::Unregistered)
                .then_some((view.id.as_str(), view.conflicts.as_slice()))
        })
        .collect();
    let pairs = conflicting_pairs(&entries);
    let conflict = !pairs.is_empty();
    for (i, j) in pairs {
        let (Some((first, a)), Some((second, b))) = (declared.get(i), declared.get(j)) else {
            continue;
        };
        let mut problem = CatalogProblem::new(
            second.id.range.clone(),
            Severity::Error,
            line(messages::conflicting_plugins(&a.id, &b.id)),
        );
        problem
            .related
            .push((first.id.range.clone(), RELATED_CONFLICT.to_owned()));
        out.push(problem);
    }
    for (decl, view) in &declared {
        let reason = match &view.state {
            PluginState::Unregistered => messages::PLUGIN_NOT_REGISTERED.to_owned(),
            // With a conflict nothing activates: only unregistered Plugins are reported.
            PluginState::Failed(reason) if !conflict => reason.clone(),
            _ => continue,
        };
        let id = &view.id;
        let problem = if decl.optional {
            CatalogProblem::new(
                decl.id.range.clone(),
                Severity::Warning,
                messages::skipped_optional_plugin(id, &reason),
            )
        } else {
            let mut problem = CatalogProblem::new(
                decl.id.range.clone(),
                Severity::Error,
                line(messages::missing_plugin(id)),
            );
            problem.related.push((decl.id.range.clone(), reason));
            problem
        };
        out.push(problem);
    }
    if conflict {
        return out;
    }
    for slot in frontmatter.tools.iter().filter(|s| s.valid) {
        let (Some(path), Some(plugin)) = (&slot.path, slot.plugin_id()) else {
            continue;
        };
        let Some((decl, view)) = declared.iter().find(|(d, _)| d.id.value == plugin) else {
            let mut problem = CatalogProblem::new(
                path.range.clone(),
                Severity::Error,
                line(messages::missing_plugin(plugin)),
            );
            problem.fix = Some(Fix::AddPlugin(plugin.to_owned()));
            out.push(problem);
            continue;
        };
        // A slot backed by an optional Plugin is a parse error already.
        let PluginState::Ready(tools) = &view.state else {
            continue;
        };
        if decl.optional {
            continue;
        }
        if tools.is_empty() {
            let mut problem = CatalogProblem::new(
                path.range.clone(),
                Severity::Error,
                line(messages::missing_plugin(plugin)),
            );
            problem
                .related
                .push((decl.id.range.clone(), RELATED_NO_TOOLS.to_owned()));
            out.push(problem);
            continue;
        }
        if tools.iter().any(|t| t.path == path.value) {
            continue;
        }
        let nearest = nearest(&path.value, catalog.tools().map(|t| t.path.as_str()));
        let mut problem = CatalogProblem::new(
            path.range.clone(),
            Severity::Warning,
            unknown_path(&path.value, &slot.alias.value, nearest),
        );
        problem.fix = nearest.map(|n| Fix::ReplacePath(n.to_owned()));
        out.push(problem);
    }
    out
}

/// The candidate nearest to `word` by edit distance (the first of equals).
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates.min_by_key(|c| edit_distance(word, c))
}

/// The Levenshtein distance between two strings, by characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        if let Some(first) = current.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let delete = previous.get(j + 1).copied().unwrap_or(0) + 1;
            let insert = current.get(j).copied().unwrap_or(0) + 1;
            if let Some(cell) = current.get_mut(j + 1) {
                *cell = substitute.min(delete).min(insert);
            }
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use crate::catalog::ToolInfo;

    fn frontmatter(yaml: &str) -> (String, Frontmatter) {
        let text = format!("---\nname: p\ndescription: d\npromptforge: 0\n{yaml}---\n\n# T\n");
        let analysis = promptforge_syntax::parse(&text);
        let frontmatter = analysis.document.frontmatter.clone().unwrap_or_default();
        (text, frontmatter)
    }

    fn view(id: &str, state: PluginState) -> PluginView {
        PluginView {
            id: id.to_owned(),
            state,
            conflicts: Vec::new(),
        }
    }

    fn tool(path: &str) -> ToolInfo {
        ToolInfo {
            path: path.to_owned(),
            wire_name: path.rsplit('/').next().unwrap_or_default().to_owned(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
            untrusted: false,
            structured: false,
        }
    }

    fn at<'a>(text: &'a str, range: &Range<usize>) -> &'a str {
        text.get(range.clone()).unwrap_or_default()
    }

    #[test]
    fn a_slot_whose_plugin_contributed_no_tools_is_refused_at_its_value() {
        let (text, fm) = frontmatter("plugins: [acme/empty]\ntools:\n  a: acme/empty/x\n");
        let catalog = DocCatalog {
            plugins: vec![view("acme/empty", PluginState::Ready(Arc::new(Vec::new())))],
            ..DocCatalog::default()
        };
        let found = problems(&fm, &catalog);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].message, "missing required Plugin: acme/empty");
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(at(&text, &found[0].range), "acme/empty/x");
        assert_eq!(found[0].related.len(), 1);
        assert_eq!(at(&text, &found[0].related[0].0), "acme/empty");
        assert_eq!(found[0].related[0].1, RELATED_NO_TOOLS);
    }

    #[test]
    fn pending_plugins_give_nothing_and_failures_give_their_reason() {
        let (text, fm) = frontmatter(
            "plugins:\n  - acme/slow\n  - ref: acme/opt\n    optional: true\n  - acme/bad\ntools:\n  a: acme/slow/x\n",
        );
        let catalog = DocCatalog {
            plugins: vec![
                view("acme/slow", PluginState::Pending),
                view("acme/opt", PluginState::Failed("no answer".into())),
                view("acme/bad", PluginState::Failed("it exited".into())),
            ],
            ..DocCatalog::default()
        };
        let found = problems(&fm, &catalog);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0].message,
            "skipped optional Plugin acme/opt: no answer"
        );
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(at(&text, &found[0].range), "acme/opt");
        assert_eq!(found[1].message, "missing required Plugin: acme/bad");
        assert_eq!(found[1].related[0].1, "it exited");
    }

    #[test]
    fn with_a_conflict_only_unregistered_plugins_and_the_conflict_are_reported() {
        let (text, fm) = frontmatter(
            "plugins: [acme/a, acme/bad, acme/none, acme/b]\ntools:\n  x: acme/a/nope\n",
        );
        let mut a = view(
            "acme/a",
            PluginState::Ready(Arc::new(vec![tool("acme/a/r")])),
        );
        a.conflicts = vec!["acme/b".into()];
        let catalog = DocCatalog {
            plugins: vec![
                a,
                view("acme/bad", PluginState::Failed("x".into())),
                view("acme/none", PluginState::Unregistered),
                view("acme/b", PluginState::Pending),
            ],
            ..DocCatalog::default()
        };
        let found = problems(&fm, &catalog);
        let messages: Vec<&str> = found.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "conflicting Plugins: acme/a and acme/b cannot be activated together; declare one or the other",
                "missing required Plugin: acme/none"
            ]
        );
        assert_eq!(at(&text, &found[0].range), "acme/b");
    }

    #[test]
    fn a_configuration_error_is_one_warning_on_the_opening_line() {
        let (text, fm) = frontmatter("plugins: [acme/a]\n");
        let catalog = DocCatalog {
            error: Some("promptforge.toml:2: unknown field `x`".into()),
            ..DocCatalog::default()
        };
        let found = problems(&fm, &catalog);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, CONFIGURATION_CODE);
        assert_eq!(
            found[0].message,
            "the Host configuration cannot be used: promptforge.toml:2: unknown field `x`"
        );
        assert_eq!(at(&text, &found[0].range), "---");
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("fecth", "fetch"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(
            nearest(
                "promptforge/web/fecth",
                ["promptforge/web/search", "promptforge/web/fetch"].into_iter()
            ),
            Some("promptforge/web/fetch")
        );
    }
}
