//! A prompt file kept parsed across edits: the tree-sitter tree is reparsed
//! incrementally, the frontmatter re-validated only when an edit touched it, and
//! only Lua blocks whose text changed are compiled again.

use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use tree_sitter::{InputEdit, Parser, Point, Tree};

use crate::body::{self, BodyContext};
use crate::diagnostic::{sort_in_document_order, Code, Diagnostic};
use crate::document::{Document, LuaBlock};
use crate::frontmatter::{self, Frontmatter};
use crate::items::{self, EditOffsets, Item, PreviousItems};
use crate::line_index::LineIndex;
use crate::lua::{LuaCompiler, LuaSyntaxError};
use crate::node_kinds::{kinds, language};
use crate::Analysis;

/// One text edit: replace the bytes in `range` with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// Byte range of the old text to replace.
    pub range: Range<usize>,
    /// The replacement.
    pub text: String,
}

/// An edit that does not fit the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The range ends past the text or starts after its end.
    OutOfBounds {
        /// The edit's range.
        range: Range<usize>,
        /// The text's length in bytes.
        len: usize,
    },
    /// A range end falls inside a multi-byte character.
    NotCharBoundary {
        /// The offending byte offset.
        offset: usize,
    },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::OutOfBounds { range, len } => write!(
                f,
                "edit range {}..{} is outside the text of {len} bytes",
                range.start, range.end
            ),
            EditError::NotCharBoundary { offset } => {
                write!(f, "edit offset {offset} is inside a character")
            }
        }
    }
}

impl std::error::Error for EditError {}

/// The frontmatter validation of a text prefix, reused while that prefix is unchanged.
#[derive(Debug, Clone)]
struct FrontmatterCache {
    /// The text from the file start to the end of the frontmatter.
    prefix: String,
    frontmatter: Frontmatter,
    diagnostics: Vec<Diagnostic>,
}

/// Compile results of the last analysis's Lua blocks, keyed by their code's byte range.
type LuaCache = HashMap<(usize, usize), Result<(), LuaSyntaxError>>;

/// What the last analysis had to redo, to show that unchanged parts are reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnalysisWork {
    /// True when the frontmatter was validated (not reused).
    pub frontmatter_validated: bool,
    /// How many Lua blocks were compiled (not reused).
    pub lua_blocks_compiled: usize,
}

/// A prompt file, its tree and its analysis, updated by [`ParsedFile::edit`].
pub struct ParsedFile {
    /// Shared with snapshots (an edit copies it only while a snapshot holds it).
    text: Arc<String>,
    work: AnalysisWork,
    parser: Parser,
    tree: Option<Tree>,
    /// Shared with snapshots; every re-analysis makes a new one.
    analysis: Arc<Analysis>,
    frontmatter_cache: Option<FrontmatterCache>,
    lua_cache: LuaCache,
    /// The body's block items of the current analysis, reused after edits.
    items: Vec<Item>,
    /// Compiles the Lua blocks for their syntax errors.
    lua: Arc<dyn LuaCompiler>,
    /// False for an analysis made once ([`ParsedFile::analyse_once`]): the tree
    /// is dropped as soon as the items are read from it.
    keep_tree: bool,
}

impl fmt::Debug for ParsedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParsedFile")
            .field("len", &self.text.len())
            .field("analysis", &self.analysis)
            .finish_non_exhaustive()
    }
}

fn new_parser() -> Parser {
    let mut parser = Parser::new();
    // The grammar is compiled into this crate; its ABI always matches.
    let _ = parser.set_language(&language());
    parser
}

impl ParsedFile {
    /// Parses and analyses `text` from scratch, its Lua blocks compiled by `lua`
    /// (`promptforge_luacheck::compiler()` in the product).
    pub fn new(text: String, lua: Arc<dyn LuaCompiler>) -> Self {
        let mut file = Self::unanalysed(text, lua, true);
        file.analyze(None);
        file
    }

    /// Parses and analyses `text` once, for a caller that makes no edit (`check`):
    /// the tree, which weighs several times the text, is dropped as soon as the
    /// body's items are read from it, and the text is handed back.
    pub fn analyse_once(text: String, lua: Arc<dyn LuaCompiler>) -> (Analysis, String) {
        let mut file = Self::unanalysed(text, lua, false);
        file.analyze(None);
        let ParsedFile { text, analysis, .. } = file;
        (
            Arc::try_unwrap(analysis).unwrap_or_else(|shared| (*shared).clone()),
            Arc::try_unwrap(text).unwrap_or_else(|shared| (*shared).clone()),
        )
    }

    /// `text` parsed, not yet analysed.
    fn unanalysed(text: String, lua: Arc<dyn LuaCompiler>, keep_tree: bool) -> Self {
        let mut parser = new_parser();
        let tree = parser.parse(&text, None);
        ParsedFile {
            text: Arc::new(text),
            work: AnalysisWork::default(),
            parser,
            tree,
            analysis: Arc::new(Analysis {
                document: Document::default(),
                diagnostics: Vec::new(),
                line_index: LineIndex::new(""),
            }),
            frontmatter_cache: None,
            lua_cache: LuaCache::default(),
            items: Vec::new(),
            lua,
            keep_tree,
        }
    }

    /// The current text.
    pub fn text(&self) -> &str {
        self.text.as_str()
    }

    /// The current text, shared: a reader keeps it without copying it.
    pub fn shared_text(&self) -> Arc<String> {
        Arc::clone(&self.text)
    }

    /// The current tree (None only if tree-sitter gave up, which it does not without a timeout).
    pub fn tree(&self) -> Option<&Tree> {
        self.tree.as_ref()
    }

    /// The current analysis.
    pub fn analysis(&self) -> &Analysis {
        &self.analysis
    }

    /// The current analysis, shared: a reader keeps it without copying it.
    pub fn shared_analysis(&self) -> Arc<Analysis> {
        Arc::clone(&self.analysis)
    }

    /// What the last analysis redid.
    pub fn last_work(&self) -> AnalysisWork {
        self.work
    }

    /// Consumes the file, keeping its analysis.
    pub fn into_analysis(self) -> Analysis {
        Arc::try_unwrap(self.analysis).unwrap_or_else(|shared| (*shared).clone())
    }

    /// Replaces the bytes in `range` with `new_text` and re-analyses incrementally.
    pub fn edit(&mut self, range: Range<usize>, new_text: &str) -> Result<(), EditError> {
        let len = self.text.len();
        if range.start > range.end || range.end > len {
            return Err(EditError::OutOfBounds { range, len });
        }
        for offset in [range.start, range.end] {
            if !self.text.is_char_boundary(offset) {
                return Err(EditError::NotCharBoundary { offset });
            }
        }
        let start_position = point_at(&self.text, range.start);
        let old_end_position = advance(start_position, &self.text.as_bytes()[range.clone()]);
        Arc::make_mut(&mut self.text).replace_range(range.clone(), new_text);
        let new_end = range.start + new_text.len();
        let input = InputEdit {
            start_byte: range.start,
            old_end_byte: range.end,
            new_end_byte: new_end,
            start_position,
            old_end_position,
            new_end_position: advance(start_position, new_text.as_bytes()),
        };
        if let Some(tree) = self.tree.as_mut() {
            tree.edit(&input);
        }
        self.tree = self.parser.parse(self.text.as_str(), self.tree.as_ref());
        self.analyze(Some(EditOffsets {
            start: range.start,
            old_end: range.end,
            new_end,
        }));
        Ok(())
    }

    /// Applies edits in order; stops at the first that does not fit.
    pub fn apply(&mut self, edits: &[Edit]) -> Result<(), EditError> {
        edits
            .iter()
            .try_for_each(|edit| self.edit(edit.range.clone(), &edit.text))
    }

    /// Rebuilds the analysis from the current tree, reusing what `edit` did not change.
    fn analyze(&mut self, edit: Option<EditOffsets>) {
        let text = self.text.as_str();
        let line_index = LineIndex::new(text);
        let mut work = AnalysisWork::default();
        let mut diagnostics = Vec::new();
        let mut document = Document {
            bom: text.starts_with('\u{feff}'),
            ..Document::default()
        };
        let root = self.tree.as_ref().map(|t| t.root_node());
        let frontmatter_node = root.and_then(|root| {
            let mut cursor = root.walk();
            let first = root.named_children(&mut cursor).next();
            first.filter(|n| n.kind_id() == kinds().frontmatter)
        });
        match (root, frontmatter_node) {
            (Some(root), Some(node)) => {
                let range = node.byte_range();
                let yaml = yaml_range(node);
                let (frontmatter, fm_diagnostics, validated) =
                    cached_frontmatter(&mut self.frontmatter_cache, text, yaml, range.clone());
                work.frontmatter_validated = validated;
                diagnostics.extend(fm_diagnostics);
                document.frontmatter = Some(frontmatter);
                let ctx = BodyContext {
                    text,
                    line_index: &line_index,
                    start: range.end,
                };
                let old_body_start = self
                    .analysis
                    .document
                    .frontmatter
                    .as_ref()
                    .map(|f| f.range.end);
                let items = match edit {
                    Some(span) if old_body_start == Some(range.end) && span.start >= range.end => {
                        let previous = PreviousItems {
                            items: &self.items,
                            line_index: &self.analysis.line_index,
                        };
                        items::read_after_edit(text, &line_index, root, range.end, previous, span)
                    }
                    _ => items::read_all(text, &line_index, root, range.end),
                };
                if !self.keep_tree {
                    self.tree = None;
                }
                let mut used = LuaCache::default();
                let previous = &self.lua_cache;
                let mut check = |block: &LuaBlock| {
                    let old = edit.and_then(|e| e.old_range(&block.code_range));
                    let result = match old.and_then(|key| previous.get(&key)) {
                        Some(result) => result.clone(),
                        None => {
                            work.lua_blocks_compiled += 1;
                            self.lua.check(&block.code)
                        }
                    };
                    used.insert(
                        (block.code_range.start, block.code_range.end),
                        result.clone(),
                    );
                    result
                };
                let model = body::analyze(&ctx, &items, &mut check, &mut diagnostics);
                self.lua_cache = used;
                self.items = items;
                document.title = model.title;
                document.h1_body = model.h1_body;
                document.sections = model.sections;
                document.lua_blocks = model.lua_blocks;
            }
            _ => {
                let start = if document.bom { 3 } else { 0 };
                let end = line_index.line_range(text, 0).map_or(start, |r| r.end);
                diagnostics.push(Diagnostic::new(Code::NoFrontmatter, start..end.max(start)));
                self.frontmatter_cache = None;
                self.lua_cache.clear();
                self.items.clear();
            }
        }
        sort_in_document_order(&mut diagnostics);
        self.work = work;
        self.analysis = Arc::new(Analysis {
            document,
            diagnostics,
            line_index,
        });
    }
}

/// The YAML text's range inside a `frontmatter` node.
fn yaml_range(node: tree_sitter::Node<'_>) -> Range<usize> {
    let mut cursor = node.walk();
    let children: Vec<_> = node.named_children(&mut cursor).collect();
    if let Some(content) = children
        .iter()
        .find(|c| c.kind_id() == kinds().frontmatter_content)
    {
        return content.byte_range();
    }
    let closing = children
        .iter()
        .rev()
        .find(|c| c.kind_id() == kinds().frontmatter_delimiter)
        .map_or(node.end_byte(), |c| c.start_byte());
    closing..closing
}

/// Validates the frontmatter, or reuses the last validation when the text up to
/// the frontmatter's end is unchanged; says which it did.
fn cached_frontmatter(
    cache: &mut Option<FrontmatterCache>,
    text: &str,
    yaml: Range<usize>,
    range: Range<usize>,
) -> (Frontmatter, Vec<Diagnostic>, bool) {
    let prefix = text.get(..range.end).unwrap_or("");
    if let Some(hit) = cache.as_ref().filter(|c| c.prefix == prefix) {
        return (hit.frontmatter.clone(), hit.diagnostics.clone(), false);
    }
    let mut diagnostics = Vec::new();
    let frontmatter = frontmatter::validate(text, yaml, range, &mut diagnostics);
    *cache = Some(FrontmatterCache {
        prefix: prefix.to_owned(),
        frontmatter: frontmatter.clone(),
        diagnostics: diagnostics.clone(),
    });
    (frontmatter, diagnostics, true)
}

/// Tree-sitter's point of a byte offset: rows end at `\n` only, columns are bytes.
fn point_at(text: &str, offset: usize) -> Point {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    advance(Point { row: 0, column: 0 }, before)
}

/// The point after `bytes` written from `from`.
fn advance(from: Point, bytes: &[u8]) -> Point {
    let rows = memchr::memchr_iter(b'\n', bytes).count();
    match memchr::memrchr(b'\n', bytes) {
        Some(last) => Point {
            row: from.row + rows,
            column: bytes.len() - last - 1,
        },
        None => Point {
            row: from.row,
            column: from.column + bytes.len(),
        },
    }
}

#[cfg(test)]
mod point_tests {
    use super::*;

    /// The point of an offset counted from the start, the only way tree-sitter
    /// defines it: rows end at `\n`, columns are bytes.
    fn counted(text: &str, offset: usize) -> Point {
        let before = &text.as_bytes()[..offset];
        let row = before.iter().filter(|&&b| b == b'\n').count();
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        Point {
            row,
            column: offset - start,
        }
    }

    #[test]
    fn a_point_advanced_over_any_span_is_the_point_counted_from_the_start() {
        let text = "a\nbc\r\nd\re\u{e9}\n\nlast";
        for start in 0..=text.len() {
            assert_eq!(point_at(text, start), counted(text, start), "at {start}");
            for end in start..=text.len() {
                let advanced = advance(counted(text, start), &text.as_bytes()[start..end]);
                assert_eq!(advanced, counted(text, end), "{start}..{end}");
            }
        }
    }
}
