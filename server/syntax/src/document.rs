//! The document model the engine and the language server consume.

use std::ops::Range;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::frontmatter::Frontmatter;

/// An ATX heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// The heading text, without the `#` markers, closing sequence and surrounding
    /// blanks (shared: the sections index and every later version of the document
    /// hold the same text, not a copy).
    pub text: Arc<str>,
    /// Byte range of the heading line, without its line ending.
    pub line_range: Range<usize>,
    /// Byte range of the text (empty at the end of the marker when there is none).
    pub text_range: Range<usize>,
    /// 0-based line of the heading.
    pub line: u32,
}

impl Heading {
    /// The target string naming this heading, such as `## Fetch`.
    pub fn target(&self) -> String {
        format!("{} {}", "#".repeat(usize::from(self.level)), self.text)
    }
}

/// An executable block: a fence opened by exactly ```` ```lua ```` or ```` ```lua shared ```` at column 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaBlock {
    /// True for ```` ```lua shared ````.
    pub shared: bool,
    /// Byte range of the code in the file text (the code is read from the text
    /// with [`LuaBlock::code`], never copied: a 10 MiB prompt's copies weighed
    /// 7 MiB, and an open document's as much as the rest of its analysis).
    pub code_range: Range<usize>,
    /// Byte range of the whole block, opening fence to closing fence (or end of file).
    pub block_range: Range<usize>,
    /// 0-based file line of the code's first line (the line after the opening fence).
    pub first_line: u32,
    /// False for a block never closed (a Structure error): its code runs to the
    /// end of the file, and is not compiled.
    pub closed: bool,
}

impl LuaBlock {
    /// The Lua source between the fences, read from the file `text` the block
    /// was parsed from (empty when the range is not in it).
    pub fn code<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.code_range.clone()).unwrap_or("")
    }

    /// The 1-based file line of a 1-based line inside the block's code.
    pub fn file_line(&self, lua_line: u32) -> u32 {
        self.first_line + lua_line.max(1)
    }
}

/// The indices of a body's blocks: most bodies have one or two, held inline.
/// A vector of its own per body weighed 48 bytes more per section on the heap
/// (3 MiB for the 60,000 sections of a 10 MiB prompt).
pub type BlockIndices = SmallVec<[usize; 2]>;

/// The ranges of a body's paragraphs: most bodies have one, held inline (a
/// vector of its own weighed 80 bytes more per section on the heap).
pub type ProseRanges = SmallVec<[Range<usize>; 1]>;

/// The runnable content under one heading, up to the next heading.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Body {
    /// Indices into [`Document::lua_blocks`] of the blocks that run, in order
    /// (blocks below a comment `---` do not run and are not listed).
    pub blocks: BlockIndices,
    /// Byte ranges of the prose paragraphs, for hovers and the outline.
    pub prose: ProseRanges,
    /// Byte range of the comment marker `---`, when one starts a comment.
    pub comment: Option<Range<usize>>,
}

/// An H2 to H6 section and its children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section's heading.
    pub heading: Heading,
    /// True when a thematic break is the section's first content: it runs only when addressed.
    pub off_walk: bool,
    /// The section's own content, up to the next heading.
    pub body: Body,
    /// Sections opened by deeper headings under this one, in document order.
    pub children: Vec<Section>,
    /// Byte range from the heading to the end of its last descendant's content.
    pub range: Range<usize>,
}

/// A parsed prompt file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Document {
    /// True when the text starts with a BOM.
    pub bom: bool,
    /// The frontmatter, when the file has one (its values may still have errors).
    pub frontmatter: Option<Frontmatter>,
    /// The H1 title.
    pub title: Option<Heading>,
    /// The H1 body: `lua shared` library blocks and H1 blocks.
    pub h1_body: Body,
    /// The H2 sections in document order, each with its children.
    pub sections: Vec<Section>,
    /// Every executable block that runs, in document order.
    pub lua_blocks: Vec<LuaBlock>,
}

impl Document {
    /// The shared library blocks of the H1 body, in order.
    pub fn shared_blocks(&self) -> impl Iterator<Item = &LuaBlock> {
        self.body_blocks(&self.h1_body).filter(|b| b.shared)
    }

    /// The section at `path`, the indices from the top-level sections down (None
    /// for the H1, an empty path, or a path out of range).
    pub fn section_at(&self, path: &[usize]) -> Option<&Section> {
        let (first, rest) = path.split_first()?;
        let mut section = self.sections.get(*first)?;
        for index in rest {
            section = section.children.get(*index)?;
        }
        Some(section)
    }

    /// The blocks of a body (resolving its indices), in order.
    pub fn body_blocks<'a>(&'a self, body: &'a Body) -> impl Iterator<Item = &'a LuaBlock> {
        body.blocks.iter().filter_map(|&i| self.lua_blocks.get(i))
    }
}
