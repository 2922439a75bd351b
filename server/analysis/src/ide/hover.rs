//! Hover: an alias (the catalog's description of its tool, its tool path,
//! Plugin, parameters and trust), a model label (its options), a section target
//! or heading (the section's prose), a Plugin id (its tools), a tool path (its
//! tool), a frontmatter key, and the Lua API (signature and reference text).

use std::ops::Range;

use promptforge_syntax::frontmatter::Frontmatter;

use super::cursor::{is_ident, token_start};
use super::{contains, PromptText};
use crate::api_reference;
use crate::requirements::{CatalogView, PluginState, ToolInfo};
use crate::symbols::{symbol_at, Symbol};
use crate::tool_parameters::parameter_lines;

/// What a hover shows: Markdown about the range it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hover {
    /// The byte range the hover is about.
    pub range: Range<usize>,
    /// The text, in Markdown.
    pub markdown: String,
}

/// The hover at `offset`, if anything there has one.
pub fn hover(prompt: PromptText<'_>, catalog: &CatalogView, offset: usize) -> Option<Hover> {
    let document = &prompt.analysis.document;
    let found = |markdown: String, range: &Range<usize>| Hover {
        range: range.clone(),
        markdown,
    };
    if let Some((symbol, range)) = symbol_at(document, prompt.model, offset) {
        return symbol_text(prompt, catalog, &symbol).map(|text| found(text, &range));
    }
    if let Some(frontmatter) = &document.frontmatter {
        if let Some(plugin) = frontmatter
            .plugins
            .iter()
            .find(|p| contains(&p.id.range, offset))
        {
            let slots: Vec<String> = frontmatter
                .tools
                .iter()
                .filter(|s| s.plugin_id() == Some(plugin.id.value.as_str()))
                .map(|s| format!("`{}`", s.alias.value))
                .collect();
            let mut text = format!("**Plugin** `{}`", plugin.id.value);
            text.push_str(if plugin.optional {
                " (optional)"
            } else {
                " (required)"
            });
            if !slots.is_empty() {
                text.push_str(&format!("\n\nbacks the tool slots {}", slots.join(", ")));
            }
            text.push_str(&plugin_tools(catalog, &plugin.id.value));
            return Some(found(text, &plugin.id.range));
        }
        for slot in &frontmatter.tools {
            if let Some(path) = slot.path.as_ref().filter(|p| contains(&p.range, offset)) {
                let alias = Symbol::Alias(slot.alias.value.clone());
                return symbol_text(prompt, catalog, &alias).map(|t| found(t, &path.range));
            }
        }
        if let Some(entry) = frontmatter
            .keys
            .iter()
            .find(|k| contains(&k.key.range, offset))
        {
            let doc = key_doc(&entry.key.value)?;
            let text = format!("**`{}`**\n\n{doc}", entry.key.value);
            return Some(found(text, &entry.key.range));
        }
    }
    if prompt.lua_block_at(offset).is_some() {
        let (name, range) = dotted_name_at(prompt.text, offset)?;
        let entry = api_reference::lookup(&name)?;
        return Some(found(api_reference::hover_markdown(entry), &range));
    }
    None
}

fn symbol_text(prompt: PromptText<'_>, catalog: &CatalogView, symbol: &Symbol) -> Option<String> {
    let document = &prompt.analysis.document;
    let frontmatter = document.frontmatter.as_ref();
    match symbol {
        Symbol::Alias(alias) => Some(alias_text(frontmatter, catalog, alias)),
        Symbol::Label(label) => {
            let Some(decl) = frontmatter.and_then(|f| f.model(label)) else {
                return Some(format!(
                    "`{label}` is not a model label of this prompt (no `models:` key names it)"
                ));
            };
            let mut text = format!("**model label** `{label}`\n");
            let model = decl
                .model
                .as_ref()
                .map_or("the Host's default model".to_owned(), |m| {
                    format!("`{}`", m.value)
                });
            text.push_str(&format!("\n- model: {model}"));
            if let Some(t) = &decl.temperature {
                text.push_str(&format!("\n- temperature: {}", t.value));
            }
            if let Some(m) = &decl.max_tokens {
                text.push_str(&format!("\n- max_tokens: {}", m.value));
            }
            Some(text)
        }
        Symbol::Section(index) => {
            let section = prompt.model.sections.get(*index)?;
            let mut text = format!("**{}**", section.heading.target());
            if section.off_walk {
                text.push_str(" (off the walk: runs only when addressed)");
            }
            let content = document.section_at(&prompt.model.sections.path(*index))?;
            for prose in &content.body.prose {
                if let Some(paragraph) = prompt.text.get(prose.clone()) {
                    text.push_str("\n\n");
                    text.push_str(paragraph.trim_end());
                }
            }
            Some(text)
        }
    }
}

/// The hover text of the alias `alias` of the prompt whose frontmatter is
/// `frontmatter`: its tool's description, path, Plugin, parameters and trust.
pub fn alias_text(frontmatter: Option<&Frontmatter>, catalog: &CatalogView, alias: &str) -> String {
    let Some(slot) = frontmatter.and_then(|f| f.slot(alias)) else {
        return format!("`{alias}` is not a tool slot of this prompt (no `tools:` key names it)");
    };
    let tool = slot.path.as_ref().and_then(|p| catalog.tool(&p.value));
    let mut text = String::new();
    if let Some(tool) = tool.filter(|t| !t.description.trim().is_empty()) {
        text.push_str(tool.description.trim_end());
        text.push_str("\n\n");
    }
    text.push_str(&format!("**tool slot** `{alias}`"));
    if let Some(path) = &slot.path {
        text.push_str(&format!("\n\ntool path `{}`", path.value));
    }
    if let Some(plugin) = slot.plugin_id() {
        let declared = frontmatter.is_some_and(|f| f.plugins.iter().any(|p| p.id.value == plugin));
        let note = if declared {
            ""
        } else {
            ", not declared under `plugins:`"
        };
        text.push_str(&format!("\n\nPlugin `{plugin}`{note}"));
        match (tool, catalog.plugin(plugin).map(|p| &p.state)) {
            (Some(tool), _) => text.push_str(&tool_details(tool)),
            (None, Some(PluginState::Pending)) => {
                text.push_str("\n\nthe Plugin's tools are still being listed");
            }
            (None, Some(PluginState::Ready(_))) => {
                text.push_str("\n\nthe catalog has no tool with this path: the slot stays unbound")
            }
            (None, Some(PluginState::Failed(reason))) => {
                text.push_str(&format!("\n\nthe Plugin failed to activate: {reason}"));
            }
            (None, Some(PluginState::Unregistered)) => {
                text.push_str("\n\nthe Host registers no Plugin with this id");
            }
            (None, Some(PluginState::Untrusted(reason))) => {
                text.push_str(&format!("\n\nthe Plugin is not started: {reason}"));
            }
            (None, None) => {}
        }
    }
    text
}

/// A tool's parameters and trust, as paragraphs after the slot's lines.
pub fn tool_details(tool: &ToolInfo) -> String {
    let lines = parameter_lines(&tool.parameters);
    let mut text = if lines.is_empty() {
        "\n\nparameters: none".to_owned()
    } else {
        let listed: Vec<String> = lines.iter().map(|l| format!("- {l}")).collect();
        format!("\n\nparameters:\n{}", listed.join("\n"))
    };
    let trust = if tool.untrusted {
        "untrusted (the model receives it in the untrusted envelope)"
    } else {
        "trusted"
    };
    text.push_str(&format!("\n\noutput: {trust}"));
    if tool.structured {
        text.push_str(", structured (JSON)");
    }
    text
}

/// A Plugin's tools (or why there are none yet), as a paragraph after its lines.
fn plugin_tools(catalog: &CatalogView, id: &str) -> String {
    let Some(plugin) = catalog.plugin(id) else {
        return String::new();
    };
    match &plugin.state {
        PluginState::Unregistered => "\n\nthe Host registers no Plugin with this id".to_owned(),
        PluginState::Pending => "\n\nits tools are still being listed".to_owned(),
        PluginState::Failed(reason) => format!("\n\nit failed to activate: {reason}"),
        PluginState::Untrusted(reason) => format!("\n\nit is not started: {reason}"),
        PluginState::Ready(tools) if tools.is_empty() => "\n\nit contributes no tools".to_owned(),
        PluginState::Ready(tools) => {
            let listed: Vec<String> = tools
                .iter()
                .map(
                    |t| match t.description.lines().next().filter(|l| !l.is_empty()) {
                        Some(first) => format!("- `{}` - {first}", t.path),
                        None => format!("- `{}`", t.path),
                    },
                )
                .collect();
            format!("\n\ntools:\n{}", listed.join("\n"))
        }
    }
}

/// The dotted Lua name (`tools.call`) whose identifier part holds `offset`, with its range.
pub fn dotted_name_at(text: &str, offset: usize) -> Option<(String, Range<usize>)> {
    let start = token_start(text, offset, |c| is_ident(c) || c == '.')?;
    let end = offset
        + text
            .get(offset..)?
            .chars()
            .take_while(|&c| is_ident(c))
            .map(char::len_utf8)
            .sum::<usize>();
    let name = text.get(start..end)?.trim_start_matches('.');
    let start = end.saturating_sub(name.len());
    (!name.is_empty()).then(|| (name.to_owned(), start..end))
}

fn key_doc(key: &str) -> Option<&'static str> {
    Some(match key {
        "name" => "The prompt's name: `[a-z0-9][a-z0-9_-]{0,63}`. Required.",
        "description" => "What the prompt does, in one line. Required, not empty.",
        "promptforge" => "The format version: `0` is the only one.",
        "plugins" => "The Plugins the prompt uses, in activation order: a Plugin id (`namespace/plugin`) or a map with `ref`, `optional` and `config`.",
        "tools" => "Tool slots: `alias: namespace/plugin/name`. Each alias becomes a Lua global and a name `tools.call` accepts.",
        "models" => "Model labels: `label: { model, temperature, max_tokens }`. Each label becomes a Lua global; select one with `models.use` or `models.default`.",
        "max_tool_iterations" => "Rounds one `models.loop` may take: 1 to 1000, default 24.",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{web_catalog, Fixture, DEMO};

    fn hover_at(needle: &str, shift: usize, catalog: &CatalogView) -> Option<Hover> {
        let fixture = Fixture::new(DEMO);
        hover(fixture.prompt(), catalog, fixture.at(needle, shift))
    }

    #[test]
    fn a_label_shows_its_model_and_options() {
        let found = hover_at("writer')", 2, &CatalogView::default()).expect("a hover");
        let start = DEMO.find("writer')").expect("the use");
        assert_eq!(found.range, start..start + 6);
        assert_eq!(
            found.markdown,
            "**model label** `writer`\n\n- model: `gpt`\n- temperature: 0.5"
        );
    }

    #[test]
    fn an_alias_shows_its_tool_from_the_catalog() {
        let found = hover_at("fetch', {", 1, &web_catalog()).expect("a hover");
        assert_eq!(
            found.markdown,
            "Fetches a page.\nReturns its text.\n\n**tool slot** `fetch`\n\n\
             tool path `promptforge/web/fetch`\n\nPlugin `promptforge/web`\n\n\
             parameters:\n- url: string (required)\n\n\
             output: untrusted (the model receives it in the untrusted envelope)"
        );
    }

    #[test]
    fn a_plugin_id_lists_its_slots_and_tools() {
        let found = hover_at("promptforge/web\n", 3, &web_catalog()).expect("a hover");
        let start = DEMO.find("promptforge/web\n").expect("the id");
        assert_eq!(found.range, start..start + "promptforge/web".len());
        assert_eq!(
            found.markdown,
            "**Plugin** `promptforge/web` (required)\n\nbacks the tool slots `fetch`, `search`\n\n\
             tools:\n- `promptforge/web/fetch` - Fetches a page."
        );
    }

    #[test]
    fn a_target_shows_the_sections_prose_and_a_key_its_rule() {
        let target = hover_at("## Write'", 4, &CatalogView::default()).expect("a hover");
        assert_eq!(target.markdown, "**## Write**\n\nWrites the answer.");
        let key = hover_at("promptforge: 0", 2, &CatalogView::default()).expect("a hover");
        assert_eq!(
            key.markdown,
            "**`promptforge`**\n\nThe format version: `0` is the only one."
        );
        assert_eq!(
            key.range,
            DEMO.find("promptforge: 0").map(|s| s..s + 11).expect("key")
        );
    }

    #[test]
    fn the_lua_api_shows_its_signature_over_the_dotted_name() {
        let found = hover_at("tools.call", 7, &CatalogView::default()).expect("a hover");
        let start = DEMO.find("tools.call").expect("the call");
        assert_eq!(found.range, start..start + "tools.call".len());
        assert!(found
            .markdown
            .starts_with("```lua\ntools.call(alias, args)\n```\n\nCalls a bound tool"));
        assert_eq!(hover_at("local page", 8, &CatalogView::default()), None);
        assert_eq!(
            hover_at("Fetches the page", 2, &CatalogView::default()),
            None
        );
    }

    #[test]
    fn dotted_names_end_after_the_identifier_the_cursor_is_in() {
        assert_eq!(
            dotted_name_at("x = tools.call(", 12),
            Some(("tools.call".to_owned(), 4..14))
        );
        assert_eq!(dotted_name_at(".call", 2), Some(("call".to_owned(), 1..5)));
        assert_eq!(dotted_name_at("a ( b", 2), None);
    }
}
