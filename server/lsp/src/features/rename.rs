//! `textDocument/prepareRename` and `textDocument/rename`:
//! [`promptforge_analysis::ide::rename`] at the position, as one document's edits.

use std::collections::HashMap;

use promptforge_analysis::ide;
use tower_lsp::lsp_types::{Position, PrepareRenameResponse, TextEdit, WorkspaceEdit};

use crate::snapshot::Snapshot;

/// The range and current name of what can be renamed at `position`.
pub fn prepare_rename(snapshot: &Snapshot, position: Position) -> Option<PrepareRenameResponse> {
    let positions = snapshot.positions();
    let target = ide::rename::prepare_rename(snapshot.ide(), positions.offset(position))?;
    Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: positions.range(&target.range),
        placeholder: target.placeholder,
    })
}

/// The edits renaming the symbol at `position` to `new_name`; Err with the reason
/// when the new name is not allowed, Ok(None) when nothing there can be renamed.
pub fn rename(
    snapshot: &Snapshot,
    position: Position,
    new_name: &str,
) -> Result<Option<WorkspaceEdit>, String> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let Some(ranges) = ide::rename::rename(snapshot.ide(), offset, new_name)? else {
        return Ok(None);
    };
    let edits: Vec<TextEdit> = ranges
        .iter()
        .map(|range| TextEdit::new(positions.range(range), new_name.to_owned()))
        .collect();
    let mut changes = HashMap::new();
    changes.insert(snapshot.uri.clone(), edits);
    Ok(Some(WorkspaceEdit::new(changes)))
}
