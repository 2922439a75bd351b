//! `textDocument/references`: every place an alias, a label or a section is named.

use tower_lsp::lsp_types::{Location, Position};

use crate::snapshot::Snapshot;
use promptforge_analysis::symbols::{occurrences, symbol_at};

/// The places the symbol at `position` appears (its declaration when asked for).
pub fn references(
    snapshot: &Snapshot,
    position: Position,
    include_declaration: bool,
) -> Option<Vec<Location>> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let document = &snapshot.analysis.document;
    let model = snapshot.model();
    let (symbol, _) = symbol_at(document, model, offset)?;
    Some(
        occurrences(document, model, &symbol)
            .into_iter()
            .filter(|o| include_declaration || !o.declaration)
            .map(|o| Location::new(snapshot.uri.clone(), positions.range(&o.range)))
            .collect(),
    )
}
