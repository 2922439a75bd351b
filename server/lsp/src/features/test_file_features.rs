//! Completion, hover and definition in a prompt test file (`*.test.yaml`): the
//! keys of each map (`testing.md`), the prompt's aliases under `expect.calls`
//! and in scripted `calls`, the tool paths of the prompt's catalog under a case's
//! `tools:`; hover on a tool path and on an alias; definition from an alias to
//! the prompt's `tools:` key and from the `prompt:` value to the prompt file.
//!
//! The cursor's place is read from the lines (a block-style indentation walk), not
//! from the YAML model: the key being typed often makes the YAML invalid.

use std::ops::Range;
use std::path::PathBuf;

use promptforge_syntax::api_names::is_engine_tool;
use promptforge_syntax::frontmatter::Frontmatter;
use promptforge_syntax::test_file::problem::{
    ANSWER_KEYS, CASE_KEYS, ERROR_KEYS, EXPECT_KEYS, ROUND_KEYS, TOP_KEYS,
};
use promptforge_syntax::test_file::TestFile;
use promptforge_syntax::Analysis;
use tower_lsp::lsp_types::{
    CompletionItem, GotoDefinitionResponse, Hover, Location, Position, Range as LspRange, Url,
};

use crate::catalog::Catalogs;
use crate::convert::{self, Positions};
use crate::documents::Documents;
use crate::snapshot::Snapshot;
use promptforge_analysis::ide;
use promptforge_analysis::ide::catalog_completion::tool_items;
use promptforge_analysis::ide::completion_item::CompletionKind;
use promptforge_analysis::ide::cursor::{line_start, token_start};
use promptforge_analysis::ide::hover::{alias_text, tool_details};
use promptforge_engine::requirements::CatalogView;

/// The prompt a test file tests, read and parsed.
struct Prompt {
    /// The prompt's URI.
    uri: Url,
    /// The prompt's text.
    text: String,
    /// The syntax analysis of the text.
    analysis: Analysis,
}

impl Prompt {
    /// The prompt's frontmatter, when it has one.
    fn frontmatter(&self) -> Option<&Frontmatter> {
        self.analysis.document.frontmatter.as_ref()
    }

    /// The aliases the prompt offers: its `tools:` slots (with their tool paths),
    /// then its `tools.add_local` literal aliases.
    fn aliases(&self) -> Vec<(String, Option<String>)> {
        let mut out: Vec<(String, Option<String>)> = self
            .frontmatter()
            .map(|f| {
                f.tools
                    .iter()
                    .map(|s| {
                        (
                            s.alias.value.clone(),
                            s.path.as_ref().map(|p| p.value.clone()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        for alias in self.locals() {
            if !out.iter().any(|(known, _)| *known == alias) {
                out.push((alias, None));
            }
        }
        out
    }

    /// The literal aliases of the prompt's `tools.add_local` calls (none when a
    /// block was not read).
    fn locals(&self) -> Vec<String> {
        promptforge_analysis::test_file::local_tool_aliases(&self.text, &self.analysis.document)
            .unwrap_or_default()
    }
}

/// The test file of `snapshot`, parsed, and its prompt when it can be read.
fn load(documents: &Documents, snapshot: &Snapshot) -> (TestFile, Option<Prompt>) {
    let (file, _) = promptforge_syntax::test_file::parse(&snapshot.text);
    let test_path = crate::test_uris::path_of(&snapshot.uri);
    let prompt = crate::test_files::prompt_of(documents, &test_path, &file)
        .ok()
        .and_then(|(path, text): (PathBuf, String)| {
            let uri = Url::from_file_path(&path).ok()?;
            let analysis = promptforge_luacheck::parse(&text);
            Some(Prompt {
                uri,
                text,
                analysis,
            })
        });
    (file, prompt)
}

/// The catalog view of the prompt (an empty view without a prompt).
fn catalog_of(catalogs: &Catalogs, prompt: Option<&Prompt>) -> CatalogView {
    match prompt {
        Some(p) => catalogs.view(&p.uri, p.frontmatter()),
        None => CatalogView::default(),
    }
}

/// The block-style place of a line start: the keys of the maps that enclose a
/// key written at `line_start` with `indent` leading spaces, outermost first
/// (None when a value, not a map, encloses it: inside a block scalar or a key
/// with an inline value).
fn enclosing_keys(text: &str, line_start: usize, indent: usize) -> Option<Vec<String>> {
    let before = text.get(..line_start)?;
    let mut limit = indent;
    let mut keys = Vec::new();
    for line in before.lines().rev() {
        if limit == 0 {
            break;
        }
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("---") {
            continue;
        }
        let line_indent = line.len() - trimmed.len();
        if line_indent >= limit {
            continue;
        }
        // The key's column, after any `- ` list item marks.
        let mut content = trimmed;
        while let Some(rest) = content.strip_prefix('-') {
            if !(rest.is_empty() || rest.starts_with(' ')) {
                break;
            }
            content = rest.trim_start_matches(' ');
        }
        let column = line.len() - content.len();
        if column < limit {
            let (key, value) = content.split_once(':')?;
            let value = value.trim();
            if !(value.is_empty() || value.starts_with('#')) {
                return None;
            }
            keys.push(unquote(key.trim_end()).to_owned());
        }
        limit = line_indent;
    }
    keys.reverse();
    Some(keys)
}

/// A key without its quotes.
fn unquote(key: &str) -> &str {
    key.strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .or_else(|| key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
        .unwrap_or(key)
}

/// True for the characters of a key, an alias or a tool path.
fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.')
}

/// The completion items at `position` in the test file of `snapshot`.
pub fn completion(
    documents: &Documents,
    catalogs: &Catalogs,
    snapshot: &Snapshot,
    position: Position,
) -> Vec<CompletionItem> {
    completion_items(documents, catalogs, snapshot, position).unwrap_or_default()
}

fn completion_items(
    documents: &Documents,
    catalogs: &Catalogs,
    snapshot: &Snapshot,
    position: Position,
) -> Option<Vec<CompletionItem>> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let text = snapshot.text.as_str();
    let line_start = line_start(text, offset)?;
    let start = token_start(text, offset, is_word_char)?;
    let marks = text.get(line_start..start)?;
    // Only spaces and `- ` list marks may come before the key being typed.
    if !marks.chars().all(|c| c == ' ' || c == '-')
        || marks.contains("--")
        || marks.trim_start_matches(' ').starts_with('-') && !marks.ends_with(' ')
    {
        return None;
    }
    let indent = marks.len() - marks.trim_start_matches(' ').len();
    let keys = enclosing_keys(text, line_start, indent)?;
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let item = |label: &str, kind, detail, documentation, insert_text| {
        let item = ide::completion_item::CompletionItem {
            label: label.to_owned(),
            kind,
            detail,
            documentation,
            replace: start..offset,
            insert_text,
        };
        convert::completion_item(&positions, item)
    };
    let key_items = |list: &[&str]| {
        list.iter()
            .map(|k| item(k, CompletionKind::Property, None, None, format!("{k}: ")))
            .collect::<Vec<_>>()
    };
    match keys.as_slice() {
        [] => Some(key_items(TOP_KEYS)),
        ["cases"] => Some(key_items(CASE_KEYS)),
        ["cases", "expect"] => Some(key_items(EXPECT_KEYS)),
        ["cases", "expect", "error"] => Some(key_items(ERROR_KEYS)),
        ["cases", "model"] => Some(key_items(ROUND_KEYS)),
        ["cases", "tools", _] => Some(key_items(ANSWER_KEYS)),
        ["cases", "expect", "calls"] | ["cases", "model", "calls"] => {
            let (_, prompt) = load(documents, snapshot);
            let aliases = prompt.map(|p| p.aliases()).unwrap_or_default();
            Some(
                aliases
                    .iter()
                    .map(|(alias, path)| {
                        let detail = Some(
                            path.clone()
                                .unwrap_or_else(|| "local tool (tools.add_local)".to_owned()),
                        );
                        item(
                            alias,
                            CompletionKind::Function,
                            detail,
                            None,
                            format!("{alias}: "),
                        )
                    })
                    .collect(),
            )
        }
        ["cases", "tools"] => {
            let (_, prompt) = load(documents, snapshot);
            let catalog = catalog_of(catalogs, prompt.as_ref());
            let items = tool_items(&catalog, &(start..offset), |path| format!("{path}:"));
            let items = items.into_iter();
            Some(
                items
                    .map(|item| convert::completion_item(&positions, item))
                    .collect(),
            )
        }
        _ => None,
    }
}

fn contains(range: &Range<usize>, offset: usize) -> bool {
    range.start <= offset && offset <= range.end
}

/// The hover at `position` in the test file of `snapshot`: a tool path under a
/// case's `tools:` (its catalog description and parameters) or an alias.
pub fn hover(
    documents: &Documents,
    catalogs: &Catalogs,
    snapshot: &Snapshot,
    position: Position,
) -> Option<Hover> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let (file, prompt) = load(documents, snapshot);
    let (markdown, range) = if let Some(path) = file
        .cases
        .iter()
        .flat_map(|c| c.tools.iter())
        .map(|t| &t.path)
        .find(|p| contains(&p.range, offset))
    {
        let catalog = catalog_of(catalogs, prompt.as_ref());
        let text = match catalog.tool(&path.value) {
            Some(tool) => {
                let mut text = String::new();
                if !tool.description.trim().is_empty() {
                    text.push_str(tool.description.trim_end());
                    text.push_str("\n\n");
                }
                text.push_str(&format!("**tool** `{}`", path.value));
                text.push_str(&tool_details(tool));
                text
            }
            None => format!(
                "**tool** `{}`\n\nthe prompt's catalog has no tool with this path",
                path.value
            ),
        };
        (text, path.range.clone())
    } else {
        let alias = promptforge_analysis::test_file::named_aliases(&file)
            .into_iter()
            .find(|a| contains(&a.range, offset))?;
        let prompt = prompt.as_ref();
        let frontmatter = prompt.and_then(Prompt::frontmatter);
        let is_slot = frontmatter.is_some_and(|f| f.slot(&alias.value).is_some());
        let text = if is_slot {
            let catalog = catalog_of(catalogs, prompt);
            alias_text(frontmatter, &catalog, &alias.value)
        } else if prompt.is_some_and(|p| p.locals().contains(&alias.value)) {
            format!(
                "**local tool** `{}`\n\nregistered by the prompt's `tools.add_local`",
                alias.value
            )
        } else if is_engine_tool(&alias.value) {
            format!("**Engine tool** `{}`", alias.value)
        } else {
            format!(
                "`{}` is neither a tool slot nor a local tool of the prompt",
                alias.value
            )
        };
        (text, alias.range.clone())
    };
    Some(convert::hover(
        &positions,
        ide::hover::Hover { range, markdown },
    ))
}

/// The definition at `position` in the test file of `snapshot`: an alias -> the
/// prompt's `tools:` key; the `prompt:` value -> the prompt file.
pub fn definition(
    documents: &Documents,
    snapshot: &Snapshot,
    position: Position,
) -> Option<GotoDefinitionResponse> {
    let offset = snapshot.positions().offset(position);
    let (file, prompt) = load(documents, snapshot);
    let prompt = prompt?;
    if file
        .prompt
        .as_ref()
        .is_some_and(|p| contains(&p.range, offset))
    {
        return Some(GotoDefinitionResponse::Scalar(Location::new(
            prompt.uri.clone(),
            LspRange::default(),
        )));
    }
    let alias = promptforge_analysis::test_file::named_aliases(&file)
        .into_iter()
        .find(|a| contains(&a.range, offset))?;
    let slot = prompt.frontmatter()?.slot(&alias.value)?;
    let positions = Positions {
        text: &prompt.text,
        index: &prompt.analysis.line_index,
        encoding: snapshot.encoding,
    };
    Some(GotoDefinitionResponse::Scalar(Location::new(
        prompt.uri.clone(),
        positions.range(&slot.alias.range),
    )))
}

#[cfg(test)]
mod tests {
    use super::enclosing_keys;

    /// The enclosing keys of a key written at the start of the line after `before`.
    fn keys_after(before: &str, indent: usize) -> Option<Vec<String>> {
        enclosing_keys(before, before.len(), indent)
    }

    #[test]
    fn the_walk_reads_the_block_style_nesting() {
        assert_eq!(keys_after("prompt: p.md\n", 0), Some(vec![]));
        let case = "cases:\n  - name: a\n    args: x\n";
        assert_eq!(keys_after(case, 4), Some(vec!["cases".to_owned()]));
        let expect = "cases:\n  - name: a\n    expect:\n      calls:\n        f: 1\n";
        assert_eq!(
            keys_after(expect, 6),
            Some(vec!["cases".to_owned(), "expect".to_owned()])
        );
        assert_eq!(
            keys_after(expect, 8),
            Some(vec![
                "cases".to_owned(),
                "expect".to_owned(),
                "calls".to_owned()
            ])
        );
        let rounds = "cases:\n  - model:\n      # a comment\n\n      - text: hi\n";
        assert_eq!(
            keys_after(rounds, 6),
            Some(vec!["cases".to_owned(), "model".to_owned()])
        );
    }

    #[test]
    fn a_block_scalar_or_an_inline_value_is_no_map() {
        assert_eq!(keys_after("cases:\n  - args: |\n", 6), None);
        assert_eq!(keys_after("prompt: p.md\n", 2), None);
    }
}
