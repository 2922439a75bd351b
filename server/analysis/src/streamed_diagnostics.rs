//! Every diagnostic of a prompt, as [`crate::diagnostics`] finds them from a
//! [`crate::Model`], but reading the Lua facts a batch of blocks at a time and
//! dropping each batch once its blocks are checked: for `check`, which asks
//! nothing else of the facts. A 10 MiB prompt's model holds 10 MiB of facts
//! (those of the first mebibyte of Lua) until its diagnostics are made; here
//! at most one batch's are held, with those of the blocks that register local
//! tools (every block's checks read those).
//!
//! The rules are the model's: [`crate::checks`] and [`crate::unbound`] judge
//! each block alike, and [`crate::diagnostics`]'s assembly orders the list;
//! only the order of the work differs, and the result is the same list.

use promptforge_syntax::sections::Sections;
use promptforge_syntax::Diagnostic;

use crate::checks::Context;
use crate::facts_cache::read_blocks;
use crate::local_tools::{registered, LocalTools};
use crate::lua_facts::{self, LuaFacts};
use crate::read_budget;
use crate::requirements::CatalogView;
use crate::symbols::block_literal_uses;
use crate::unbound::UnboundSlots;
use crate::{assemble, Parsed};

/// How many blocks' facts are read, checked and dropped together: enough for
/// the cores to share them out, few enough to weigh about a mebibyte.
const BATCH: usize = 1024;

/// The diagnostics of the prompt `text`, parsed as `parsed`, whose sections
/// index is `sections`, against its Host's catalog as `view` shows it.
pub fn diagnostics(
    text: &str,
    parsed: Parsed<'_>,
    sections: &Sections,
    view: &CatalogView,
) -> Vec<Diagnostic> {
    let blocks = parsed.lua_blocks;
    let plan = read_budget::plan(blocks.iter().map(|b| b.code(text)));
    let read: Vec<usize> = (0..blocks.len()).filter(|&i| plan[i].is_none()).collect();
    // A block registers a local tool only with a call written `tools.add_local`:
    // the others' facts are not needed before every block is checked.
    let registering: Vec<(usize, LuaFacts)> = read
        .iter()
        .filter(|&&i| blocks[i].code(text).contains("add_local"))
        .map(|&i| (i, lua_facts::read(text, &blocks[i])))
        .collect();
    let unread = (0..blocks.len()).filter(|&i| plan[i].is_some());
    let locals = LocalTools::from_registrations(
        registering
            .iter()
            .flat_map(|(i, facts)| {
                let caller = sections.caller_of_block(*i);
                registered(facts).map(move |alias| (caller, alias))
            })
            .chain(unread.map(|i| (sections.caller_of_block(i), None))),
    );
    let context = Context::with_locals(parsed, sections, locals);
    let slots = parsed.frontmatter.and_then(|f| UnboundSlots::of(f, view));
    // The registering blocks' facts, read first, are not read again.
    let kept = |index: usize| {
        let at = registering.binary_search_by_key(&index, |(i, _)| *i).ok()?;
        Some(&registering[at].1)
    };
    let mut problems = Vec::new();
    let mut unbound_uses = Vec::new();
    for batch in read.chunks(BATCH) {
        let unknown: Vec<usize> = batch
            .iter()
            .copied()
            .filter(|&i| kept(i).is_none())
            .collect();
        let fresh = read_blocks(text, blocks, &unknown, &|| false);
        let mut fresh = fresh.iter();
        let mut uses = Vec::new();
        for &index in batch {
            let Some(facts) = kept(index).or_else(|| fresh.next()) else {
                break;
            };
            context.check_block(index, facts, &mut problems);
            if let Some(slots) = &slots {
                let caller = sections.caller_of_block(index);
                let start = blocks[index].code_range.start;
                block_literal_uses(facts, caller, start, &mut uses);
                slots.check(uses.drain(..), &mut unbound_uses);
            }
        }
    }
    let unread = blocks.iter().zip(&plan);
    let unread = unread.filter_map(|(block, unread)| Some((block, (*unread)?)));
    assemble(text, parsed, problems, unread, unbound_uses, view)
}
