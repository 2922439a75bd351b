//! `textDocument/completion`: [`promptforge_analysis::ide::completion`] at the position.

use promptforge_analysis::ide;
use promptforge_analysis::requirements::CatalogView;
use tower_lsp::lsp_types::{CompletionItem, Position};

use crate::convert;
use crate::snapshot::Snapshot;

/// The completion items at `position`.
pub fn completion(
    snapshot: &Snapshot,
    catalog: &CatalogView,
    position: Position,
) -> Vec<CompletionItem> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    ide::completion::completion(snapshot.ide(), catalog, offset)
        .into_iter()
        .map(|item| convert::completion_item(&positions, item))
        .collect()
}
