//! The fixes a diagnostic offers, chosen by its code and built from the facts the
//! code carries: add a slot's undeclared Plugin to `plugins:`, drop
//! `optional: true` from a Plugin that backs a slot, remove a duplicate Plugin
//! declaration, replace an unknown tool path with the nearest catalog path, and
//! rename an invalid prompt name or Plugin id or tool path segment to the nearest
//! valid one (`Three Errors` to `three-errors`), offered only when that one is
//! valid, and close a lua block that is never closed ([`closing_fence`] says where).

use std::ops::Range;

use promptforge_syntax::frontmatter::names::{self, is_segment, is_valid_prompt_name};

use crate::closing_fence::closing_fence;
use promptforge_syntax::{Code, Diagnostic, Fix, Frontmatter, TextEdit};

/// The fixes for `diagnostic` in `text`, whose frontmatter is `frontmatter`
/// (none for most codes).
pub fn fixes(text: &str, frontmatter: Option<&Frontmatter>, diagnostic: &Diagnostic) -> Vec<Fix> {
    let Some(frontmatter) = frontmatter else {
        return Vec::new();
    };
    let range = &diagnostic.range;
    let fix = match &diagnostic.code {
        Code::MissingPlugin { id } | Code::UndeclaredPlugin { id, .. }
            if !frontmatter.plugins.iter().any(|d| d.id.value == *id) =>
        {
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
        Code::UnknownField { place, key } => {
            replace_with_near(text, range, key, place.fields().iter().copied())
        }
        Code::UndeclaredModelLabel { label, declared } => {
            replace_with_near(text, range, label, declared.iter().map(String::as_str))
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
        Code::InvalidPromptName { .. } => rename(text, range, &PROMPT_NAME),
        Code::InvalidPluginId { text: name, .. } => {
            rename_segment(text, frontmatter, range, name, Name::PluginId)
        }
        Code::InvalidToolPath { text: name, .. } => {
            rename_segment(text, frontmatter, range, name, Name::ToolPath)
        }
        Code::UnclosedLuaBlock { .. } => closing_fence(text, range).map(|closing| {
            fix(
                format!("Close the block with ``` at line {}", closing.line),
                (closing.at..closing.at, closing.new_text),
            )
        }),
        _ => None,
    };
    fix.into_iter().collect()
}

/// A name grammar, for [`rename`]: the characters it allows after lowercasing,
/// the characters it may not start with, its longest length, and the full check.
struct Grammar {
    allowed: fn(char) -> bool,
    leading: &'static [char],
    max_len: usize,
    valid: fn(&str) -> bool,
}

/// `[a-z0-9][a-z0-9_-]{0,63}`.
const PROMPT_NAME: Grammar = Grammar {
    allowed: |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-',
    leading: &['-', '_'],
    max_len: 64,
    valid: is_valid_prompt_name,
};

/// One segment of a Plugin id or tool path: `[a-z0-9._-]+`.
const SEGMENT: Grammar = Grammar {
    allowed: |c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.'),
    leading: &[],
    max_len: usize::MAX,
    valid: is_segment,
};

/// `name` as `grammar` would have it: lowercased, each run of other characters
/// one `-`, trimmed; None when that is not valid either, or is `name` itself.
fn repaired(name: &str, grammar: &Grammar) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().map(|c| c.to_ascii_lowercase()) {
        if (grammar.allowed)(c) {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_start_matches(grammar.leading);
    let mut out = out.trim_matches('-').to_owned();
    out.truncate(grammar.max_len);
    let out = out.trim_end_matches('-');
    (out != name && (grammar.valid)(out)).then(|| out.to_owned())
}

/// `Lowercase to x` when only the case changes, else `Rename to x`.
fn rename_title(written: &str, new: &str) -> String {
    let verb = if new == written.to_ascii_lowercase() {
        "Lowercase"
    } else {
        "Rename"
    };
    format!("{verb} to {new}")
}

/// The text inside a scalar's quotes, and the quote (empty when unquoted).
fn unquoted(written: &str) -> (&str, &str) {
    match written.chars().next() {
        Some(q @ ('"' | '\'')) if written.len() >= 2 && written.ends_with(q) => (
            written.get(..1).unwrap_or_default(),
            written.get(1..written.len() - 1).unwrap_or_default(),
        ),
        _ => ("", written),
    }
}

/// The fix renaming the name at `range` (quotes kept) to its [`repaired`] form.
fn rename(text: &str, range: &Range<usize>, grammar: &Grammar) -> Option<Fix> {
    let (quote, name) = unquoted(text.get(range.clone())?);
    let new = repaired(name, grammar)?;
    Some(fix(
        rename_title(name, &new),
        (range.clone(), format!("{quote}{new}{quote}")),
    ))
}

/// Which name a segment belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Name {
    PluginId,
    ToolPath,
}

/// The fix renaming the segment at `range` of the Plugin id or tool path `name`
/// to its [`repaired`] form, offered only when the whole name is then valid. A
/// Plugin id's segment (the first two of a tool path) is renamed wherever the
/// frontmatter names that Plugin, so its declaration and its slots stay one.
fn rename_segment(
    text: &str,
    frontmatter: &Frontmatter,
    range: &Range<usize>,
    name: &str,
    kind: Name,
) -> Option<Fix> {
    let written = text.get(range.clone())?;
    if written.is_empty() || written.contains('/') {
        return None;
    }
    let new = repaired(written, &SEGMENT)?;
    // Which segment of `name` the range is: the one whose place in the text
    // lines `name` up with the file.
    let mut offset = 0;
    let mut index = None;
    for (at, segment) in name.split('/').enumerate() {
        let start = range.start.checked_sub(offset);
        let lined_up = start.and_then(|s| text.get(s..s + name.len())) == Some(name);
        if segment == written && lined_up {
            index = Some(at);
            break;
        }
        offset += segment.len() + 1;
    }
    let index = index?;
    let mut segments: Vec<&str> = name.split('/').collect();
    segments[index] = &new;
    let renamed = segments.join("/");
    let valid = match kind {
        Name::PluginId => names::check_plugin_id(&renamed).is_ok(),
        Name::ToolPath => names::check_tool_path(&renamed).is_ok(),
    };
    if !valid {
        return None;
    }
    let title = rename_title(written, &new);
    if index >= 2 {
        return Some(fix(title, (range.clone(), new)));
    }
    let old_id = name.split('/').take(2).collect::<Vec<_>>().join("/");
    let new_id = renamed.split('/').take(2).collect::<Vec<_>>().join("/");
    // A slot renamed to a Plugin the prompt does not declare would trade this
    // problem for that one.
    let declared_after = frontmatter
        .plugins
        .iter()
        .any(|d| d.id.value == old_id || d.id.value == new_id);
    if kind == Name::ToolPath && !declared_after {
        return None;
    }
    let mut edits = vec![TextEdit {
        range: range.clone(),
        new_text: new,
    }];
    let declared = frontmatter.plugins.iter().map(|d| &d.id);
    let slots = frontmatter.tools.iter().filter_map(|s| s.path.as_ref());
    for place in declared.chain(slots) {
        let (quote, value) = unquoted(text.get(place.range.clone())?);
        let starts_id = value == old_id || value.starts_with(&format!("{old_id}/"));
        let start = place.range.start + quote.len();
        let covers = start <= range.start && range.end <= start + old_id.len();
        if starts_id && !covers {
            edits.push(TextEdit {
                range: start..start + old_id.len(),
                new_text: new_id.clone(),
            });
        }
    }
    Some(Fix { title, edits })
}

/// The fix replacing a mistyped `written` (at `range`, quotes kept) with the one
/// candidate near it: at most a third of its letters apart (one for short words).
fn replace_with_near<'a>(
    text: &str,
    range: &Range<usize>,
    written: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<Fix> {
    let limit = (written.chars().count() / 3).max(1);
    let mut near = candidates.filter(|c| strsim::levenshtein(written, c) <= limit);
    let nearest = near.next()?;
    if near.next().is_some() {
        return None;
    }
    let at = text.get(range.clone())?;
    let start = range.start + at.find(written)?;
    Some(fix(
        format!("Replace with {nearest}"),
        (start..start + written.len(), nearest.to_owned()),
    ))
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
