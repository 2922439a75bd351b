//! `textDocument/prepareRename` and `textDocument/rename`: an alias or a label
//! everywhere it is used; a section heading and every target naming it.

use std::collections::HashMap;

use promptforge_syntax::frontmatter::names::{is_reserved, is_valid_alias};
use tower_lsp::lsp_types::{Position, PrepareRenameResponse, TextEdit, WorkspaceEdit};

use crate::snapshot::Snapshot;
use promptforge_analysis::symbols::{occurrences, symbol_at, Symbol};

/// Why a document with a Lua block the analysis does not read renames nothing:
/// the uses in that block would be left behind.
pub const UNREAD_BLOCKS: &str = "cannot rename here: this prompt has Lua blocks too large to analyse (see their LuaBlockNotRead information), and their uses would not be renamed";

/// The range and current name of what can be renamed at `position`.
pub fn prepare_rename(snapshot: &Snapshot, position: Position) -> Option<PrepareRenameResponse> {
    let positions = snapshot.positions();
    let offset = positions.offset(position);
    let (_, range) = symbol_at(&snapshot.analysis.document, snapshot.model(), offset)?;
    let placeholder = snapshot
        .text
        .get(range.clone())?
        .trim_matches(['"', '\''])
        .to_owned();
    Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: positions.range(&range),
        placeholder,
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
    let document = &snapshot.analysis.document;
    let model = snapshot.model();
    let Some((symbol, _)) = symbol_at(document, model, offset) else {
        return Ok(None);
    };
    if model.blocks.iter().any(|facts| facts.unread.is_some()) {
        return Err(UNREAD_BLOCKS.to_owned());
    }
    match &symbol {
        Symbol::Alias(old) | Symbol::Label(old) => {
            if !is_valid_alias(new_name) {
                return Err(promptforge_syntax::frontmatter::messages::invalid_alias(
                    new_name,
                ));
            }
            if is_reserved(new_name) {
                return Err(promptforge_syntax::frontmatter::messages::reserved_name(
                    new_name,
                ));
            }
            let taken = document.frontmatter.as_ref().is_some_and(|f| {
                f.tools.iter().any(|s| s.alias.value == new_name)
                    || f.models.iter().any(|m| m.label.value == new_name)
            });
            if taken && new_name != old {
                return Err(format!(
                    "'{new_name}' is already a tool alias or a model label"
                ));
            }
        }
        Symbol::Section(index) => {
            if new_name.trim().is_empty()
                || new_name.contains(['\n', '\r'])
                || new_name != new_name.trim()
            {
                return Err(
                    "a section heading is one line of text without surrounding blanks".to_owned(),
                );
            }
            let sections = &model.sections;
            let parent = sections.get(*index).map(|s| s.parent);
            let duplicate = sections.all().iter().enumerate().any(|(i, s)| {
                i != *index && Some(s.parent) == parent && s.heading.text == new_name
            });
            if duplicate {
                return Err(format!("a sibling section is already named \"{new_name}\""));
            }
        }
    }
    let edits: Vec<TextEdit> = occurrences(document, model, &symbol)
        .into_iter()
        .map(|o| TextEdit::new(positions.range(&o.range), new_name.to_owned()))
        .collect();
    let mut changes = HashMap::new();
    changes.insert(snapshot.uri.clone(), edits);
    Ok(Some(WorkspaceEdit::new(changes)))
}
