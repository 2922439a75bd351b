//! A keystroke in a fenced block's code: an edit inside one block's code that
//! removes and inserts no line break and leaves every item of the body as it
//! was, only shifted. The analysis (and the semantic model) of the text before
//! it, shifted by the edit, is then the new one but for the edited block's own
//! results, so an edit in one Lua block of a long prompt redoes that block
//! alone instead of the whole document.
//!
//! Whether an edit is one is read from the tree-sitter parse after it, never
//! guessed from the text: the items read after the edit must be the previous
//! items shifted, and the edit must lie inside one fence's code.

use std::ops::Range;

use crate::diagnostic::Diagnostic;
use crate::document::{Body, Document, Heading, LuaBlock, Section};
use crate::items::{EditOffsets, Item};

/// An edit inside the code of one fenced block that left the body's structure
/// as it was: no line break removed or inserted, every item only shifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockEdit {
    /// The edited block's index in `Document::lua_blocks` (the same before and
    /// after), or None for a fence that does not run (```` ```text ````, a
    /// block under a comment).
    pub block: Option<usize>,
    /// The edit's offsets.
    pub edit: EditOffsets,
}

impl BlockEdit {
    /// Where a byte offset of the previous text is in the new one: unchanged up
    /// to the edit's start, moved by the edit's length change after it.
    pub fn offset(&self, at: usize) -> usize {
        if at <= self.edit.start {
            at
        } else {
            at.max(self.edit.old_end) - self.edit.old_end + self.edit.new_end
        }
    }

    /// A byte range of the previous text, in the new one.
    pub fn range(&self, range: &Range<usize>) -> Range<usize> {
        self.offset(range.start)..self.offset(range.end)
    }

    /// Moves a byte range of the previous text to the new one.
    pub fn shift_range(&self, range: &mut Range<usize>) {
        *range = self.range(range);
    }

    /// Moves a heading of the previous text to the new one.
    pub fn shift_heading(&self, heading: &mut Heading) {
        self.shift_range(&mut heading.line_range);
        self.shift_range(&mut heading.text_range);
    }

    /// Moves the document of the previous text to the new one, in place: every
    /// range shifted (the frontmatter is before the body, so it stays).
    pub fn shift_document(&self, document: &mut Document) {
        if let Some(title) = &mut document.title {
            self.shift_heading(title);
        }
        self.shift_body(&mut document.h1_body);
        for section in &mut document.sections {
            self.shift_section(section);
        }
        for block in &mut document.lua_blocks {
            self.shift_range(&mut block.code_range);
            self.shift_range(&mut block.block_range);
        }
    }

    fn shift_body(&self, body: &mut Body) {
        body.prose.iter_mut().for_each(|r| self.shift_range(r));
        if let Some(comment) = &mut body.comment {
            self.shift_range(comment);
        }
    }

    fn shift_section(&self, section: &mut Section) {
        self.shift_heading(&mut section.heading);
        self.shift_body(&mut section.body);
        self.shift_range(&mut section.range);
        for child in &mut section.children {
            self.shift_section(child);
        }
    }

    /// Moves a diagnostic of the previous text to the new one, in place (no
    /// message names a byte offset, and no line moved).
    pub fn shift_diagnostic(&self, diagnostic: &mut Diagnostic) {
        self.shift_range(&mut diagnostic.range);
        diagnostic.offset = self.offset(diagnostic.offset);
        for related in &mut diagnostic.related {
            self.shift_range(&mut related.range);
        }
        for fix in &mut diagnostic.fixes {
            for edit in &mut fix.edits {
                self.shift_range(&mut edit.range);
            }
        }
    }

    /// True when `new`, read after the edit, is the item `old` shifted.
    fn moved(&self, old: &Item, new: &Item) -> bool {
        match (old, new) {
            (Item::Heading(a), Item::Heading(b)) => {
                (b.level, b.line, &b.text) == (a.level, a.line, &a.text)
                    && b.line_range == self.range(&a.line_range)
                    && b.text_range == self.range(&a.text_range)
            }
            (
                Item::Fence {
                    range,
                    opener,
                    code,
                    closed,
                },
                Item::Fence {
                    range: new_range,
                    opener: new_opener,
                    code: new_code,
                    closed: new_closed,
                },
            ) => {
                closed == new_closed
                    && *new_range == self.range(range)
                    && *new_opener == self.range(opener)
                    && *new_code == self.range(code)
            }
            (Item::Break(a), Item::Break(b)) | (Item::Paragraph(a), Item::Paragraph(b)) => {
                *b == self.range(a)
            }
            _ => false,
        }
    }
}

/// The block edit `edit` is, when it is one: `single_line` (it removed and
/// inserted no line break), inside the code of one of the previous `items`
/// (not touching its fences; a fence with a closing line), and the items read
/// after it (`now`) are the previous ones shifted. `lua_blocks` are the previous document's.
pub(crate) fn find(
    items: &[Item],
    now: &[Item],
    lua_blocks: &[LuaBlock],
    edit: EditOffsets,
    single_line: bool,
) -> Option<BlockEdit> {
    if !single_line || items.len() != now.len() {
        return None;
    }
    let containing = items.partition_point(|i| i.start() <= edit.start);
    let code = match items.get(containing.checked_sub(1)?)? {
        // A block never closed is not compiled (`body`), so an edit in it is
        // analysed as any other: the shifted analysis would compile it.
        Item::Fence {
            code, closed: true, ..
        } if code.start <= edit.start && edit.old_end < code.end => code,
        _ => return None,
    };
    let block = lua_blocks
        .binary_search_by_key(&code.start, |b| b.code_range.start)
        .ok()
        .filter(|&i| lua_blocks.get(i).is_some_and(|b| b.code_range == *code));
    let found = BlockEdit { block, edit };
    let same = items
        .iter()
        .zip(now)
        .all(|(old, new)| found.moved(old, new));
    same.then_some(found)
}
