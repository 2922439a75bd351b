//! The body's block items read off the tree, and their reuse across edits: after
//! an edit only the top-level nodes around the changed region are read again;
//! items before it are kept and items after it are shifted.

use std::ops::Range;
use std::sync::Arc;

use tree_sitter::Node;

use crate::document::Heading;
use crate::line_index::LineIndex;
use crate::lua::CompiledBlocks;
use crate::node_kinds::kinds;

/// One block-level item of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An ATX heading.
    Heading(Heading),
    /// A fenced code block: the whole block, its opening line and its code.
    Fence {
        /// The whole block.
        range: Range<usize>,
        /// The opening line, without its line ending.
        opener: Range<usize>,
        /// The code (an empty range where it would start when there is none).
        code: Range<usize>,
        /// False when no closing line follows: the fence runs to the end of the file.
        closed: bool,
    },
    /// A thematic break.
    Break(Range<usize>),
    /// A prose paragraph.
    Paragraph(Range<usize>),
}

impl Item {
    /// The byte where the item starts.
    pub fn start(&self) -> usize {
        self.range().start
    }

    /// The item's byte range.
    pub fn range(&self) -> &Range<usize> {
        match self {
            Item::Heading(h) => &h.line_range,
            Item::Fence { range, .. } | Item::Break(range) | Item::Paragraph(range) => range,
        }
    }

    /// The item moved by `bytes` and `lines` (an edit before it changed the text's length).
    fn shifted(&self, bytes: isize, lines: i64) -> Item {
        let at = |r: &Range<usize>| {
            r.start.saturating_add_signed(bytes)..r.end.saturating_add_signed(bytes)
        };
        match self {
            Item::Heading(h) => Item::Heading(Heading {
                level: h.level,
                text: h.text.clone(),
                line_range: at(&h.line_range),
                text_range: at(&h.text_range),
                line: u32::try_from(i64::from(h.line) + lines).unwrap_or(h.line),
            }),
            Item::Fence {
                range,
                opener,
                code,
                closed,
            } => Item::Fence {
                range: at(range),
                opener: at(opener),
                code: at(code),
                closed: *closed,
            },
            Item::Break(range) => Item::Break(at(range)),
            Item::Paragraph(range) => Item::Paragraph(at(range)),
        }
    }
}

/// The items of the previous analysis and what is needed to reuse them after an edit.
#[derive(Debug, Clone)]
pub struct PreviousItems<'a> {
    /// The items, in order.
    pub items: &'a [Item],
    /// The line index of the previous text.
    pub line_index: &'a LineIndex,
}

/// The edit between the previous text and the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditOffsets {
    /// Where the edit starts.
    pub start: usize,
    /// Where it ended in the previous text.
    pub old_end: usize,
    /// Where it ends in the current text.
    pub new_end: usize,
}

impl EditOffsets {
    /// The range `new` (of the current text) had in the previous text, when the edit left it untouched.
    pub fn old_range(&self, new: &Range<usize>) -> Option<(usize, usize)> {
        if new.end <= self.start {
            Some((new.start, new.end))
        } else if new.start >= self.new_end {
            let shift = |at: usize| at + self.old_end - self.new_end;
            Some((shift(new.start), shift(new.end)))
        } else {
            None
        }
    }
}

/// Where the frontmatter is: the whole node (both delimiter lines) and its YAML.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontmatterNode {
    /// From the opening delimiter to the end of the closing one.
    pub range: Range<usize>,
    /// The YAML lines between the delimiters (empty where it would be).
    pub yaml: Range<usize>,
}

/// The frontmatter, when it is the tree's first item.
pub fn frontmatter_of(root: Node<'_>) -> Option<FrontmatterNode> {
    let k = kinds();
    let mut cursor = root.walk();
    let node = root
        .named_children(&mut cursor)
        .next()
        .filter(|n| n.kind_id() == k.frontmatter)?;
    let mut content = None;
    let mut closing = None;
    for child in node.named_children(&mut cursor) {
        if child.kind_id() == k.frontmatter_content {
            content = Some(child.byte_range());
        } else if child.kind_id() == k.frontmatter_delimiter {
            closing = Some(child.start_byte());
        }
    }
    let yaml = content.unwrap_or_else(|| {
        let at = closing.unwrap_or(node.end_byte());
        at..at
    });
    Some(FrontmatterNode {
        range: node.byte_range(),
        yaml,
    })
}

/// What the analysis reads of a text with frontmatter before it builds the document.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// Where the frontmatter is.
    pub frontmatter: FrontmatterNode,
    /// The body's items, in order, in runs: one per window read, or one.
    pub items: Vec<Vec<Item>>,
    /// The compile errors of the Lua blocks already compiled.
    pub failed: CompiledBlocks,
    /// True when every executable block was compiled (and only the failures are
    /// in `failed`); else the blocks are compiled while building.
    pub all_compiled: bool,
}

/// Reads every top-level block item starting at or after `body_start`.
pub fn read_all(
    text: &str,
    line_index: &LineIndex,
    root: Node<'_>,
    body_start: usize,
) -> Vec<Item> {
    let mut items = Vec::new();
    read_nodes(text, line_index, root, body_start, |_| false, &mut items);
    items
}

/// Reads the items after an edit, reusing the previous ones the edit cannot have changed.
///
/// A top-level block is parsed from the text at its start alone (the frontmatter is
/// only at the file's start, and a fence's content is inside its block), looking
/// at most one line past its end. So the items that end more than a line before
/// the edit are kept, and reading stops at the first block after the edit that
/// starts where a previous item started (shifted by the edit): from there on the
/// text, and so every item, is the same, only shifted.
pub fn read_after_edit(
    text: &str,
    line_index: &LineIndex,
    root: Node<'_>,
    body_start: usize,
    previous: PreviousItems<'_>,
    edit: EditOffsets,
) -> Vec<Item> {
    let delta = edit.new_end as isize - edit.old_end as isize;
    let before_line = line_index.line_of(edit.start).saturating_sub(1);
    let window_start = line_index.line_start(before_line).unwrap_or(0);
    let kept = previous
        .items
        .iter()
        .take_while(|item| item.range().end < window_start && item.start() >= body_start)
        .count();
    let mut items: Vec<Item> = previous.items.get(..kept).unwrap_or_default().to_vec();
    let read_from = items.last().map_or(body_start, |item| item.range().end);
    let old_items = previous.items.get(kept..).unwrap_or_default();
    let mut resumed_at = None;
    read_nodes(
        text,
        line_index,
        root,
        read_from,
        |start| {
            if start < edit.new_end {
                return false;
            }
            let old_start = start.saturating_add_signed(-delta);
            match old_items.binary_search_by_key(&old_start, Item::start) {
                Ok(index) => {
                    resumed_at = Some(index);
                    true
                }
                Err(_) => false,
            }
        },
        &mut items,
    );
    if let Some(tail) = resumed_at.and_then(|index| old_items.get(index..)) {
        let lines = line_index.line_count() as i64 - previous.line_index.line_count() as i64;
        items.extend(tail.iter().map(|item| item.shifted(delta, lines)));
    }
    items
}

/// Appends the top-level items that start at or after `from`, until `stop` says to
/// stop at a node's start.
fn read_nodes(
    text: &str,
    line_index: &LineIndex,
    root: Node<'_>,
    from: usize,
    mut stop: impl FnMut(usize) -> bool,
    items: &mut Vec<Item>,
) {
    let k = kinds();
    let mut cursor = root.walk();
    if cursor.goto_first_child_for_byte(from).is_none() {
        return;
    }
    loop {
        let node = cursor.node();
        let kind = node.kind_id();
        if node.is_named() && node.start_byte() >= from && kind != k.frontmatter {
            if stop(node.start_byte()) {
                break;
            }
            let range = node.byte_range();
            let item = if kind == k.atx_heading {
                Item::Heading(read_heading(text, line_index, node))
            } else if kind == k.fenced_code_block {
                read_fence(node)
            } else if kind == k.thematic_break {
                Item::Break(range)
            } else {
                Item::Paragraph(range)
            };
            items.push(item);
        }
        if !cursor.goto_next_sibling() {
            break;
        }
    }
}

/// A fence's opening line and code ranges (an empty code range where the code
/// would start), and whether a closing line ends it (`fence_close` is there).
fn read_fence(node: Node<'_>) -> Item {
    let k = kinds();
    let range = node.byte_range();
    let (mut opener, mut code, mut close) = (None, None, None);
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = child.kind_id();
        if kind == k.fence_open {
            opener = Some(child.byte_range());
        } else if kind == k.code_content {
            code = Some(child.byte_range());
        } else if kind == k.fence_close {
            close = Some(child.start_byte());
        }
    }
    let code = code.unwrap_or_else(|| {
        let at = close.unwrap_or(range.end);
        at..at
    });
    Item::Fence {
        opener: opener.unwrap_or_else(|| range.clone()),
        code,
        range,
        closed: close.is_some(),
    }
}

fn read_heading(text: &str, line_index: &LineIndex, node: Node<'_>) -> Heading {
    let line_range = node.byte_range();
    let marker = node.child_by_field_name("marker");
    let level = marker.map_or(1, |m| m.byte_range().len()).clamp(1, 6) as u8;
    let marker_end = marker.map_or(line_range.start, |m| m.end_byte());
    let (heading, text_range) = match node.child_by_field_name("content") {
        Some(content) => (
            Arc::from(text.get(content.byte_range()).unwrap_or("")),
            content.byte_range(),
        ),
        None => (Arc::from(""), marker_end..marker_end),
    };
    Heading {
        level,
        text: heading,
        line: line_index.line_of(line_range.start),
        line_range,
        text_range,
    }
}
