//! Completion from the Host's catalog inside the frontmatter: the Plugin ids the
//! Host registers inside `plugins:`, and the tool paths of the declared Plugins
//! inside a `tools:` value. Read from the lines, not the YAML model: the value
//! being typed often makes the YAML invalid.

use std::ops::Range;

use tower_lsp::lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, TextEdit,
};

use crate::snapshot::Snapshot;
use promptforge_engine::requirements::CatalogView;

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

/// The catalog completions at `offset` inside the frontmatter's YAML, or None
/// when the cursor is not at a Plugin id or a tool path.
pub fn completion(
    snapshot: &Snapshot,
    catalog: &CatalogView,
    offset: usize,
) -> Option<Vec<CompletionItem>> {
    let frontmatter = snapshot.analysis.document.frontmatter.as_ref()?;
    let text = snapshot.text.as_str();
    let key = enclosing_key(text, &frontmatter.yaml_range, offset)?;
    let line_start = text
        .get(..offset)?
        .rfind(['\n', '\r'])
        .map_or(0, |at| at + 1);
    let typed = text.get(line_start..offset)?;
    let token_len: usize = typed
        .chars()
        .rev()
        .take_while(|&c| is_name_char(c))
        .map(char::len_utf8)
        .sum();
    let start = offset - token_len;
    let prefix = text.get(line_start..start)?.trim_end();
    let prefix = prefix
        .strip_suffix(['"', '\''])
        .map_or(prefix, str::trim_end);
    let positions = snapshot.positions();
    let item = |label: &str, kind, detail: Option<String>, doc: Option<String>| CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail,
        documentation: doc.map(|value| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            })
        }),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
            range: positions.range(&(start..offset)),
            new_text: label.to_owned(),
        })),
        ..CompletionItem::default()
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
                        item(
                            id,
                            CompletionItemKind::MODULE,
                            Some("Plugin the Host registers".to_owned()),
                            None,
                        )
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
            Some(
                catalog
                    .tools()
                    .map(|tool| {
                        let detail = tool.description.lines().next().map(str::to_owned);
                        let doc = (!tool.description.is_empty()).then(|| tool.description.clone());
                        item(&tool.path, CompletionItemKind::FUNCTION, detail, doc)
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}
