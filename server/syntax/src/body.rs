//! The body's structure (`language.md` §1.4): the one H1, the section tree,
//! executable blocks, off-walk and comment markers, and their errors.

use std::ops::Range;

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Body, Heading, LuaBlock, Section};
use crate::duplicate_sections::SeenHeadings;
use crate::items::Item;
use crate::line_index::LineIndex;
use crate::lua::LuaSyntaxError;
use crate::sections::{Caller, Sections, SectionsBuilder};

/// The message for a body without exactly one H1 in the right place.
pub const ONE_H1: &str = "a prompt has exactly one H1 title";
/// The message for a `lua shared` block outside the H1 body.
pub const SHARED_OUTSIDE_H1: &str = "lua shared blocks belong to the H1 body";
/// The message for a heading with only blanks after its `#` marks.
pub const EMPTY_HEADING: &str = "a heading needs a title";

/// `the lua block opened at line {line} is never closed` (`line` 1-based).
pub fn unclosed_block(line: u32) -> String {
    format!("the lua block opened at line {line} is never closed")
}

/// `heading level skipped: "{heading}" is an H{n} under an H{m}`.
pub fn level_skipped(heading: &str, level: u8, parent: u8) -> String {
    format!("heading level skipped: \"{heading}\" is an H{level} under an H{parent}")
}

/// `duplicate section "{heading}": also at line {line}` (`line` 1-based).
pub fn duplicate_section(heading: &str, line: u32) -> String {
    format!("duplicate section \"{heading}\": also at line {line}")
}

/// Whether a fence's opening line (without its line ending) opens an executable
/// block: `Some(false)` for ```` ```lua ````, `Some(true)` for ```` ```lua shared ````
/// (trailing blanks allowed), `None` for any other fence.
pub fn lua_fence(opener: &str) -> Option<bool> {
    match opener.trim_end_matches([' ', '\t']) {
        "```lua" => Some(false),
        "```lua shared" => Some(true),
        _ => None,
    }
}

/// The body part of a [`crate::Document`].
#[derive(Debug, Default)]
pub struct BodyModel {
    /// The H1 title.
    pub title: Option<Heading>,
    /// The H1 body.
    pub h1_body: Body,
    /// The section tree.
    pub sections: Vec<Section>,
    /// The executable blocks that run.
    pub lua_blocks: Vec<LuaBlock>,
}

/// What the analysis needs besides the tree.
pub struct BodyContext<'a> {
    /// The whole file text.
    pub text: &'a str,
    /// Its line index.
    pub line_index: &'a LineIndex,
    /// Byte offset where the body starts (the end of the frontmatter).
    pub start: usize,
}

/// A section still open while the tree is being built: the section (its range
/// ends when it closes) and its number in document order (its parent's key in
/// the duplicates map).
struct OpenSection {
    number: usize,
    section: Section,
}

/// Which body the items being read belong to: the H1's, or the innermost open
/// section's (the top of the stack).
#[derive(Clone, Copy, PartialEq)]
enum Current {
    H1,
    Section,
}

/// Per-body reading state.
#[derive(Default)]
struct BodyState {
    seen_content: bool,
    commented: bool,
}

/// Analyses the body below the frontmatter: builds the section tree, collects the
/// executable blocks, checks each with `check_lua` and reports every structure and
/// Lua error.
pub fn analyze(
    ctx: &BodyContext<'_>,
    items: &[Item],
    check_lua: &mut dyn FnMut(&LuaBlock) -> Result<(), LuaSyntaxError>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BodyModel {
    let shape = Shape::of(items.iter());
    analyze_items(ctx, &shape, items.iter().cloned(), check_lua, diagnostics)
}

/// [`analyze`] of items read in runs (a large text's windows), each run freed
/// as soon as the tree has taken its items: the items of a 10 MiB prompt weigh
/// 12 MiB, as much as the tree built from them.
pub fn analyze_runs(
    ctx: &BodyContext<'_>,
    runs: Vec<Vec<Item>>,
    check_lua: &mut dyn FnMut(&LuaBlock) -> Result<(), LuaSyntaxError>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BodyModel {
    let shape = Shape::of(runs.iter().flatten());
    analyze_items(
        ctx,
        &shape,
        runs.into_iter().flatten(),
        check_lua,
        diagnostics,
    )
}

/// [`analyze_runs`] without the section tree: the sections index
/// ([`Sections::new`] of the tree) is built as the body is read, and each
/// section is dropped as it closes. For `check`, which reads the index and
/// never the tree: the two together were its peak (the 60,000 sections of a
/// 10 MiB prompt weigh 11 MiB in the tree and 7 MiB in the index).
pub fn index_runs(
    ctx: &BodyContext<'_>,
    runs: Vec<Vec<Item>>,
    check_lua: &mut dyn FnMut(&LuaBlock) -> Result<(), LuaSyntaxError>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (BodyModel, Sections) {
    let shape = Shape::of(runs.iter().flatten());
    let index = SectionsBuilder::new(shape.headings, shape.fences);
    let mut builder = Builder::new(ctx, &shape, diagnostics, Some(index));
    builder.read_all(&shape, runs.into_iter().flatten(), check_lua);
    // The sections still open close into the index, then it is taken.
    builder.close_sections(ctx.text.len());
    let index = builder.index.take();
    let model = builder.finish();
    let sections = index
        .map(|index| index.finish(model.title.clone(), model.lua_blocks.len()))
        .unwrap_or_default();
    (model, sections)
}

/// What the tree is sized from, and where the H1 is, read before it is built.
struct Shape {
    /// Headings of levels 2 to 6.
    headings: usize,
    h2s: usize,
    fences: usize,
    /// The index of the first H1 among the items.
    first_h1: Option<usize>,
    /// Where the first item starts.
    first_start: Option<usize>,
}

impl Shape {
    fn of<'i>(items: impl Iterator<Item = &'i Item>) -> Self {
        let mut shape = Shape {
            headings: 0,
            h2s: 0,
            fences: 0,
            first_h1: None,
            first_start: None,
        };
        for (index, item) in items.enumerate() {
            shape.first_start.get_or_insert(item.start());
            match item {
                Item::Heading(h) if h.level == 1 => {
                    shape.first_h1.get_or_insert(index);
                }
                Item::Heading(h) => {
                    shape.headings += 1;
                    shape.h2s += usize::from(h.level == 2);
                }
                Item::Fence { .. } => shape.fences += 1,
                Item::Break(_) | Item::Paragraph(_) => {}
            }
        }
        shape
    }
}

fn analyze_items(
    ctx: &BodyContext<'_>,
    shape: &Shape,
    items: impl Iterator<Item = Item>,
    check_lua: &mut dyn FnMut(&LuaBlock) -> Result<(), LuaSyntaxError>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BodyModel {
    let mut builder = Builder::new(ctx, shape, diagnostics, None);
    builder.read_all(shape, items, check_lua);
    builder.finish()
}

struct Builder<'a, 'd> {
    ctx: &'a BodyContext<'a>,
    model: BodyModel,
    /// How many sections were opened so far.
    opened: usize,
    /// The open sections, shallowest first.
    stack: Vec<OpenSection>,
    /// Each section's heading, by its parent's number, level and text: the
    /// duplicates are found among them once every section is read.
    seen: SeenHeadings,
    current: Current,
    state: BodyState,
    diagnostics: &'d mut Vec<Diagnostic>,
    /// The sections index built as the body is read, when no tree is built.
    index: Option<SectionsBuilder>,
}

impl<'a, 'd> Builder<'a, 'd> {
    /// A builder for a body of this shape, making the section tree, or only
    /// the sections `index` when there is one.
    fn new(
        ctx: &'a BodyContext<'a>,
        shape: &Shape,
        diagnostics: &'d mut Vec<Diagnostic>,
        index: Option<SectionsBuilder>,
    ) -> Self {
        // Sized once: a 10 MiB prompt has tens of thousands of sections, and a
        // vector that doubles holds the old and the new copy at once. Sections
        // go straight into the tree as they close, with no flat copy of them all.
        let mut model = BodyModel::default();
        model.lua_blocks.reserve(shape.fences);
        if index.is_none() {
            model.sections.reserve(shape.h2s);
        }
        Builder {
            ctx,
            model,
            opened: 0,
            stack: Vec::new(),
            seen: SeenHeadings::with_capacity(shape.headings),
            current: Current::H1,
            state: BodyState::default(),
            diagnostics,
            index,
        }
    }

    fn read_all(
        &mut self,
        shape: &Shape,
        items: impl Iterator<Item = Item>,
        check_lua: &mut dyn FnMut(&LuaBlock) -> Result<(), LuaSyntaxError>,
    ) {
        self.check_h1_placement(shape);
        for (index, item) in items.enumerate() {
            self.read(item, Some(index) == shape.first_h1, check_lua);
        }
    }

    fn structure_error(&mut self, code: Code, at: usize) {
        let line = self.ctx.line_index.line_of(at);
        let range = self
            .ctx
            .line_index
            .line_range(self.ctx.text, line)
            .unwrap_or(at..at);
        self.diagnostics.push(Diagnostic::new(code, range));
    }

    /// One error when something comes before the H1, or when there is no H1.
    fn check_h1_placement(&mut self, shape: &Shape) {
        if let Some(index) = shape.first_h1 {
            if let Some(start) = shape.first_start.filter(|_| index > 0) {
                self.structure_error(Code::OneH1, start);
            }
            return;
        }
        let index = self.ctx.line_index;
        let line = index.line_of(self.ctx.start);
        let at_line_start = index.line_start(line) == Some(self.ctx.start);
        let next_line = if at_line_start { line } else { line + 1 };
        let range = index
            .line_range(self.ctx.text, next_line)
            .unwrap_or(self.ctx.text.len()..self.ctx.text.len());
        self.diagnostics.push(Diagnostic::new(Code::OneH1, range));
    }

    fn body_mut(&mut self) -> &mut Body {
        match (self.current, self.stack.last_mut()) {
            (Current::Section, Some(open)) => &mut open.section.body,
            _ => &mut self.model.h1_body,
        }
    }

    fn read(
        &mut self,
        item: Item,
        is_first_h1: bool,
        check_lua: &mut dyn FnMut(&LuaBlock) -> Result<(), LuaSyntaxError>,
    ) {
        match item {
            Item::Heading(heading) => {
                // An untitled heading is still a heading: it opens its section
                // (the first H1 is the title), after the rules of its place.
                let untitled = heading.text.is_empty().then_some(heading.line_range.start);
                self.read_heading(heading, is_first_h1);
                if let Some(at) = untitled {
                    self.structure_error(Code::EmptyHeading, at);
                }
            }
            Item::Break(range) => {
                let first = !self.state.seen_content;
                self.state.seen_content = true;
                match self.current {
                    Current::Section if first => {
                        if let Some(open) = self.stack.last_mut() {
                            open.section.off_walk = true;
                        }
                    }
                    _ if !self.state.commented => {
                        self.state.commented = true;
                        self.body_mut().comment = Some(range);
                    }
                    _ => {}
                }
            }
            Item::Paragraph(range) => {
                self.state.seen_content = true;
                if !self.state.commented {
                    self.body_mut().prose.push(range);
                }
            }
            Item::Fence {
                range,
                opener,
                code,
                closed,
            } => {
                self.state.seen_content = true;
                let shared = self.ctx.text.get(opener.clone()).and_then(lua_fence);
                // Under a comment too: the headings it swallowed are lost all the same.
                if shared.is_some() && !closed {
                    let line = self.ctx.line_index.line_of(opener.start) + 1;
                    self.structure_error(Code::UnclosedLuaBlock { line }, opener.start);
                }
                if let (Some(shared), false) = (shared, self.state.commented) {
                    let block = LuaBlock {
                        shared,
                        first_line: self.ctx.line_index.line_of(opener.start) + 1,
                        code_range: code,
                        block_range: range,
                        closed,
                    };
                    self.read_block(block, opener.start, check_lua);
                }
            }
        }
    }

    fn read_heading(&mut self, heading: Heading, is_first_h1: bool) {
        if heading.level > 1 {
            self.open_section(heading);
        } else if is_first_h1 {
            self.close_sections(heading.line_range.start);
            self.model.title = Some(heading);
            self.current = Current::H1;
            self.state = BodyState::default();
        } else {
            self.structure_error(Code::OneH1, heading.line_range.start);
            self.state.seen_content = true;
        }
    }

    /// An executable block that runs (not under a comment). One never closed
    /// is not compiled: its code is the rest of the file, and Lua's message
    /// would be about the Markdown it swallowed.
    fn read_block(
        &mut self,
        block: LuaBlock,
        opener: usize,
        check_lua: &mut dyn FnMut(&LuaBlock) -> Result<(), LuaSyntaxError>,
    ) {
        let shared = block.shared;
        if shared && self.current != Current::H1 {
            self.structure_error(Code::SharedOutsideH1, opener);
        }
        if block.closed {
            if let Err(err) = check_lua(&block) {
                self.lua_error(&block, err);
            }
        }
        let index = self.model.lua_blocks.len();
        if let Some(sections) = &mut self.index {
            let caller = match (self.current, self.stack.last()) {
                (Current::Section, Some(open)) => Caller::Section(open.number),
                _ => Caller::H1,
            };
            sections.block(index, caller, shared);
        }
        self.model.lua_blocks.push(block);
        self.body_mut().blocks.push(index);
    }

    fn lua_error(&mut self, block: &LuaBlock, err: LuaSyntaxError) {
        let diagnostic = lua_error(self.ctx.text, self.ctx.line_index, block, err);
        self.diagnostics.push(diagnostic);
    }

    /// Closes the innermost open section at byte `at`: it ends there and joins
    /// its parent's children (or the top-level sections), or only the index.
    fn close_innermost(&mut self, at: usize) {
        let Some(OpenSection {
            mut section,
            number,
        }) = self.stack.pop()
        else {
            return;
        };
        section.range.end = at;
        if let Some(sections) = &mut self.index {
            sections.close(number, at, section.off_walk);
            return;
        }
        match self.stack.last_mut() {
            Some(parent) => parent.section.children.push(section),
            None => self.model.sections.push(section),
        }
    }

    fn close_sections(&mut self, at: usize) {
        while !self.stack.is_empty() {
            self.close_innermost(at);
        }
    }

    fn open_section(&mut self, heading: Heading) {
        let start = heading.line_range.start;
        while let Some(open) = self.stack.last() {
            if open.section.heading.level < heading.level {
                break;
            }
            self.close_innermost(start);
        }
        let parent = self.stack.last().map(|open| open.number);
        let parent_level = self
            .stack
            .last()
            .map_or(1, |open| open.section.heading.level);
        if heading.level > parent_level + 1 {
            let code = Code::HeadingLevelSkipped {
                heading: heading.text.to_string(),
                level: heading.level,
                parent: parent_level,
            };
            self.structure_error(code, start);
        }
        // An untitled heading has its own error, and no title to repeat.
        if !heading.text.is_empty() {
            self.seen.push(parent, &heading);
        }
        let number = self.opened;
        self.opened += 1;
        if let Some(sections) = &mut self.index {
            sections.open(&heading, parent, self.ctx.text.len());
        }
        self.stack.push(OpenSection {
            number,
            section: Section {
                range: start..self.ctx.text.len(),
                heading,
                off_walk: false,
                body: Body::default(),
                children: Vec::new(),
            },
        });
        self.current = Current::Section;
        self.state = BodyState::default();
    }

    fn finish(mut self) -> BodyModel {
        self.close_sections(self.ctx.text.len());
        let seen = std::mem::take(&mut self.seen);
        for duplicate in seen.duplicates(self.ctx.text) {
            let code = Code::DuplicateSection {
                heading: duplicate.heading,
                line: duplicate.first_line + 1,
            };
            let at = self.ctx.line_index.line_start(duplicate.line);
            self.structure_error(code, at.unwrap_or(self.ctx.text.len()));
        }
        self.model
    }
}

/// The diagnostic of `block`'s Lua syntax error `err`: on the file line Lua
/// names, marking the token it names when the line holds it, reported at the
/// line's start.
pub(crate) fn lua_error(
    text: &str,
    index: &LineIndex,
    block: &LuaBlock,
    err: LuaSyntaxError,
) -> Diagnostic {
    let last_line = index.line_count().saturating_sub(1) as u32;
    let line = (block.first_line + err.line.saturating_sub(1)).min(last_line);
    let start = index.line_start(line).unwrap_or(block.block_range.start);
    let line_range = index.line_range(text, line).unwrap_or(start..start);
    // The editor marks the token Lua names (`near ')'`) when the line holds it;
    // `line:column` stays the line's start.
    let range = named_token(text, &line_range, &err.message).unwrap_or(line_range);
    Diagnostic::new(
        Code::LuaSyntax {
            message: crate::lua::in_file_lines(&err.message, block.first_line),
        },
        range,
    )
    .reported_at(start)
}

/// The byte range, within `line`, of the token a Lua message names (`... near 'x'`):
/// its first occurrence on the line; None for `near <eof>` or a token not there.
fn named_token(text: &str, line: &Range<usize>, message: &str) -> Option<Range<usize>> {
    let at = message.rfind(" near '")? + " near '".len();
    let token = message.get(at..)?.strip_suffix('\'')?;
    if token.is_empty() {
        return None;
    }
    let found = text.get(line.clone())?.find(token)?;
    Some(line.start + found..line.start + found + token.len())
}
