//! `textDocument/hover`: [`promptforge_analysis::ide::hover`] at the position.

use promptforge_analysis::ide;
use promptforge_analysis::requirements::CatalogView;
use tower_lsp::lsp_types::{Hover, Position};

use crate::convert;
use crate::snapshot::Snapshot;

/// The hover at `position`, if anything there has one.
pub fn hover(snapshot: &Snapshot, catalog: &CatalogView, position: Position) -> Option<Hover> {
    let positions = snapshot.positions();
    let found = ide::hover::hover(snapshot.ide(), catalog, positions.offset(position))?;
    Some(convert::hover(&positions, found))
}
