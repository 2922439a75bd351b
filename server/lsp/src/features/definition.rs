//! `textDocument/definition`: an alias or label use -> its frontmatter key; a
//! target -> its heading.

use tower_lsp::lsp_types::{GotoDefinitionResponse, Location, Position};

use crate::snapshot::Snapshot;
use promptforge_analysis::symbols::{occurrences, symbol_at};

/// The declaration of the symbol at `position`.
pub fn definition(snapshot: &Snapshot, position: Position) -> Option<GotoDefinitionResponse> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let document = &snapshot.analysis.document;
    let model = snapshot.model();
    let (symbol, _) = symbol_at(document, model, offset)?;
    let declaration = occurrences(document, model, &symbol)
        .into_iter()
        .find(|o| o.declaration)?;
    Some(GotoDefinitionResponse::Scalar(Location::new(
        snapshot.uri.clone(),
        positions.range(&declaration.range),
    )))
}
