//! A prompt file kept parsed across edits: the tree-sitter tree is reparsed
//! incrementally, the frontmatter re-validated only when an edit touched it, and
//! only Lua blocks whose text changed are compiled again.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use tree_sitter::{InputEdit, Parser, Tree};

use crate::block_edit::{self, BlockEdit};
use crate::body::{self, BodyContext};
use crate::diagnostic::{sort_in_document_order, Code, Diagnostic};
use crate::document::{Document, LuaBlock};
use crate::frontmatter::{self, Frontmatter};
use crate::indexed::Indexed;
use crate::items::{self, EditOffsets, Item, Outline, PreviousItems};
use crate::line_index::LineIndex;
use crate::lua::{CompiledBlocks, LuaCompiler};
use crate::node_kinds;
use crate::points::{advance, point_at};
use crate::sections::Sections;
use crate::windows;
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

/// What the last analysis had to redo, to show that unchanged parts are reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnalysisWork {
    /// True when the frontmatter was validated (not reused).
    pub frontmatter_validated: bool,
    /// How many Lua blocks were compiled (not reused).
    pub lua_blocks_compiled: usize,
    /// True when the edit was a [`BlockEdit`]: the previous analysis was shifted,
    /// not rebuilt.
    pub shifted: bool,
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
    lua_cache: CompiledBlocks,
    /// The body's block items of the current analysis, reused after edits.
    items: Vec<Item>,
    /// Compiles the Lua blocks for their syntax errors.
    lua: Arc<dyn LuaCompiler>,
    /// False for an analysis made once ([`ParsedFile::analyse_once`]): the tree
    /// is dropped as soon as the items are read from it.
    keep_tree: bool,
    /// True for [`ParsedFile::index_once`]: the body's section tree is not
    /// built, the sections index is, into `index`.
    index_only: bool,
    index: Option<Sections>,
    /// How many analyses this file made: names the current one.
    generation: u64,
    /// The edit that made the current analysis from the one before, when it
    /// was a block edit.
    last_block_edit: Option<BlockEdit>,
}

impl fmt::Debug for ParsedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParsedFile")
            .field("len", &self.text.len())
            .field("analysis", &self.analysis)
            .finish_non_exhaustive()
    }
}

impl ParsedFile {
    /// Parses and analyses `text` from scratch, its Lua blocks compiled by `lua`
    /// (`promptforge_luacheck::compiler()` in the product).
    pub fn new(text: String, lua: Arc<dyn LuaCompiler>) -> Self {
        let mut file = Self::unanalysed(text, lua, true);
        file.analyze(None, false);
        file
    }

    /// Parses and analyses `text` once, for a caller that makes no edit (`check`):
    /// the tree, which weighs several times the text, is dropped as soon as the
    /// body's items are read from it, and the text is handed back. A large text is
    /// read in windows ([`windows`]), each with a tree of its own, in parallel
    /// where the machine has several cores.
    pub fn analyse_once(text: String, lua: Arc<dyn LuaCompiler>) -> (Analysis, String) {
        Self::analyse_once_in_windows(text, lua, windows::WINDOW)
    }

    /// [`ParsedFile::analyse_once`] with windows of about `window` bytes, read in
    /// windows from twice that size: the same analysis, whatever the window (the
    /// tests cut small texts into many windows to show it).
    pub fn analyse_once_in_windows(
        text: String,
        lua: Arc<dyn LuaCompiler>,
        window: usize,
    ) -> (Analysis, String) {
        let (analysis, _, text) = Self::once(text, lua, window, false).into_parts();
        (analysis, text)
    }

    /// [`ParsedFile::analyse_once`] for a caller that reads the sections index
    /// and never the section tree (`check`): the tree is not built, the index
    /// is, as the body is read.
    pub fn index_once(text: String, lua: Arc<dyn LuaCompiler>) -> (Indexed, String) {
        Self::index_once_in_windows(text, lua, windows::WINDOW)
    }

    /// [`ParsedFile::index_once`] with windows of about `window` bytes, as
    /// [`ParsedFile::analyse_once_in_windows`].
    pub fn index_once_in_windows(
        text: String,
        lua: Arc<dyn LuaCompiler>,
        window: usize,
    ) -> (Indexed, String) {
        let (analysis, index, text) = Self::once(text, lua, window, true).into_parts();
        // A text without frontmatter has no body read, and no sections.
        let sections = index.unwrap_or_else(|| Sections::new(&analysis.document));
        let Analysis {
            document,
            diagnostics,
            line_index,
        } = analysis;
        let indexed = Indexed {
            diagnostics,
            frontmatter: document.frontmatter,
            lua_blocks: document.lua_blocks,
            line_index,
            sections,
        };
        (indexed, text)
    }

    /// The analysis, the sections index (of [`ParsedFile::index_once`]) and the
    /// text of a file analysed once, moved out (copied only were a snapshot
    /// still sharing them, which an analysis made once never has).
    fn into_parts(self) -> (Analysis, Option<Sections>, String) {
        let ParsedFile {
            text,
            analysis,
            index,
            ..
        } = self;
        (
            Arc::try_unwrap(analysis).unwrap_or_else(|shared| (*shared).clone()),
            index,
            Arc::try_unwrap(text).unwrap_or_else(|shared| (*shared).clone()),
        )
    }

    /// `text` analysed once, in windows of about `window` bytes when it is
    /// large; without the section tree when `index_only`.
    fn once(text: String, lua: Arc<dyn LuaCompiler>, window: usize, index_only: bool) -> Self {
        let outline = (text.len() >= window.saturating_mul(2)).then(|| {
            let line_index = LineIndex::new(&text);
            windows::read(&text, &line_index, lua.as_ref(), window).map(|o| (o, line_index))
        });
        match outline.flatten() {
            Some((outline, line_index)) => {
                let mut file = Self::unparsed(text, lua, false);
                file.index_only = index_only;
                let text = Arc::clone(&file.text);
                file.build(&text, line_index, Some(outline), None);
                file
            }
            None => {
                let mut file = Self::unanalysed(text, lua, false);
                file.index_only = index_only;
                file.analyze(None, false);
                file
            }
        }
    }

    /// `text` parsed, not yet analysed.
    fn unanalysed(text: String, lua: Arc<dyn LuaCompiler>, keep_tree: bool) -> Self {
        let mut file = Self::unparsed(text, lua, keep_tree);
        file.tree = file.parser.parse(file.text.as_str(), None);
        file
    }

    /// `text` neither parsed nor analysed.
    fn unparsed(text: String, lua: Arc<dyn LuaCompiler>, keep_tree: bool) -> Self {
        ParsedFile {
            text: Arc::new(text),
            work: AnalysisWork::default(),
            parser: node_kinds::parser(),
            tree: None,
            analysis: Arc::default(),
            frontmatter_cache: None,
            lua_cache: CompiledBlocks::default(),
            items: Vec::new(),
            lua,
            keep_tree,
            index_only: false,
            index: None,
            generation: 0,
            last_block_edit: None,
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

    /// How many analyses this file made: names the current analysis, so that a
    /// reader can tell whether [`ParsedFile::last_block_edit`] starts from the
    /// analysis it holds.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// When the current analysis is the one of an earlier generation after a
    /// [`BlockEdit`]: that generation and the edit (a semantic model of that
    /// generation is then shifted too, see `Model::after_block_edit`).
    pub fn last_block_edit(&self) -> Option<(u64, BlockEdit)> {
        self.last_block_edit.map(|edit| (self.generation - 1, edit))
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
        let single_line = ![&self.text.as_bytes()[range.clone()], new_text.as_bytes()]
            .iter()
            .any(|bytes| bytes.iter().any(|b| matches!(b, b'\n' | b'\r')));
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
        let edit = EditOffsets {
            start: range.start,
            old_end: range.end,
            new_end,
        };
        self.analyze(Some(edit), single_line);
        Ok(())
    }

    /// Applies edits in order; stops at the first that does not fit.
    pub fn apply(&mut self, edits: &[Edit]) -> Result<(), EditError> {
        edits
            .iter()
            .try_for_each(|edit| self.edit(edit.range.clone(), &edit.text))
    }

    /// Rebuilds the analysis from the current tree, reusing what `edit` (the
    /// edit since the last analysis) did not change; `single_line` when it
    /// removed and inserted no line break.
    fn analyze(&mut self, edit: Option<EditOffsets>, single_line: bool) {
        let text = Arc::clone(&self.text);
        let line_index = match edit {
            Some(edit) => {
                let old = &self.analysis.line_index;
                old.edited(&text, edit.start, edit.old_end, edit.new_end)
            }
            None => LineIndex::new(&text),
        };
        let root = self.tree.as_ref().map(|t| t.root_node());
        let outline = root.and_then(|root| {
            let frontmatter = items::frontmatter_of(root)?;
            let body_start = frontmatter.range.end;
            let old_body_start = self
                .analysis
                .document
                .frontmatter
                .as_ref()
                .map(|f| f.range.end);
            let items = match edit {
                Some(span) if old_body_start == Some(body_start) && span.start >= body_start => {
                    let previous = PreviousItems {
                        items: &self.items,
                        line_index: &self.analysis.line_index,
                    };
                    items::read_after_edit(&text, &line_index, root, body_start, previous, span)
                }
                _ => items::read_all(&text, &line_index, root, body_start),
            };
            Some(Outline {
                frontmatter,
                items: vec![items],
                failed: CompiledBlocks::default(),
                all_compiled: false,
            })
        });
        if !self.keep_tree {
            self.tree = None;
        }
        self.generation += 1;
        self.last_block_edit = None;
        if let (Some(edit), Some(read), true) = (edit, &outline, self.keep_tree) {
            let same_frontmatter = (self.analysis.document.frontmatter.as_ref())
                .is_some_and(|f| f.range.end == read.frontmatter.range.end);
            let old = &self.analysis.document.lua_blocks;
            // Read from one tree, the items are one run.
            let items = read.items.first().map_or(&[][..], Vec::as_slice);
            let found = block_edit::find(&self.items, items, old, edit, single_line)
                .filter(|_| same_frontmatter);
            if let Some(found) = found {
                let items = outline.and_then(|o| o.items.into_iter().next());
                let items = items.unwrap_or_default();
                self.shift(&text, line_index, items, found);
                self.last_block_edit = Some(found);
                return;
            }
        }
        self.build(&text, line_index, outline, edit);
    }

    /// Makes the analysis of `text` from what was read of it: the frontmatter and
    /// the body's items (None when the text has no frontmatter), and the Lua blocks
    /// already compiled. Blocks neither compiled nor unchanged by `edit` are compiled.
    fn build(
        &mut self,
        text: &str,
        line_index: LineIndex,
        outline: Option<Outline>,
        edit: Option<EditOffsets>,
    ) {
        let mut work = AnalysisWork::default();
        let mut diagnostics = Vec::new();
        let mut document = Document {
            bom: text.starts_with('\u{feff}'),
            ..Document::default()
        };
        match outline {
            Some(Outline {
                frontmatter: node,
                items,
                failed,
                all_compiled,
            }) => {
                let (frontmatter, fm_diagnostics, validated) = cached_frontmatter(
                    &mut self.frontmatter_cache,
                    text,
                    node.yaml,
                    node.range.clone(),
                );
                work.frontmatter_validated = validated;
                diagnostics.extend(fm_diagnostics);
                document.frontmatter = Some(frontmatter);
                let ctx = BodyContext {
                    text,
                    line_index: &line_index,
                    start: node.range.end,
                };
                // An analysis made once has no later edit to reuse results for.
                let keep_results = self.keep_tree;
                let mut used = CompiledBlocks::default();
                if keep_results {
                    used.reserve(self.lua_cache.len());
                }
                let previous = &self.lua_cache;
                let mut check = |block: &LuaBlock| {
                    let here = (block.code_range.start, block.code_range.end);
                    let known = match edit {
                        Some(edit) => edit
                            .old_range(&block.code_range)
                            .and_then(|key| previous.get(&key))
                            .cloned(),
                        None if all_compiled => Some(failed.get(&here).cloned().unwrap_or(Ok(()))),
                        None => None,
                    };
                    let result = known.unwrap_or_else(|| {
                        work.lua_blocks_compiled += 1;
                        self.lua.check(block.code(text))
                    });
                    if keep_results {
                        used.insert(here, result.clone());
                    }
                    result
                };
                // A file that is edited later keeps its items, to compare the
                // next version's with; one analysed once frees each run of
                // them as soon as it is read.
                let model = if keep_results {
                    let items: Vec<Item> = items.into_iter().flatten().collect();
                    let model = body::analyze(&ctx, &items, &mut check, &mut diagnostics);
                    self.items = items;
                    model
                } else if self.index_only {
                    self.items = Vec::new();
                    let (model, index) =
                        body::index_runs(&ctx, items, &mut check, &mut diagnostics);
                    self.index = Some(index);
                    model
                } else {
                    self.items = Vec::new();
                    body::analyze_runs(&ctx, items, &mut check, &mut diagnostics)
                };
                self.lua_cache = used;
                document.title = model.title;
                document.h1_body = model.h1_body;
                document.sections = model.sections;
                document.lua_blocks = model.lua_blocks;
            }
            None => {
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

    /// Makes the analysis after a [`BlockEdit`] from the previous one, shifted:
    /// only the edited block is compiled again, and only its Lua error replaced.
    /// The previous analysis is shifted in place when nothing else holds it (a
    /// reader that does gets it copied first).
    fn shift(&mut self, text: &str, line_index: LineIndex, items: Vec<Item>, edit: BlockEdit) {
        let old_block = (edit.block)
            .and_then(|k| self.analysis.document.lua_blocks.get(k))
            .map(|b| b.block_range.clone());
        let analysis = Arc::make_mut(&mut self.analysis);
        edit.shift_document(&mut analysis.document);
        let in_old_block = |d: &Diagnostic| {
            old_block
                .as_ref()
                .is_some_and(|r| r.start <= d.offset && d.offset <= r.end)
        };
        analysis
            .diagnostics
            .retain(|d| !(matches!(d.code, Code::LuaSyntax { .. }) && in_old_block(d)));
        for diagnostic in &mut analysis.diagnostics {
            edit.shift_diagnostic(diagnostic);
        }
        analysis.line_index = line_index;
        let mut lua_cache = CompiledBlocks::default();
        lua_cache.reserve(self.lua_cache.len());
        for ((start, end), result) in self.lua_cache.drain() {
            lua_cache.insert((edit.offset(start), edit.offset(end)), result);
        }
        let mut work = AnalysisWork {
            shifted: true,
            ..AnalysisWork::default()
        };
        if let Some(block) = edit.block.and_then(|k| analysis.document.lua_blocks.get(k)) {
            work.lua_blocks_compiled = 1;
            let result = self.lua.check(block.code(text));
            if let Err(err) = &result {
                let diagnostic = body::lua_error(text, &analysis.line_index, block, err.clone());
                analysis.diagnostics.push(diagnostic);
                sort_in_document_order(&mut analysis.diagnostics);
            }
            lua_cache.insert((block.code_range.start, block.code_range.end), result);
        }
        self.lua_cache = lua_cache;
        self.items = items;
        self.work = work;
    }
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
