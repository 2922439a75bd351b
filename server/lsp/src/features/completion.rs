//! `textDocument/completion`: top-level frontmatter keys; Plugin ids the Host
//! registers inside `plugins:` and tool paths of the declared Plugins inside a
//! `tools:` value ([`super::catalog_completion`]); aliases inside
//! `tools.call('`/`tools.add('`/`tools.always('`; labels inside
//! `models.use('`/`get('`/`default('`; the targets visible from the caller
//! inside `jump('`/`call('`/`fanout('`; the Lua API members after `tools.`,
//! `models.`, `store.`, `messages.` and `input.`.

use std::ops::Range;

use promptforge_syntax::frontmatter::KNOWN_KEYS;
use tower_lsp::lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, Position, TextEdit,
};

use super::lua_context::{member_access, string_arg};
use crate::snapshot::Snapshot;
use promptforge_analysis::api_reference;
use promptforge_analysis::symbols::{ALIAS_FUNCTIONS, LABEL_FUNCTIONS, TARGET_FUNCTIONS};
use promptforge_engine::requirements::CatalogView;

/// The completion items at `position`.
pub fn completion(
    snapshot: &Snapshot,
    catalog: &CatalogView,
    position: Position,
) -> Vec<CompletionItem> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let document = &snapshot.analysis.document;
    let item = |label: String,
                kind: CompletionItemKind,
                detail: Option<String>,
                replace: &Range<usize>,
                text: String| {
        CompletionItem {
            label,
            kind: Some(kind),
            detail,
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range: positions.range(replace),
                new_text: text,
            })),
            ..CompletionItem::default()
        }
    };
    if let Some(frontmatter) = &document.frontmatter {
        let yaml = &frontmatter.yaml_range;
        if yaml.start <= offset && offset <= yaml.end {
            if let Some(items) = super::catalog_completion::completion(snapshot, catalog, offset) {
                return items;
            }
            return frontmatter_keys(snapshot, offset)
                .map(|(replace, present)| {
                    KNOWN_KEYS
                        .iter()
                        .filter(|k| !present.contains(k))
                        .map(|k| {
                            item(
                                k.to_string(),
                                CompletionItemKind::PROPERTY,
                                None,
                                &replace,
                                format!("{k}: "),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    let Some((block_index, block)) = document
        .lua_blocks
        .iter()
        .enumerate()
        .find(|(_, b)| b.code_range.start <= offset && offset <= b.code_range.end)
    else {
        return Vec::new();
    };
    let text = snapshot.text.as_str();
    let from = block.code_range.start;
    if let Some(arg) = string_arg(text, from, offset) {
        let replace = arg.value_start..offset;
        let frontmatter = document.frontmatter.as_ref();
        if ALIAS_FUNCTIONS.contains(&arg.callee) {
            return frontmatter
                .map(|f| {
                    f.tools
                        .iter()
                        .map(|s| {
                            let detail = s.path.as_ref().map(|p| p.value.clone());
                            item(
                                s.alias.value.clone(),
                                CompletionItemKind::FUNCTION,
                                detail,
                                &replace,
                                s.alias.value.clone(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
        if LABEL_FUNCTIONS.contains(&arg.callee) {
            return frontmatter
                .map(|f| {
                    f.models
                        .iter()
                        .map(|m| {
                            let detail = m.model.as_ref().map(|n| n.value.clone());
                            item(
                                m.label.value.clone(),
                                CompletionItemKind::VARIABLE,
                                detail,
                                &replace,
                                m.label.value.clone(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
        if TARGET_FUNCTIONS.contains(&arg.callee) {
            let sections = &snapshot.model().sections;
            let caller = sections.caller_of_block(block_index);
            return sections
                .visible(caller)
                .into_iter()
                .filter_map(|i| sections.get(i))
                .map(|s| {
                    let target = s.heading.target();
                    item(
                        target.clone(),
                        CompletionItemKind::ENUM_MEMBER,
                        None,
                        &replace,
                        target,
                    )
                })
                .collect();
        }
        return Vec::new();
    }
    if let Some((table, member_start)) = member_access(text, from, offset) {
        let replace = member_start..offset;
        return api_reference::members(table)
            .map(|entry| {
                let member = entry.name.split_once('.').map_or(entry.name, |(_, m)| m);
                let kind = if entry.function {
                    CompletionItemKind::FUNCTION
                } else {
                    CompletionItemKind::PROPERTY
                };
                let mut completion = item(
                    member.to_owned(),
                    kind,
                    Some(entry.signature.to_owned()),
                    &replace,
                    member.to_owned(),
                );
                completion.documentation = Some(Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: entry.doc.to_owned(),
                }));
                completion
            })
            .collect();
    }
    Vec::new()
}

/// At the start of a top-level key (column 0, only name characters before the
/// cursor): the range to replace and the keys already written.
fn frontmatter_keys(snapshot: &Snapshot, offset: usize) -> Option<(Range<usize>, Vec<&str>)> {
    let index = &snapshot.analysis.line_index;
    let line = index.line_of(offset);
    let start = index.line_start(line)?;
    let typed = snapshot.text.get(start..offset)?;
    if !typed.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    // Read from the lines, not the YAML model: the key being typed often makes the YAML invalid.
    let frontmatter = snapshot.analysis.document.frontmatter.as_ref()?;
    let yaml = snapshot.text.get(frontmatter.yaml_range.clone())?;
    let present = yaml
        .lines()
        .filter_map(|line| line.split_once(':').map(|(key, _)| key.trim_end()))
        .filter(|key| !key.is_empty() && !key.starts_with([' ', '\t', '-', '#']))
        .collect();
    Some((start..offset, present))
}
