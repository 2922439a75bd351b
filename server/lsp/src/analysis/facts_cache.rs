//! Lua facts reused across versions: a keystroke changes one block, so the
//! other blocks' facts are taken from the previous version (keyed by their code)
//! and only moved to their new place in the file.

use std::ops::Range;
use std::sync::Mutex;

use promptforge_syntax::LuaBlock;
use rustc_hash::FxHashMap as HashMap;

use super::lua_facts::{read_code, Arg, LuaFacts, NamedField, StringLit};

/// The facts of one document's blocks, keyed by code, with ranges relative to the code.
#[derive(Debug, Default)]
pub struct FactsCache {
    by_code: Mutex<HashMap<String, LuaFacts>>,
}

impl FactsCache {
    /// The facts of `blocks`, in order, with file ranges; keeps only these blocks' entries.
    pub fn facts(&self, blocks: &[LuaBlock]) -> Vec<LuaFacts> {
        let mut cache = self.by_code.lock().unwrap_or_else(|p| p.into_inner());
        let mut old = std::mem::take(&mut *cache);
        cache.reserve(blocks.len());
        let mut out = Vec::with_capacity(blocks.len());
        for block in blocks {
            let facts = match old
                .remove(&block.code)
                .or_else(|| cache.get(&block.code).cloned())
            {
                Some(facts) => facts,
                None => read_code(&block.code, 0),
            };
            out.push(shifted(&facts, block.code_range.start));
            cache.insert(block.code.clone(), facts);
        }
        out
    }
}

fn shift(range: &Range<usize>, by: usize) -> Range<usize> {
    range.start + by..range.end + by
}

fn shift_lit(lit: &StringLit, by: usize) -> StringLit {
    StringLit {
        value: lit.value.clone(),
        range: shift(&lit.range, by),
        content: shift(&lit.content, by),
    }
}

fn shift_arg(arg: &Arg, by: usize) -> Arg {
    match arg {
        Arg::Str(lit) => Arg::Str(shift_lit(lit, by)),
        Arg::Table {
            strings,
            only_strings,
            named,
            range,
        } => Arg::Table {
            strings: strings.iter().map(|l| shift_lit(l, by)).collect(),
            only_strings: *only_strings,
            named: named
                .iter()
                .map(|f| NamedField {
                    name: f.name.clone(),
                    name_range: shift(&f.name_range, by),
                    value: shift_arg(&f.value, by),
                })
                .collect(),
            range: shift(range, by),
        },
        Arg::Literal(kind, range) => Arg::Literal(kind, shift(range, by)),
        Arg::Other(range) => Arg::Other(shift(range, by)),
    }
}

/// `facts` with every range moved `by` bytes.
fn shifted(facts: &LuaFacts, by: usize) -> LuaFacts {
    let mut out = facts.clone();
    for call in &mut out.calls {
        call.callee_range = shift(&call.callee_range, by);
        call.args = call.args.iter().map(|a| shift_arg(a, by)).collect();
    }
    for ident in &mut out.identifiers {
        ident.range = shift(&ident.range, by);
    }
    for read in &mut out.calls_reads {
        read.range = shift(&read.range, by);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::lua_facts::read;

    #[test]
    fn cached_facts_equal_fresh_ones_at_the_new_place() {
        let text =
            "---\nname: x\n---\n# T\n```lua\njump('## A')\n```\n```lua\ntools.add({'a', x = 'b'})\n```\n";
        let document = promptforge_syntax::parse(text).document;
        let cache = FactsCache::default();
        let first = cache.facts(&document.lua_blocks);
        let moved = text.replace("# T\n", "# T\n\nSome prose.\n\n");
        let document = promptforge_syntax::parse(&moved).document;
        let second = cache.facts(&document.lua_blocks);
        let fresh: Vec<LuaFacts> = document.lua_blocks.iter().map(read).collect();
        assert_eq!(second, fresh);
        assert_ne!(first, second);
        assert_eq!(fresh[0].calls[0].callee, "jump");
    }
}
