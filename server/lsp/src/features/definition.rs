//! `textDocument/definition`: [`promptforge_analysis::ide::definition`] at the position.

use promptforge_analysis::ide;
use tower_lsp::lsp_types::{GotoDefinitionResponse, Location, Position};

use crate::snapshot::Snapshot;

/// The declaration of the symbol at `position`.
pub fn definition(snapshot: &Snapshot, position: Position) -> Option<GotoDefinitionResponse> {
    let positions = snapshot.positions();
    let declaration = ide::definition::definition(snapshot.ide(), positions.offset(position))?;
    Some(GotoDefinitionResponse::Scalar(Location::new(
        snapshot.uri.clone(),
        positions.range(&declaration),
    )))
}
