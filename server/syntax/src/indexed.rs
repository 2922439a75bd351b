//! What `check` keeps of a prompt it analyses once: the analysis without the
//! section tree, and the sections index ([`crate::ParsedFile::index_once`]).

use crate::diagnostic::Diagnostic;
use crate::document::LuaBlock;
use crate::frontmatter::Frontmatter;
use crate::line_index::LineIndex;
use crate::sections::Sections;

/// A prompt analysed once for a caller that never reads its section tree
/// (`check`): every part of its [`crate::Analysis`] but the tree, which is not built,
/// and the sections index, built as the body is read (equal to
/// [`Sections::new`] of the tree).
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    /// Every problem, in document order.
    pub diagnostics: Vec<Diagnostic>,
    /// The frontmatter, when the file has one.
    pub frontmatter: Option<Frontmatter>,
    /// Every executable block that runs, in document order.
    pub lua_blocks: Vec<LuaBlock>,
    /// Positions of the analysed text.
    pub line_index: LineIndex,
    /// The sections index.
    pub sections: Sections,
}
