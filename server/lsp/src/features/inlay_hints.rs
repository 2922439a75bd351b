//! `textDocument/inlayHint`: the tool path after each string alias argument of
//! `tools.add`/`tools.always`/`tools.call` that names a tool slot, with the
//! catalog's description of the tool as its tooltip.

use tower_lsp::lsp_types::{
    InlayHint, InlayHintLabel, InlayHintTooltip, MarkupContent, MarkupKind, Range as LspRange,
};

use crate::snapshot::Snapshot;
use promptforge_analysis::symbols::{literal_uses, ALIAS_FUNCTIONS};
use promptforge_engine::requirements::CatalogView;

/// The inlay hints inside `range`.
pub fn inlay_hints(snapshot: &Snapshot, catalog: &CatalogView, range: LspRange) -> Vec<InlayHint> {
    let Some(frontmatter) = snapshot.analysis.document.frontmatter.as_ref() else {
        return Vec::new();
    };
    let positions = snapshot.positions();
    let wanted = positions.byte_range(range);
    literal_uses(snapshot.model())
        .into_iter()
        .filter(|used| ALIAS_FUNCTIONS.contains(&used.callee))
        .filter(|used| {
            let at = used.literal.range.end;
            wanted.start <= at && at <= wanted.end
        })
        .filter_map(|used| {
            let slot = frontmatter.slot(&used.literal.value)?;
            let path = slot.path.as_ref()?;
            let tooltip = catalog
                .tool(&path.value)
                .filter(|t| !t.description.is_empty())
                .map(|t| {
                    InlayHintTooltip::MarkupContent(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: t.description.clone(),
                    })
                });
            Some(InlayHint {
                position: positions.position(used.literal.range.end),
                label: InlayHintLabel::String(path.value.clone()),
                kind: None,
                text_edits: None,
                tooltip,
                padding_left: Some(true),
                padding_right: None,
                data: None,
            })
        })
        .collect()
}
