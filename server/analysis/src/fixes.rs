//! The fixes a diagnostic offers, chosen by its code and built from the facts the
//! code carries: add a slot's undeclared Plugin to `plugins:`, drop
//! `optional: true` from a Plugin that backs a slot, remove a duplicate Plugin
//! declaration, replace an unknown tool path with the nearest catalog path, and
//! lowercase a prompt name, Plugin id or tool path written with capitals.

use std::ops::Range;

use promptforge_syntax::{Code, Diagnostic, Document, Fix, Frontmatter, TextEdit};

/// The fixes for `diagnostic` in `text` (none for most codes).
pub fn fixes(text: &str, document: &Document, diagnostic: &Diagnostic) -> Vec<Fix> {
    let Some(frontmatter) = document.frontmatter.as_ref() else {
        return Vec::new();
    };
    let range = &diagnostic.range;
    let fix = match &diagnostic.code {
        Code::MissingPlugin { id } if !frontmatter.plugins.iter().any(|d| d.id.value == *id) => {
            add_plugin(text, frontmatter, id)
                .map(|edit| fix(format!("Add Plugin {id} to plugins:"), edit))
        }
        Code::UnknownToolPath {
            nearest: Some(path),
            ..
        } => {
            let written = text.get(range.clone()).unwrap_or_default();
            let new_text = match written.chars().next() {
                Some(quote) if quote == '"' || quote == '\'' => format!("{quote}{path}{quote}"),
                _ => path.clone(),
            };
            Some(fix(
                format!("Replace with {path}"),
                (range.clone(), new_text),
            ))
        }
        Code::PluginDeclaredTwice { id } => remove_entry(text, range)
            .map(|edit| fix(format!("Remove the duplicate declaration of {id}"), edit)),
        Code::SlotNeedsRequiredPlugin { id, .. } => frontmatter
            .plugins
            .iter()
            .find(|d| d.id.value == *id && d.optional)
            .and_then(|d| d.optional_range.clone())
            .map(|value| {
                fix(
                    format!("Drop `optional: true` from {id}"),
                    drop_optional(text, value),
                )
            }),
        Code::InvalidPromptName { .. }
        | Code::InvalidPluginId { .. }
        | Code::PluginIdSegments { .. }
        | Code::InvalidToolPath { .. } => {
            let written = text.get(range.clone()).unwrap_or_default();
            written.chars().any(|c| c.is_ascii_uppercase()).then(|| {
                let lower = written.to_ascii_lowercase();
                fix(format!("Lowercase to {lower}"), (range.clone(), lower))
            })
        }
        _ => None,
    };
    fix.into_iter().collect()
}

/// A fix of one edit.
fn fix(title: String, (range, new_text): (Range<usize>, String)) -> Fix {
    Fix {
        title,
        edits: vec![TextEdit { range, new_text }],
    }
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
