//! The PromptForge semantic layer, between the syntax crate and the engine (it
//! depends on no engine and does no I/O: files come through [`source_files`]): the
//! facts of a document's Lua blocks, its section tree with visibility, the static
//! Lua checks, requirements against the Host's catalog, and every diagnostic with
//! the fixes that apply. `promptforge check` and the language server both call
//! [`diagnostics`] and only render what it returns. The editor's questions about
//! a prompt (hover, completion, definition, references, rename, inlay hints,
//! signature help) are answered in [`ide`] on byte offsets and plain types.

pub mod api_reference;
pub mod checks;
pub mod closing_fence;
pub mod facts_cache;
pub mod fixes;
pub mod ide;
pub mod local_tools;
pub mod lua_facts;
pub mod read_budget;
pub mod requirements;
pub mod source_files;
pub mod streamed_diagnostics;
pub mod symbols;
pub mod test_file;
pub mod tool_parameters;
pub mod unbound;

use std::sync::Arc;

use promptforge_syntax::{
    Analysis, BlockEdit, Diagnostic, Document, Frontmatter, Indexed, LuaBlock,
};
use requirements::CatalogView;

pub use facts_cache::FactsCache;
pub use lua_facts::LuaFacts;
pub use promptforge_syntax::sections::{self, Caller, Sections};

/// What the semantic layer reads of a parse besides the sections index: its
/// diagnostics, frontmatter and Lua blocks, never the section tree. `check`
/// parses without building the tree ([`Indexed`]): the 60,000 sections of a
/// 10 MiB prompt weigh 11 MiB in it.
#[derive(Debug, Clone, Copy)]
pub struct Parsed<'a> {
    /// The parse's diagnostics, in document order.
    pub diagnostics: &'a [Diagnostic],
    /// The frontmatter, when the file has one.
    pub frontmatter: Option<&'a Frontmatter>,
    /// Every executable block that runs, in document order.
    pub lua_blocks: &'a [LuaBlock],
}

impl<'a> Parsed<'a> {
    /// The parts of a whole analysis.
    pub fn of(analysis: &'a Analysis) -> Self {
        Parsed {
            diagnostics: &analysis.diagnostics,
            ..Parsed::of_document(&analysis.document)
        }
    }

    /// The parts of a prompt analysed without its section tree.
    pub fn of_indexed(indexed: &'a Indexed) -> Self {
        Parsed {
            diagnostics: &indexed.diagnostics,
            frontmatter: indexed.frontmatter.as_ref(),
            lua_blocks: &indexed.lua_blocks,
        }
    }

    /// The parts of a document, without the parse's diagnostics.
    pub fn of_document(document: &'a Document) -> Self {
        Parsed {
            diagnostics: &[],
            frontmatter: document.frontmatter.as_ref(),
            lua_blocks: &document.lua_blocks,
        }
    }
}

/// The semantic model of one text, beyond the syntax crate's analysis.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Model {
    /// The sections in document order and each block's caller.
    pub sections: Sections,
    /// The facts of each Lua block, indexed like `Document::lua_blocks` (shared
    /// with the document's [`FactsCache`] and other versions where unchanged),
    /// their ranges relative to the block's code ([`Model::blocks_in_file`]).
    pub blocks: Vec<Arc<LuaFacts>>,
    /// Where each block's code starts in the file, indexed like `blocks`.
    pub code_starts: Vec<usize>,
    /// The static Lua checks' problems.
    pub problems: Vec<Diagnostic>,
}

impl Model {
    /// Builds the model of a document parsed from `text`, reusing the facts of
    /// unchanged blocks from `cache`.
    pub fn build(text: &str, document: &Document, cache: &FactsCache) -> Self {
        Self::build_until(text, document, cache, &|| false)
    }

    /// Like [`Model::build`], reading no more blocks once `abandoned` says so
    /// (see [`FactsCache::shared_until`]): the model of a text nobody needs any
    /// more is left incomplete.
    pub fn build_until(
        text: &str,
        document: &Document,
        cache: &FactsCache,
        abandoned: &facts_cache::Abandoned<'_>,
    ) -> Self {
        let parsed = Parsed::of_document(document);
        let sections = Sections::new(document);
        let blocks = cache.shared_until(text, parsed.lua_blocks, abandoned);
        let code_starts = parsed
            .lua_blocks
            .iter()
            .map(|b| b.code_range.start)
            .collect();
        let problems = checks::check(parsed, &sections, &blocks);
        Model {
            sections,
            blocks,
            code_starts,
            problems,
        }
    }

    /// The model after a [`BlockEdit`], from this model of the text before it,
    /// moved in place: the sections and the other blocks' facts and problems
    /// shifted, the edited block's facts read and its problems found again
    /// (`document` is the analysis of `text`, after the edit). None when the
    /// edit may change more than its block: it changes the local tools the
    /// block registers, or a block is past the read budget. Then
    /// [`Model::build`] it.
    pub fn after_block_edit(
        mut self,
        text: &str,
        document: &Document,
        cache: &FactsCache,
        edit: &BlockEdit,
    ) -> Option<Model> {
        let blocks = &document.lua_blocks;
        let all_read = !self.blocks.iter().any(|f| f.unread.is_some())
            && read_budget::reads_all(blocks.iter().map(|b| b.code_range.len()));
        if self.blocks.len() != blocks.len() || !all_read {
            return None;
        }
        self.sections.shift(edit);
        for start in &mut self.code_starts {
            *start = edit.offset(*start);
        }
        let Some(index) = edit.block else {
            for problem in &mut self.problems {
                edit.shift_diagnostic(problem);
            }
            return Some(self);
        };
        let (block, old) = (blocks.get(index)?, self.blocks.get(index)?);
        let in_use =
            (self.blocks.iter().enumerate()).any(|(i, f)| i != index && Arc::ptr_eq(f, old));
        let facts = cache.replace(text, block, old, in_use);
        if !checks::same_registrations(old, &facts) {
            return None;
        }
        self.blocks[index] = facts;
        // Problems are in block order, each in its block's code: the edited
        // block's are those in its code before the edit.
        let old_code =
            block.code_range.start..=block.code_range.end + edit.edit.old_end - edit.edit.new_end;
        let at = self
            .problems
            .partition_point(|p| p.range.start < *old_code.start());
        let after = self.problems.split_off(at);
        let parsed = Parsed::of_document(document);
        let found = checks::check_block(parsed, &self.sections, &self.blocks, index);
        self.problems.extend(found);
        self.problems.extend(
            after
                .into_iter()
                .filter(|p| !old_code.contains(&p.range.start))
                .map(|mut p| {
                    edit.shift_diagnostic(&mut p);
                    p
                }),
        );
        Some(self)
    }

    /// Each block's facts with the byte where its code starts in the file: a
    /// fact's file range is [`lua_facts::in_file`] of that byte and its range.
    pub fn blocks_in_file(&self) -> impl Iterator<Item = (&LuaFacts, usize)> {
        self.blocks
            .iter()
            .zip(&self.code_starts)
            .map(|(facts, &start)| (facts.as_ref(), start))
    }
}

/// Every diagnostic of a prompt's text against its Host's catalog, in the order the
/// front ends show them: the parse's (in document order), the static Lua checks',
/// the blocks the analysis did not read ([`read_budget`]),
/// the requirements against the catalog, then the Lua uses of slots the catalog
/// leaves unbound; each with the fixes that apply. The static `tools.call`
/// problems list only the slots the catalog binds.
pub fn diagnostics(
    text: &str,
    analysis: &Analysis,
    model: &Model,
    view: &CatalogView,
) -> Vec<Diagnostic> {
    let parsed = Parsed::of(analysis);
    let unread = parsed.lua_blocks.iter().zip(&model.blocks);
    let unread = unread.filter_map(|(block, facts)| Some((block, facts.unread?)));
    let unbound = (parsed.frontmatter)
        .map(|frontmatter| unbound::check(frontmatter, model, view))
        .unwrap_or_default();
    assemble(text, parsed, model.problems.clone(), unread, unbound, view)
}

/// The diagnostics in the order the front ends show them: the parse's, the
/// static checks' `problems` (their bound aliases narrowed to the catalog's),
/// the blocks not read (`unread`), the requirements, then the Lua uses of
/// unbound slots (`unbound`); each with the fixes that apply.
pub(crate) fn assemble<'b>(
    text: &str,
    parsed: Parsed<'_>,
    mut problems: Vec<Diagnostic>,
    unread: impl IntoIterator<Item = (&'b LuaBlock, read_budget::Unread)>,
    unbound: Vec<Diagnostic>,
    view: &CatalogView,
) -> Vec<Diagnostic> {
    let mut out = parsed.diagnostics.to_vec();
    if let Some(frontmatter) = parsed.frontmatter {
        unbound::narrow_bound(&mut problems, frontmatter, view);
    }
    out.extend(problems);
    out.extend(read_budget::diagnostics(text, unread));
    if let Some(frontmatter) = parsed.frontmatter {
        out.extend(requirements::evaluate(frontmatter, view));
        out.extend(unbound);
    }
    for diagnostic in &mut out {
        diagnostic.fixes = fixes::fixes(text, parsed.frontmatter, diagnostic);
    }
    out
}

/// A parse for this crate's unit tests, which read facts and symbols, not Lua's
/// syntax errors: every block compiles (the syntax check with Lua itself is
/// `promptforge-luacheck`'s, tested there and in the workspace's tests).
#[cfg(test)]
pub(crate) fn parse_for_tests(text: &str) -> promptforge_syntax::Analysis {
    struct AllCompiles;
    impl promptforge_syntax::lua::LuaCompiler for AllCompiles {
        fn check(&self, _code: &str) -> Result<(), promptforge_syntax::lua::LuaSyntaxError> {
            Ok(())
        }
    }
    promptforge_syntax::parse_with(text, std::sync::Arc::new(AllCompiles))
}
