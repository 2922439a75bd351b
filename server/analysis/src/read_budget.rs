//! How much Lua the analysis reads (the trust issue). Reading a block's facts
//! is one pass over its tokens ([`crate::lua_facts`]), but the facts of every
//! block are kept while the document is open, and every request on the
//! document waits for them. So a block longer than [`MAX_BLOCK_BYTES`], or one
//! that would take the blocks read in one document past [`MAX_DOCUMENT_BYTES`],
//! is not read: the parse has compiled it (its syntax errors are reported), its
//! static checks and the editor's Lua features skip it, and one Information
//! diagnostic on its opening fence says so.
//!
//! Real prompts hold a few kilobytes of Lua; a generated table or an inlined
//! library may reach tens. The most one document reads, 1 MiB in four blocks
//! that call the Lua API on every line, goes from `didOpen` to its first
//! diagnostics in about 65 ms and 38 MiB on a release build (`bench_huge_block`;
//! 330 ms and 50 MiB when the facts came from tree-sitter-lua's tree).

use std::ops::Range;

use promptforge_syntax::{Code, Diagnostic, LuaBlock};

/// The longest Lua block the analysis reads, in bytes.
pub const MAX_BLOCK_BYTES: usize = 256 * 1024;

/// The most Lua the analysis reads in one document, in bytes (blocks in
/// document order, those not read left out).
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// Why a block is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unread {
    /// It is longer than [`MAX_BLOCK_BYTES`].
    Block,
    /// Reading it would take the document past [`MAX_DOCUMENT_BYTES`].
    Document,
}

/// For each block's code, in document order: None when the analysis reads it,
/// else why not.
pub fn plan<'a>(codes: impl IntoIterator<Item = &'a str>) -> Vec<Option<Unread>> {
    let mut read = 0usize;
    codes
        .into_iter()
        .map(|code| {
            if code.len() > MAX_BLOCK_BYTES {
                Some(Unread::Block)
            } else if read + code.len() > MAX_DOCUMENT_BYTES {
                Some(Unread::Document)
            } else {
                read += code.len();
                None
            }
        })
        .collect()
}

/// The Information diagnostic of a block not read, on its opening fence line
/// of `text`.
pub fn diagnostic(text: &str, block: &LuaBlock, unread: Unread) -> Diagnostic {
    let code = match unread {
        Unread::Block => Code::LuaBlockNotRead {
            bytes: block.code.len(),
            limit: MAX_BLOCK_BYTES,
            whole_document: false,
        },
        Unread::Document => Code::LuaBlockNotRead {
            bytes: block.code.len(),
            limit: MAX_DOCUMENT_BYTES,
            whole_document: true,
        },
    };
    Diagnostic::new(code, fence_line(text, &block.block_range))
}

/// The opening fence's line (without its end) of a block spanning `block`.
fn fence_line(text: &str, block: &Range<usize>) -> Range<usize> {
    let rest = text.get(block.start..block.end).unwrap_or("");
    let line = rest.split('\n').next().unwrap_or("");
    let line = line.strip_suffix('\r').unwrap_or(line);
    block.start..block.start + line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_past_either_budget_are_not_read() {
        let small = "x".repeat(250 * 1024);
        let large = "x".repeat(MAX_BLOCK_BYTES + 1);
        let codes = [
            small.as_str(),
            large.as_str(),
            &small,
            &small,
            &small,
            &small,
            "return 1",
        ];
        use Unread::{Block, Document};
        assert_eq!(
            plan(codes),
            [None, Some(Block), None, None, None, Some(Document), None]
        );
        assert_eq!(plan(["x".repeat(MAX_BLOCK_BYTES).as_str()]), [None]);
    }
}
