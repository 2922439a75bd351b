//! Completion: top-level frontmatter keys; Plugin ids the Host registers inside
//! `plugins:` and tool paths of the declared Plugins inside a `tools:` value
//! ([`super::catalog_completion`]); aliases inside
//! `tools.call('`/`tools.add('`/`tools.always('`; labels inside
//! `models.use('`/`get('`/`default('`; the targets visible from the caller
//! inside `jump('`/`call('`/`fanout('`; the Lua API members after `tools.`,
//! `models.`, `store.`, `messages.` and `input.`.

use std::ops::Range;

use promptforge_syntax::frontmatter::KNOWN_KEYS;

use super::completion_item::{CompletionItem, CompletionKind};
use super::lua_context::{member_access, string_arg};
use super::{contains, PromptText};
use crate::api_reference;
use crate::requirements::CatalogView;
use crate::symbols::{ALIAS_FUNCTIONS, LABEL_FUNCTIONS, TARGET_FUNCTIONS};

/// The completion items at `offset`.
pub fn completion(
    prompt: PromptText<'_>,
    catalog: &CatalogView,
    offset: usize,
) -> Vec<CompletionItem> {
    let document = &prompt.analysis.document;
    let item = |label: String, kind, detail, replace: &Range<usize>, insert_text| CompletionItem {
        label,
        kind,
        detail,
        documentation: None,
        replace: replace.clone(),
        insert_text,
    };
    if let Some(frontmatter) = &document.frontmatter {
        if contains(&frontmatter.yaml_range, offset) {
            if let Some(items) = super::catalog_completion::completion(prompt, catalog, offset) {
                return items;
            }
            return frontmatter_keys(prompt, offset)
                .map(|(replace, present)| {
                    KNOWN_KEYS
                        .iter()
                        .filter(|k| !present.contains(k))
                        .map(|k| {
                            let kind = CompletionKind::Property;
                            item(k.to_string(), kind, None, &replace, format!("{k}: "))
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    let Some((block_index, block)) = prompt.lua_block_at(offset) else {
        return Vec::new();
    };
    let text = prompt.text;
    let from = block.code_range.start;
    if let Some(arg) = string_arg(text, from, offset) {
        let replace = arg.value_start..offset;
        let frontmatter = document.frontmatter.as_ref();
        if ALIAS_FUNCTIONS.contains(&arg.callee) {
            let slots = frontmatter.map_or(&[][..], |f| f.tools.as_slice());
            return slots
                .iter()
                .map(|s| {
                    let detail = s.path.as_ref().map(|p| p.value.clone());
                    let alias = s.alias.value.clone();
                    item(
                        alias.clone(),
                        CompletionKind::Function,
                        detail,
                        &replace,
                        alias,
                    )
                })
                .collect();
        }
        if LABEL_FUNCTIONS.contains(&arg.callee) {
            let models = frontmatter.map_or(&[][..], |f| f.models.as_slice());
            return models
                .iter()
                .map(|m| {
                    let detail = m.model.as_ref().map(|n| n.value.clone());
                    let label = m.label.value.clone();
                    item(
                        label.clone(),
                        CompletionKind::Variable,
                        detail,
                        &replace,
                        label,
                    )
                })
                .collect();
        }
        if TARGET_FUNCTIONS.contains(&arg.callee) {
            let sections = &prompt.model.sections;
            let caller = sections.caller_of_block(block_index);
            return sections
                .visible(caller)
                .into_iter()
                .filter_map(|i| sections.get(i))
                .map(|s| {
                    let target = s.heading.target();
                    item(
                        target.clone(),
                        CompletionKind::EnumMember,
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
                    CompletionKind::Function
                } else {
                    CompletionKind::Property
                };
                let signature = Some(entry.signature.to_owned());
                CompletionItem {
                    documentation: Some(entry.doc.to_owned()),
                    ..item(
                        member.to_owned(),
                        kind,
                        signature,
                        &replace,
                        member.to_owned(),
                    )
                }
            })
            .collect();
    }
    Vec::new()
}

/// At the start of a top-level key (column 0, only name characters before the
/// cursor): the range to replace and the keys already written.
fn frontmatter_keys(prompt: PromptText<'_>, offset: usize) -> Option<(Range<usize>, Vec<&str>)> {
    let index = &prompt.analysis.line_index;
    let line = index.line_of(offset);
    let start = index.line_start(line)?;
    let typed = prompt.text.get(start..offset)?;
    if !typed.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    // Read from the lines, not the YAML model: the key being typed often makes the YAML invalid.
    let frontmatter = prompt.analysis.document.frontmatter.as_ref()?;
    let yaml = prompt.text.get(frontmatter.yaml_range.clone())?;
    let present = yaml
        .lines()
        .filter_map(|line| line.split_once(':').map(|(key, _)| key.trim_end()))
        .filter(|key| !key.is_empty() && !key.starts_with([' ', '\t', '-', '#']))
        .collect();
    Some((start..offset, present))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{Fixture, DEMO};

    fn complete(text: &str, offset: usize) -> Vec<CompletionItem> {
        let fixture = Fixture::new(text);
        completion(fixture.prompt(), &CatalogView::default(), offset)
    }

    fn labels(items: &[CompletionItem]) -> Vec<&str> {
        items.iter().map(|i| i.label.as_str()).collect()
    }

    #[test]
    fn aliases_inside_an_alias_functions_string() {
        let offset = DEMO.find("fetch', {").expect("the use") + 2;
        let items = complete(DEMO, offset);
        assert_eq!(labels(&items), ["fetch", "search"]);
        assert_eq!(items[0].replace, offset - 2..offset);
        assert_eq!(items[0].kind, CompletionKind::Function);
        assert_eq!(items[0].detail.as_deref(), Some("promptforge/web/fetch"));
    }

    #[test]
    fn labels_and_visible_targets_inside_their_functions_strings() {
        let offset = DEMO.find("writer')").expect("the use");
        let items = complete(DEMO, offset);
        assert_eq!(labels(&items), ["writer"]);
        assert_eq!(
            (items[0].kind, items[0].detail.as_deref()),
            (CompletionKind::Variable, Some("gpt"))
        );
        let offset = DEMO.find("## Write')").expect("the target") + 3;
        let items = complete(DEMO, offset);
        assert_eq!(labels(&items), ["## Fetch", "## Write"]);
        assert_eq!(items[1].replace, offset - 3..offset);
    }

    #[test]
    fn api_members_after_a_table_with_their_signature_and_text() {
        let text = DEMO.replace("jump('## Write')", "tools.ad");
        let offset = text.find("tools.ad").expect("the member") + 8;
        let items = complete(&text, offset);
        assert!(
            labels(&items).contains(&"add_local"),
            "{:?}",
            labels(&items)
        );
        let add = items.iter().find(|i| i.label == "add").expect("tools.add");
        assert_eq!(add.replace, offset - 2..offset);
        assert_eq!(
            add.detail.as_deref(),
            Some("tools.add(alias [, description])")
        );
        assert_eq!(add.kind, CompletionKind::Function);
        assert!(add
            .documentation
            .as_deref()
            .is_some_and(|d| d.starts_with("Offers bound tools")));
    }

    #[test]
    fn missing_top_level_keys_at_the_start_of_a_frontmatter_line() {
        let text = "---\nname: p\npromptforge: 0\nmo\n---\n# P\n";
        let offset = text.find("mo\n").expect("the key") + 2;
        let items = complete(text, offset);
        assert_eq!(
            labels(&items),
            [
                "description",
                "plugins",
                "tools",
                "models",
                "max_tool_iterations"
            ]
        );
        assert_eq!(items[3].insert_text, "models: ");
        assert_eq!(items[3].replace, offset - 2..offset);
        assert_eq!(complete(text, text.find("# P").expect("body")), []);
    }
}
