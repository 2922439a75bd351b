//! How much Lua the analysis reads (the trust issue). Reading a block's facts
//! is one pass over its tokens ([`crate::lua_facts`]), but the facts of every
//! block are kept while the document is open, and every request on the
//! document waits for them. So a block longer than [`MAX_BLOCK_BYTES`], or one
//! that would take the blocks read in one document past [`MAX_DOCUMENT_BYTES`],
//! is not read: the parse has compiled it (its syntax errors are reported), its
//! static checks and the editor's Lua features skip it, and an Information
//! diagnostic on its opening fence says so: one per block past the block limit,
//! and one for the document's limit, on the first block past it, counting the
//! later ones (a 10 MiB prompt has tens of thousands of them).
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

/// True when [`plan`] reads every block of these code lengths.
pub fn reads_all(lengths: impl IntoIterator<Item = usize>) -> bool {
    let mut read = 0usize;
    lengths.into_iter().all(|len| {
        read += len;
        len <= MAX_BLOCK_BYTES && read <= MAX_DOCUMENT_BYTES
    })
}

/// The Information diagnostics of the blocks not read, each on its opening
/// fence line of `text`: every block past the block limit, and the first past
/// the document's limit (counting the later ones), in document order. A block
/// never closed gets none: its Structure error says what is wrong, and its
/// syntax is not checked either.
pub fn diagnostics<'a>(
    text: &str,
    unread: impl IntoIterator<Item = (&'a LuaBlock, Unread)>,
) -> Vec<Diagnostic> {
    // A block never closed has its Structure error, and is not compiled either.
    let unread: Vec<(&LuaBlock, Unread)> = unread
        .into_iter()
        .filter(|(block, _)| block.closed)
        .collect();
    let past_document = unread.iter().filter(|(_, u)| *u == Unread::Document);
    let later = past_document.count().saturating_sub(1);
    let mut document_reported = false;
    let mut out = Vec::new();
    for (block, unread) in unread {
        let code = match unread {
            Unread::Block => Code::LuaBlockNotRead {
                bytes: block.code_range.len(),
                limit: MAX_BLOCK_BYTES,
                whole_document: false,
                later: 0,
            },
            Unread::Document if document_reported => continue,
            Unread::Document => {
                document_reported = true;
                Code::LuaBlockNotRead {
                    bytes: block.code_range.len(),
                    limit: MAX_DOCUMENT_BYTES,
                    whole_document: true,
                    later,
                }
            }
        };
        out.push(Diagnostic::new(code, fence_line(text, &block.block_range)));
    }
    out
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

    #[test]
    fn the_document_limit_is_reported_once_counting_the_later_blocks() {
        let text = "```lua\nA\n```\n```lua\nB\n```\n```lua\nC\n```\n```lua\nD\n```\n";
        let blocks: Vec<LuaBlock> = (0..4)
            .map(|i| LuaBlock {
                shared: false,
                code_range: i * 13 + 7..i * 13 + 9,
                block_range: i * 13..i * 13 + 13,
                first_line: 3 * i as u32 + 1,
                closed: true,
            })
            .collect();
        use Unread::{Block, Document};
        let unread = [
            (&blocks[0], Document),
            (&blocks[1], Block),
            (&blocks[2], Document),
            (&blocks[3], Document),
        ];
        let found = diagnostics(text, unread);
        let shown: Vec<(&str, &str)> = found
            .iter()
            .map(|d| (&text[d.range.clone()], d.message.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("```lua", "the document's Lua blocks together are past the 1048576 bytes the analysis reads: only the syntax of this block and of 2 later blocks is checked (no static checks, and no hover, completion or other Lua features in them)"),
                ("```lua", "this Lua block is 2 bytes, past the 262144 bytes the analysis reads of one block: only its syntax is checked (no static checks, and no hover, completion or other Lua features in it)"),
            ]
        );
        assert_eq!(found[0].range, 0..6);
        assert_eq!(found[1].range, 13..19);
        let one_later = diagnostics(text, [(&blocks[2], Document), (&blocks[3], Document)]);
        assert!(one_later[0].message.ends_with("only the syntax of this block and of 1 later block is checked (no static checks, and no hover, completion or other Lua features in them)"));
        let alone = diagnostics(text, [(&blocks[3], Document)]);
        assert_eq!(alone[0].message, "the document's Lua blocks together are past the 1048576 bytes the analysis reads: only its syntax is checked (no static checks, and no hover, completion or other Lua features in it)");
        // A block never closed is not compiled: its Structure error says it all.
        let never_closed = LuaBlock {
            closed: false,
            ..blocks[3].clone()
        };
        let unread = [(&blocks[2], Document), (&never_closed, Document)];
        let found = diagnostics(text, unread);
        assert_eq!(found.len(), 1);
        assert!(found[0].message.ends_with("only its syntax is checked (no static checks, and no hover, completion or other Lua features in it)"));
        assert!(diagnostics(text, [(&never_closed, Block)]).is_empty());
    }
}
