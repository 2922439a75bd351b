//! The semantic model of one snapshot: the facts of its Lua blocks, its
//! section tree with visibility, and the static Lua checks. What depends on the
//! Host's catalog (Plugins, tool descriptions, prepare problems) lives in
//! [`crate::catalog`]: it changes without the text changing.

pub mod checks;
pub mod facts_cache;
pub mod lua_context;
pub mod lua_facts;
pub mod messages;
pub mod sections;
pub mod symbols;

use std::sync::Arc;

use promptforge_syntax::Document;

pub use checks::StaticProblem;
pub use facts_cache::FactsCache;
pub use lua_facts::LuaFacts;
pub use sections::{Caller, Sections};

/// What the editor features read beyond the syntax crate's analysis.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Model {
    /// The sections in document order and each block's caller.
    pub sections: Sections,
    /// The facts of each Lua block, indexed like `Document::lua_blocks` (shared
    /// with the document's [`FactsCache`] and other versions where unchanged).
    pub blocks: Vec<Arc<LuaFacts>>,
    /// The static Lua checks' problems.
    pub problems: Vec<StaticProblem>,
}

impl Model {
    /// Builds the model of a document, reusing the facts of unchanged blocks from `cache`.
    pub fn build(document: &Document, cache: &FactsCache) -> Self {
        let sections = Sections::new(document);
        let blocks = cache.shared(&document.lua_blocks);
        let problems = checks::check(document, &sections, &blocks);
        Model {
            sections,
            blocks,
            problems,
        }
    }
}
