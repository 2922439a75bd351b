//! `textDocument/codeAction`: the fixes of the diagnostics at the requested
//! range, as quick fixes. Which fixes a diagnostic offers is decided by its code
//! in the semantic layer ([`promptforge_analysis::fixes`]); this module only
//! renders them.

use std::collections::HashMap;
use std::ops::Range;

use promptforge_engine::requirements::CatalogView;
use tower_lsp::lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range as LspRange, TextEdit, WorkspaceEdit,
};

use crate::snapshot::Snapshot;

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The quick fixes of the diagnostics that overlap `range`.
pub fn code_actions(
    snapshot: &Snapshot,
    view: &CatalogView,
    range: LspRange,
) -> Vec<CodeActionOrCommand> {
    let positions = snapshot.positions();
    let wanted = positions.byte_range(range);
    let mut actions = Vec::new();
    for diagnostic in crate::diagnostics::found(snapshot, view).iter() {
        if !overlaps(&diagnostic.range, &wanted) {
            continue;
        }
        let published = crate::diagnostics::render(snapshot, diagnostic);
        for fix in &diagnostic.fixes {
            let edits = fix
                .edits
                .iter()
                .map(|edit| TextEdit {
                    range: positions.range(&edit.range),
                    new_text: edit.new_text.clone(),
                })
                .collect();
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![published.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(snapshot.uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
    }
    actions
}
