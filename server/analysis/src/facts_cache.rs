//! Lua facts reused across versions: a keystroke changes one block, so the
//! other blocks' facts are taken from the previous version (keyed by their code).
//! A block that did not move shares its facts (an `Arc`) with the previous
//! version; one that moved gets a copy with its ranges moved to the new place.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use promptforge_syntax::LuaBlock;
use rustc_hash::FxHashMap as HashMap;

use crate::lua_facts::{read_code, Arg, LuaFacts, NamedField, StringLit};
use crate::read_budget;

/// The facts of one document's blocks, keyed by code: each with the file offset of
/// the code they were read at (their ranges are file ranges for that offset).
#[derive(Debug, Default)]
pub struct FactsCache {
    by_code: Mutex<HashMap<String, (usize, Arc<LuaFacts>)>>,
}

impl FactsCache {
    /// The facts of `blocks`, in order, with file ranges; keeps only these blocks' entries.
    pub fn facts(&self, blocks: &[LuaBlock]) -> Vec<LuaFacts> {
        self.shared(blocks)
            .into_iter()
            .map(|facts| Arc::try_unwrap(facts).unwrap_or_else(|facts| (*facts).clone()))
            .collect()
    }

    /// Like [`FactsCache::facts`], sharing the facts of blocks that did not move.
    pub fn shared(&self, blocks: &[LuaBlock]) -> Vec<Arc<LuaFacts>> {
        self.shared_until(blocks, &|| false)
    }

    /// Like [`FactsCache::shared`], but a block not in the cache is no longer
    /// read once `abandoned` says so (a newer version of the text arrived, the
    /// session ended): such blocks get no facts, and the cache keeps what it had
    /// for the next version. Blocks past the [`read_budget`] are never read.
    pub fn shared_until(
        &self,
        blocks: &[LuaBlock],
        abandoned: &dyn Fn() -> bool,
    ) -> Vec<Arc<LuaFacts>> {
        let mut cache = self.by_code.lock().unwrap_or_else(|p| p.into_inner());
        let mut old = std::mem::take(&mut *cache);
        cache.reserve(blocks.len());
        let mut out = Vec::with_capacity(blocks.len());
        let plan = read_budget::plan(blocks.iter().map(|b| b.code.as_str()));
        let mut stopped = false;
        for (block, unread) in blocks.iter().zip(plan) {
            if let Some(unread) = unread {
                out.push(Arc::new(LuaFacts {
                    unread: Some(unread),
                    ..LuaFacts::default()
                }));
                continue;
            }
            let at = block.code_range.start;
            let (key, (base, facts)) = match old.remove_entry(block.code.as_str()) {
                Some(entry) => entry,
                None => match cache.get(block.code.as_str()) {
                    Some((base, facts)) => (block.code.clone(), (*base, Arc::clone(facts))),
                    None if stopped || abandoned() => {
                        stopped = true;
                        out.push(Arc::default());
                        continue;
                    }
                    None => (
                        block.code.clone(),
                        (at, Arc::new(read_code(&block.code, at))),
                    ),
                },
            };
            let facts = if base == at {
                facts
            } else {
                Arc::new(shifted(&facts, base, at))
            };
            out.push(Arc::clone(&facts));
            cache.insert(key, (at, facts));
        }
        if stopped {
            for (key, entry) in old {
                cache.entry(key).or_insert(entry);
            }
        }
        out
    }
}

/// Moves ranges read at file offset `from` to file offset `to`.
#[derive(Clone, Copy)]
struct Shift {
    from: usize,
    to: usize,
}

impl Shift {
    fn at(self, offset: usize) -> usize {
        offset - self.from + self.to
    }

    fn range(self, range: &Range<usize>) -> Range<usize> {
        self.at(range.start)..self.at(range.end)
    }

    fn lit(self, lit: &StringLit) -> StringLit {
        StringLit {
            value: lit.value.clone(),
            range: self.range(&lit.range),
            content: self.range(&lit.content),
        }
    }

    fn arg(self, arg: &Arg) -> Arg {
        match arg {
            Arg::Str(lit) => Arg::Str(self.lit(lit)),
            Arg::Table {
                strings,
                only_strings,
                named,
                range,
            } => Arg::Table {
                strings: strings.iter().map(|l| self.lit(l)).collect(),
                only_strings: *only_strings,
                named: named
                    .iter()
                    .map(|f| NamedField {
                        name: f.name.clone(),
                        name_range: self.range(&f.name_range),
                        value: self.arg(&f.value),
                    })
                    .collect(),
                range: self.range(range),
            },
            Arg::Literal(kind, range) => Arg::Literal(kind, self.range(range)),
            Arg::Other(range) => Arg::Other(self.range(range)),
        }
    }
}

/// `facts` read at file offset `from` with every range moved to file offset `to`.
fn shifted(facts: &LuaFacts, from: usize, to: usize) -> LuaFacts {
    let by = Shift { from, to };
    let mut out = facts.clone();
    for call in &mut out.calls {
        call.callee_range = by.range(&call.callee_range);
        for arg in &mut call.args {
            *arg = by.arg(arg);
        }
    }
    for ident in &mut out.identifiers {
        ident.range = by.range(&ident.range);
    }
    for read in &mut out.calls_reads {
        read.range = by.range(&read.range);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lua_facts::read;

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

    #[test]
    fn an_abandoned_pass_reads_no_new_block_and_the_cache_keeps_the_old_ones() {
        let blocks = |text: &str| promptforge_syntax::parse(text).document.lua_blocks;
        let a = "---\nname: x\n---\n# T\n```lua\njump('## A')\n```\n";
        let cache = FactsCache::default();
        let first = cache.shared(&blocks(&format!("{a}```lua\ncall('## B')\n```\n")));
        assert_eq!(first[1].calls[0].callee, "call");
        // A new block is not read once the pass is abandoned; a cached one is.
        let edited = blocks(&format!("{a}```lua\nfanout('## C')\n```\n"));
        let abandoned = cache.shared_until(&edited, &|| true);
        assert_eq!(abandoned[0].calls[0].callee, "jump");
        assert_eq!(*abandoned[1], LuaFacts::default());
        // The block edited away is still cached; the next whole pass reads the new one.
        let back = blocks(&format!("{a}```lua\ncall('## B')\n```\n"));
        assert_eq!(cache.shared_until(&back, &|| true), first);
        assert_eq!(cache.shared(&edited)[1].calls[0].callee, "fanout");
    }

    #[test]
    fn a_block_past_the_budget_is_not_read() {
        let big = format!("jump('## A')\n{}", "x = 1\n".repeat(50_000));
        let text = format!("---\nname: x\n---\n# T\n```lua\n{big}```\n```lua\njump('## A')\n```\n");
        let facts =
            FactsCache::default().shared(&promptforge_syntax::parse(&text).document.lua_blocks);
        assert_eq!(facts[0].unread, Some(read_budget::Unread::Block));
        assert!(facts[0].calls.is_empty());
        assert_eq!(facts[1].unread, None);
        assert_eq!(facts[1].calls[0].callee, "jump");
    }
}
