//! Inlay hints: the tool path after each string alias argument of
//! `tools.add`/`tools.always`/`tools.call` that names a tool slot, with the
//! catalog's description of the tool as its tooltip. The hint types are shared
//! with the token counts ([`super::token_hints`]).

use std::ops::Range;

use super::{contains, PromptText};
use crate::requirements::CatalogView;
use crate::symbols::{literal_uses, ALIAS_FUNCTIONS};

/// What an inlay hint shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlayHintKind {
    /// The tool path of the slot an alias names.
    ToolPath,
    /// The token count of a text that goes to a model.
    TokenCount,
}

/// An inlay hint's tooltip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tooltip {
    /// Plain text.
    Plain(String),
    /// Markdown.
    Markdown(String),
}

/// A label shown after a place in the text (with a space before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    /// The byte offset the label follows.
    pub offset: usize,
    /// The label.
    pub label: String,
    /// What it shows.
    pub kind: InlayHintKind,
    /// More about it, on hovering the label.
    pub tooltip: Option<Tooltip>,
}

/// The tool path hints whose place is inside `wanted` (its ends included).
pub fn inlay_hints(
    prompt: PromptText<'_>,
    catalog: &CatalogView,
    wanted: &Range<usize>,
) -> Vec<InlayHint> {
    let Some(frontmatter) = prompt.analysis.document.frontmatter.as_ref() else {
        return Vec::new();
    };
    literal_uses(prompt.model)
        .into_iter()
        .filter(|used| ALIAS_FUNCTIONS.contains(&used.callee))
        .filter(|used| contains(wanted, used.range().end))
        .filter_map(|used| {
            let slot = frontmatter.slot(&used.literal.value)?;
            let path = slot.path.as_ref()?;
            let tooltip = catalog
                .tool(&path.value)
                .filter(|t| !t.description.is_empty())
                .map(|t| Tooltip::Markdown(t.description.clone()));
            Some(InlayHint {
                offset: used.range().end,
                label: path.value.clone(),
                kind: InlayHintKind::ToolPath,
                tooltip,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{web_catalog, Fixture, DEMO};

    #[test]
    fn each_alias_argument_shows_its_tool_path() {
        let fixture = Fixture::new(DEMO);
        let hints = inlay_hints(fixture.prompt(), &web_catalog(), &(0..DEMO.len()));
        let search = fixture.at("'search')", 8);
        let fetch = fixture.at("'fetch', {", 7);
        assert_eq!(
            hints,
            [
                InlayHint {
                    offset: search,
                    label: "promptforge/web/search".to_owned(),
                    kind: InlayHintKind::ToolPath,
                    tooltip: None,
                },
                InlayHint {
                    offset: fetch,
                    label: "promptforge/web/fetch".to_owned(),
                    kind: InlayHintKind::ToolPath,
                    tooltip: Some(Tooltip::Markdown(
                        "Fetches a page.\nReturns its text.".to_owned()
                    )),
                },
            ]
        );
        let only_fetch = inlay_hints(fixture.prompt(), &web_catalog(), &(fetch..fetch));
        assert_eq!(only_fetch.len(), 1);
    }
}
