//! Completion from the Host's catalog inside the frontmatter: the Plugin ids the
//! Host registers inside `plugins:`, and the tool paths of the declared Plugins
//! inside a `tools:` value. Read from the lines, not the YAML model: the value
//! being typed often makes the YAML invalid.

use std::ops::Range;

use super::completion_item::{CompletionItem, CompletionKind};
use super::cursor::{line_start, token_start};
use super::PromptText;
use crate::requirements::CatalogView;

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
}

/// The top-level key whose value holds `offset` (the nearest line above, or the
/// current one, that starts at column 0 with `key:`), read from the YAML lines.
fn enclosing_key(text: &str, yaml: &Range<usize>, offset: usize) -> Option<String> {
    let before = text.get(yaml.start..offset)?;
    before.lines().rev().find_map(|line| {
        let first = line.chars().next()?;
        if first.is_whitespace() || matches!(first, '-' | '#') {
            return None;
        }
        line.split_once(':').map(|(key, _)| key.trim().to_owned())
    })
}

/// One completion per tool of the catalog's ready Plugins: its path, the first
/// line of its description beside it and the whole description as documentation;
/// `insert` makes the text that replaces `replace` from the path.
pub fn tool_items(
    catalog: &CatalogView,
    replace: &Range<usize>,
    insert: impl Fn(&str) -> String,
) -> Vec<CompletionItem> {
    catalog
        .tools()
        .map(|tool| CompletionItem {
            label: tool.path.clone(),
            kind: CompletionKind::Function,
            detail: tool.description.lines().next().map(str::to_owned),
            documentation: (!tool.description.is_empty()).then(|| tool.description.clone()),
            replace: replace.clone(),
            insert_text: insert(&tool.path),
        })
        .collect()
}

/// The catalog completions at `offset` inside the frontmatter's YAML, or None
/// when the cursor is not at a Plugin id or a tool path.
pub fn completion(
    prompt: PromptText<'_>,
    catalog: &CatalogView,
    offset: usize,
) -> Option<Vec<CompletionItem>> {
    let frontmatter = prompt.analysis.document.frontmatter.as_ref()?;
    let text = prompt.text;
    let key = enclosing_key(text, &frontmatter.yaml_range, offset)?;
    let line_start = line_start(text, offset)?;
    let start = token_start(text, offset, is_name_char)?;
    let prefix = text.get(line_start..start)?.trim_end();
    let prefix = prefix
        .strip_suffix(['"', '\''])
        .map_or(prefix, str::trim_end);
    let item = |label: &str, kind, detail: Option<String>, documentation| CompletionItem {
        label: label.to_owned(),
        kind,
        detail,
        documentation,
        replace: start..offset,
        insert_text: label.to_owned(),
    };
    match key.as_str() {
        "plugins" => {
            let at_id = ["-", "[", ",", "ref:", "plugins:"]
                .iter()
                .any(|end| prefix.ends_with(end));
            if !at_id {
                return None;
            }
            let declared: Vec<&str> = frontmatter
                .plugins
                .iter()
                .filter(|d| d.id.range.start != start)
                .map(|d| d.id.value.as_str())
                .collect();
            Some(
                catalog
                    .registered
                    .iter()
                    .filter(|id| !declared.contains(&id.as_str()))
                    .map(|id| {
                        let detail = Some("Plugin the Host registers".to_owned());
                        item(id, CompletionKind::Module, detail, None)
                    })
                    .collect(),
            )
        }
        "tools" => {
            // `  alias: ` with the cursor in the value.
            let indented = prefix.starts_with([' ', '\t']);
            let alias = prefix.trim_start().strip_suffix(':')?;
            if !indented || alias.is_empty() || alias.contains([':', ' ']) {
                return None;
            }
            Some(tool_items(catalog, &(start..offset), str::to_owned))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{web_catalog, Fixture};

    fn labels(items: &[CompletionItem]) -> Vec<&str> {
        items.iter().map(|i| i.label.as_str()).collect()
    }

    #[test]
    fn plugin_ids_the_host_registers_and_the_prompt_does_not_declare() {
        let text =
            "---\nname: p\npromptforge: 0\nplugins:\n  - promptforge/web\n  - ac\n---\n# P\n";
        let fixture = Fixture::new(text);
        let offset = fixture.at("  - ac", 6);
        let items = completion(fixture.prompt(), &web_catalog(), offset).expect("at an id");
        assert_eq!(labels(&items), ["acme/notes"]);
        assert_eq!(items[0].replace, offset - 2..offset);
        assert_eq!(items[0].kind, CompletionKind::Module);
        assert_eq!(
            items[0].detail.as_deref(),
            Some("Plugin the Host registers")
        );
    }

    #[test]
    fn tool_paths_of_the_declared_plugins_in_a_slot_value() {
        let text = "---\nname: p\npromptforge: 0\nplugins: [promptforge/web]\ntools:\n  f: 'promptforge/w\n---\n# P\n";
        let fixture = Fixture::new(text);
        let offset = fixture.at("promptforge/w\n", 13);
        let items = completion(fixture.prompt(), &web_catalog(), offset).expect("at a path");
        assert_eq!(labels(&items), ["promptforge/web/fetch"]);
        assert_eq!(items[0].replace, offset - 13..offset);
        assert_eq!(items[0].detail.as_deref(), Some("Fetches a page."));
        assert_eq!(
            items[0].documentation.as_deref(),
            Some("Fetches a page.\nReturns its text.")
        );
        let key = fixture.at("  f:", 2);
        assert_eq!(completion(fixture.prompt(), &web_catalog(), key), None);
    }
}
