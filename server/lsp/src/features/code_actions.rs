//! `textDocument/codeAction`: quick fixes for the diagnostics at the requested
//! range: add a slot's undeclared Plugin to `plugins:`, drop `optional: true`
//! from a Plugin that backs a slot, remove a duplicate Plugin declaration,
//! replace an unknown tool path with the nearest catalog path, and lowercase a
//! prompt name, Plugin id or tool path written with capitals.

use std::collections::HashMap;
use std::ops::Range;

use promptforge_syntax::{Frontmatter, ParseKind};
use tower_lsp::lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, Range as LspRange, TextEdit,
    WorkspaceEdit,
};

use crate::catalog::problems::{self, Fix};
use crate::catalog::DocCatalog;
use crate::snapshot::Snapshot;

/// Where a message of the syntax crate starts, for the fixes that read it.
const TWICE_PREFIX: &str = "invalid frontmatter: Plugin ";
const TWICE_SUFFIX: &str = " is declared more than once under plugins";
const OPTIONAL_SUFFIX: &str = "is declared optional; a tool slot requires its Plugin";
const NAME_PREFIXES: &[&str] = &[
    "invalid prompt name `",
    "invalid Plugin id `",
    "invalid exact tool path `",
];

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// One fix before it becomes a code action.
struct Planned {
    title: String,
    edits: Vec<(Range<usize>, String)>,
    /// The range and message of the diagnostic it fixes.
    fixes: (Range<usize>, String),
}

/// The quick fixes for the diagnostics that overlap `range`.
pub fn code_actions(
    snapshot: &Snapshot,
    catalog: &DocCatalog,
    range: LspRange,
) -> Vec<CodeActionOrCommand> {
    let Some(frontmatter) = snapshot.analysis.document.frontmatter.as_ref() else {
        return Vec::new();
    };
    let positions = snapshot.positions();
    let wanted = positions.byte_range(range);
    let text = snapshot.text.as_str();
    let mut planned = Vec::new();
    for problem in problems::problems(frontmatter, catalog) {
        if !overlaps(&problem.range, &wanted) {
            continue;
        }
        let fixes = (problem.range.clone(), problem.message.clone());
        match &problem.fix {
            Some(Fix::AddPlugin(id)) => {
                planned.extend(add_plugin(text, frontmatter, id).map(|edit| Planned {
                    title: format!("Add Plugin {id} to plugins:"),
                    edits: vec![edit],
                    fixes,
                }))
            }
            Some(Fix::ReplacePath(path)) => {
                let written = text.get(problem.range.clone()).unwrap_or_default();
                let quoted = written.starts_with(['"', '\'']);
                let new_text = match written.chars().next() {
                    Some(quote) if quoted => format!("{quote}{path}{quote}"),
                    _ => path.clone(),
                };
                planned.push(Planned {
                    title: format!("Replace with {path}"),
                    edits: vec![(problem.range.clone(), new_text)],
                    fixes,
                });
            }
            None => {}
        }
    }
    for diagnostic in &snapshot.analysis.diagnostics {
        if diagnostic.kind != ParseKind::Frontmatter || !overlaps(&diagnostic.range, &wanted) {
            continue;
        }
        let fixes = (diagnostic.range.clone(), diagnostic.message.clone());
        let message = diagnostic.message.as_str();
        if let Some(id) = message
            .strip_prefix(TWICE_PREFIX)
            .and_then(|m| m.strip_suffix(TWICE_SUFFIX))
        {
            if let Some(edit) = remove_entry(text, &diagnostic.range) {
                planned.push(Planned {
                    title: format!("Remove the duplicate declaration of {id}"),
                    edits: vec![edit],
                    fixes,
                });
            }
        } else if message.ends_with(OPTIONAL_SUFFIX) {
            let decl = diagnostic
                .related
                .first()
                .and_then(|r| frontmatter.plugins.iter().find(|d| d.id.range == r.range));
            if let Some((decl, value)) = decl.and_then(|d| Some((d, d.optional_range.clone()?))) {
                planned.push(Planned {
                    title: format!("Drop `optional: true` from {}", decl.id.value),
                    edits: vec![drop_optional(text, value)],
                    fixes,
                });
            }
        } else if NAME_PREFIXES.iter().any(|p| message.starts_with(p)) {
            let written = text.get(diagnostic.range.clone()).unwrap_or_default();
            if written.chars().any(|c| c.is_ascii_uppercase()) {
                let lower = written.to_ascii_lowercase();
                planned.push(Planned {
                    title: format!("Lowercase to {lower}"),
                    edits: vec![(diagnostic.range.clone(), lower)],
                    fixes,
                });
            }
        }
    }
    let published = super::diagnostics::diagnostics(snapshot, catalog);
    planned
        .into_iter()
        .map(|plan| {
            let fixed_range = positions.range(&plan.fixes.0);
            let fixed: Vec<Diagnostic> = published
                .iter()
                .filter(|d| d.range == fixed_range && d.message == plan.fixes.1)
                .cloned()
                .collect();
            let edits = plan
                .edits
                .into_iter()
                .map(|(range, new_text)| TextEdit {
                    range: positions.range(&range),
                    new_text,
                })
                .collect();
            CodeActionOrCommand::CodeAction(CodeAction {
                title: plan.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: (!fixed.is_empty()).then_some(fixed),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(snapshot.uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            })
        })
        .collect()
}

/// The start of the line holding `offset`.
fn line_start(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |at| at + 1)
}

/// The end of the line holding `offset`, after its line break.
fn line_end(text: &str, offset: usize) -> usize {
    text.get(offset..)
        .and_then(|after| after.find('\n'))
        .map_or(text.len(), |at| offset + at + 1)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The edit that adds `id` to `plugins:` (creating the key before `tools:` when absent).
fn add_plugin(text: &str, frontmatter: &Frontmatter, id: &str) -> Option<(Range<usize>, String)> {
    let Some(key) = frontmatter.keys.iter().find(|k| k.key.value == "plugins") else {
        let at = frontmatter
            .keys
            .iter()
            .find(|k| k.key.value == "tools")
            .map_or(frontmatter.yaml_range.end, |k| {
                line_start(text, k.key.range.start)
            });
        return Some((at..at, format!("plugins:\n  - {id}\n")));
    };
    let value = key.value_range.clone();
    let written = text.get(value.clone())?;
    if value.is_empty() {
        return Some((value.start..value.start, format!(" [{id}]")));
    }
    if written.starts_with('[') {
        let close = value.start + written.rfind(']')?;
        let inside = text.get(value.start + 1..close)?;
        let new_text = if inside.trim().is_empty() {
            id.to_owned()
        } else {
            format!(", {id}")
        };
        let at = value.start + 1 + inside.trim_end().len();
        return Some((at..at, new_text));
    }
    let first = line_start(text, value.start);
    let dash = text.get(first..value.start)?;
    let pad = " ".repeat(indent(dash));
    let at = line_end(text, value.end.saturating_sub(1).max(value.start));
    let newline = if text.get(..at)?.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    Some((at..at, format!("{newline}{pad}- {id}\n")))
}

/// The edit that removes the `plugins:` entry whose id is at `id`: its `- ` line
/// with the map's further lines, or its element of a flow list.
fn remove_entry(text: &str, id: &Range<usize>) -> Option<(Range<usize>, String)> {
    let start = line_start(text, id.start);
    let line = text.get(start..line_end(text, id.start))?;
    let before = text.get(start..id.start)?;
    if line.trim_start().starts_with("- ") && !before.contains(['[', '{']) {
        let dash = indent(line);
        let mut end = line_end(text, id.start);
        while end < text.len() {
            let next = text.get(end..line_end(text, end))?;
            if next.trim().is_empty() || indent(next) <= dash {
                break;
            }
            end = line_end(text, end);
        }
        return Some((start..end, String::new()));
    }
    let before_id = text.get(..id.start)?.trim_end();
    if before_id.ends_with(',') {
        return Some((before_id.len() - 1..id.end, String::new()));
    }
    let after = text.get(id.end..)?;
    let comma = after.trim_start();
    if comma.starts_with(',') {
        let skipped = after.len() - comma.len() + 1;
        let rest = text.get(id.end + skipped..)?;
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        return Some((id.start..id.end + skipped + spaces, String::new()));
    }
    None
}

/// The edit that drops `optional: true` (its value at `value`): its whole line when
/// it stands alone, else the value set to `false`.
fn drop_optional(text: &str, value: Range<usize>) -> (Range<usize>, String) {
    let start = line_start(text, value.start);
    let end = line_end(text, value.start);
    let alone = text
        .get(start..end)
        .is_some_and(|line| line.trim().starts_with("optional:"));
    if alone {
        (start..end, String::new())
    } else {
        (value, "false".to_owned())
    }
}
