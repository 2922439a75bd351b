//! `textDocument/references`: [`promptforge_analysis::ide::references`] at the position.

use promptforge_analysis::ide;
use tower_lsp::lsp_types::{Location, Position};

use crate::snapshot::Snapshot;

/// The places the symbol at `position` appears (its declaration when asked for).
pub fn references(
    snapshot: &Snapshot,
    position: Position,
    include_declaration: bool,
) -> Option<Vec<Location>> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let ranges = ide::references::references(snapshot.ide(), offset, include_declaration)?;
    Some(
        ranges
            .iter()
            .map(|range| Location::new(snapshot.uri.clone(), positions.range(range)))
            .collect(),
    )
}
