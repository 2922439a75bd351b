//! `textDocument/documentSymbol`: the frontmatter with its keys, then the H1
//! with the section tree.

use tower_lsp::lsp_types::{DocumentSymbol, SymbolKind};

use crate::snapshot::Snapshot;
use promptforge_analysis::sections::Sections;
use promptforge_syntax::Heading;

#[allow(deprecated)] // `deprecated` is a required field of lsp-types' struct.
fn symbol(
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: tower_lsp::lsp_types::Range,
    selection: tower_lsp::lsp_types::Range,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children: Some(children),
    }
}

/// A heading's name in the outline: its text, or its `#` marks while it has
/// none (an error, but one typed on the way to every title): clients refuse a
/// symbol with an empty name (VS Code drops the whole outline).
fn name(heading: &Heading) -> String {
    if heading.text.is_empty() {
        "#".repeat(usize::from(heading.level))
    } else {
        heading.text.to_string()
    }
}

/// The outline of a snapshot.
pub fn document_symbols(snapshot: &Snapshot) -> Vec<DocumentSymbol> {
    let positions = snapshot.positions();
    let document = &snapshot.analysis.document;
    let mut out = Vec::new();
    if let Some(frontmatter) = &document.frontmatter {
        let keys = frontmatter
            .keys
            .iter()
            .map(|entry| {
                let whole = entry.key.range.start..entry.value_range.end.max(entry.key.range.end);
                symbol(
                    entry.key.value.clone(),
                    None,
                    SymbolKind::KEY,
                    positions.range(&whole),
                    positions.range(&entry.key.range),
                    Vec::new(),
                )
            })
            .collect();
        let opening =
            frontmatter.range.start..(frontmatter.range.start + 3).min(frontmatter.range.end);
        out.push(symbol(
            "frontmatter".to_owned(),
            frontmatter.name.as_ref().map(|n| n.value.clone()),
            SymbolKind::NAMESPACE,
            positions.range(&frontmatter.range),
            positions.range(&opening),
            keys,
        ));
    }
    let sections = &snapshot.model().sections;
    let children = section_symbols(snapshot, sections, None);
    match &document.title {
        Some(title) => {
            let range = title.line_range.start..snapshot.text.len();
            out.push(symbol(
                name(title),
                Some(title.target()),
                SymbolKind::MODULE,
                positions.range(&range),
                positions.range(&title.text_range),
                children,
            ));
        }
        None => out.extend(children),
    }
    out
}

fn section_symbols(
    snapshot: &Snapshot,
    sections: &Sections,
    parent: Option<usize>,
) -> Vec<DocumentSymbol> {
    let positions = snapshot.positions();
    sections
        .all()
        .iter()
        .enumerate()
        .filter(|(_, s)| s.parent == parent)
        .map(|(index, s)| {
            let detail = if s.off_walk { "off the walk" } else { "walked" };
            symbol(
                name(&s.heading),
                Some(format!("{} ({detail})", s.heading.target())),
                SymbolKind::FUNCTION,
                positions.range(&s.range),
                positions.range(&s.heading.text_range),
                section_symbols(snapshot, sections, Some(index)),
            )
        })
        .collect()
}
