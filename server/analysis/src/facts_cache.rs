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
        abandoned: &Abandoned<'_>,
    ) -> Vec<Arc<LuaFacts>> {
        let mut cache = self.by_code.lock().unwrap_or_else(|p| p.into_inner());
        let mut old = std::mem::take(&mut *cache);
        cache.reserve(blocks.len());
        let mut out = Vec::with_capacity(blocks.len());
        // The blocks neither cache holds: read after this pass, in parallel when
        // there are many.
        let mut unknown = Vec::new();
        let plan = read_budget::plan(blocks.iter().map(|b| b.code.as_str()));
        // One shared value per reason a block is not read: a 10 MiB prompt has
        // tens of thousands of such blocks.
        let mut not_read: Vec<Arc<LuaFacts>> = Vec::new();
        for (index, (block, unread)) in blocks.iter().zip(plan).enumerate() {
            if let Some(unread) = unread {
                let facts = match not_read.iter().find(|f| f.unread == Some(unread)) {
                    Some(facts) => Arc::clone(facts),
                    None => {
                        let facts = Arc::new(LuaFacts {
                            unread: Some(unread),
                            ..LuaFacts::default()
                        });
                        not_read.push(Arc::clone(&facts));
                        facts
                    }
                };
                out.push(facts);
                continue;
            }
            let at = block.code_range.start;
            let (key, (base, facts)) = match old.remove_entry(block.code.as_str()) {
                Some(entry) => entry,
                None => match cache.get(block.code.as_str()) {
                    Some((base, facts)) => (block.code.clone(), (*base, Arc::clone(facts))),
                    None => {
                        unknown.push(index);
                        out.push(Arc::default());
                        continue;
                    }
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
        let read = read_blocks(blocks, &unknown, abandoned);
        let stopped = read.len() < unknown.len();
        for (index, facts) in unknown.into_iter().zip(read) {
            let block = &blocks[index];
            let facts = Arc::new(facts);
            out[index] = Arc::clone(&facts);
            cache.insert(block.code.clone(), (block.code_range.start, facts));
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
/// Says when nobody needs the facts being read any more; asked between blocks,
/// from every thread that reads.
pub type Abandoned<'a> = dyn Fn() -> bool + Sync + 'a;

/// Below this many blocks to read, one thread reads them all: starting threads
/// costs more than it saves (a keystroke changes one block).
const PARALLEL_FROM: usize = 64;

/// Reads the facts of `blocks[i]` for each `i` of `indices`, in order, stopping
/// at the first block `abandoned` finds unwanted (the result is then shorter).
/// Many blocks are shared out in contiguous runs among the machine's cores.
fn read_blocks(blocks: &[LuaBlock], indices: &[usize], abandoned: &Abandoned<'_>) -> Vec<LuaFacts> {
    let read_run = |run: &[usize]| -> Vec<LuaFacts> {
        let mut facts = Vec::with_capacity(run.len());
        for &index in run {
            if abandoned() {
                break;
            }
            let block = &blocks[index];
            facts.push(read_code(&block.code, block.code_range.start));
        }
        facts
    };
    // Few blocks are read on this thread without asking for the cores at all.
    if indices.len() < PARALLEL_FROM || cores() < 2 {
        return read_run(indices);
    }
    let threads = cores();
    let runs: Vec<&[usize]> = indices.chunks(indices.len().div_ceil(threads)).collect();
    let read: Vec<Vec<LuaFacts>> = std::thread::scope(|scope| {
        let workers: Vec<_> = runs[1..]
            .iter()
            .map(|run| scope.spawn(|| read_run(run)))
            .collect();
        let mut read = vec![read_run(runs[0])];
        // A reader that panicked leaves its run unread, as if abandoned.
        read.extend(workers.into_iter().map(|w| w.join().unwrap_or_default()));
        read
    });
    // Keep the prefix read without a gap: a run cut short ends the result.
    let mut out = Vec::with_capacity(indices.len());
    for (run, facts) in runs.iter().zip(read) {
        let whole = facts.len() == run.len();
        out.extend(facts);
        if !whole {
            break;
        }
    }
    out
}

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
    // Every field named, so a new kind of fact cannot be left at the old place.
    let LuaFacts {
        calls,
        identifiers,
        calls_reads,
        model_texts,
        unread: _,
    } = &mut out;
    for call in calls {
        call.callee_range = by.range(&call.callee_range);
        for arg in &mut call.args {
            *arg = by.arg(arg);
        }
    }
    for ident in identifiers {
        ident.range = by.range(&ident.range);
    }
    for read in calls_reads {
        read.range = by.range(&read.range);
    }
    for text in model_texts {
        text.range = by.range(&text.range);
        text.content = by.range(&text.content);
    }
    out
}

/// The cores this process may use, asked once: the answer reads cgroup files,
/// which a keystroke should not.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lua_facts::read;

    #[test]
    fn cached_facts_equal_fresh_ones_at_the_new_place() {
        let text =
            "---\nname: x\n---\n# T\n```lua\njump('## A')\n```\n```lua\ntools.add({'a', x = 'b'})\nmodels.infer('Say hi')\n```\n";
        let document = crate::parse_for_tests(text).document;
        let cache = FactsCache::default();
        let first = cache.facts(&document.lua_blocks);
        let moved = text.replace("# T\n", "# T\n\nSome prose.\n\n");
        let document = crate::parse_for_tests(&moved).document;
        let second = cache.facts(&document.lua_blocks);
        let fresh: Vec<LuaFacts> = document.lua_blocks.iter().map(read).collect();
        assert_eq!(second, fresh);
        assert_ne!(first, second);
        assert_eq!(fresh[0].calls[0].callee, "jump");
        // The text that goes to a model moves with its block too (its token hint).
        assert_eq!(fresh[1].model_texts.len(), 1);
    }

    #[test]
    fn an_abandoned_pass_reads_no_new_block_and_the_cache_keeps_the_old_ones() {
        let blocks = |text: &str| crate::parse_for_tests(text).document.lua_blocks;
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
            FactsCache::default().shared(&crate::parse_for_tests(&text).document.lua_blocks);
        assert_eq!(facts[0].unread, Some(read_budget::Unread::Block));
        assert!(facts[0].calls.is_empty());
        assert_eq!(facts[1].unread, None);
        assert_eq!(facts[1].calls[0].callee, "jump");
    }

    #[test]
    fn many_blocks_read_on_every_core_give_the_facts_of_one_by_one() {
        let mut text = String::from("---\nname: x\n---\n# T\n");
        for i in 0..3 * PARALLEL_FROM {
            text.push_str(&format!(
                "```lua\nlocal v{i} = tools.call('t{i}', {{ x = 'y' }})\nif v{i} then jump('## S{i}') end\n```\n"
            ));
        }
        let blocks = crate::parse_for_tests(&text).document.lua_blocks;
        let fresh: Vec<LuaFacts> = blocks.iter().map(read).collect();
        assert_eq!(FactsCache::default().facts(&blocks), fresh);
        // Abandoned half-way (asked from several threads): what was read is a
        // prefix of the blocks, each with its own facts, and the rest are empty.
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let half = || asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= blocks.len() / 2;
        let partial = FactsCache::default().shared_until(&blocks, &half);
        let read = partial
            .iter()
            .take_while(|f| ***f != LuaFacts::default())
            .count();
        assert!(
            read > 0 && read < blocks.len(),
            "{read} of {}",
            blocks.len()
        );
        assert!(partial[..read].iter().zip(&fresh).all(|(a, b)| **a == *b));
        assert!(partial[read..].iter().all(|f| **f == LuaFacts::default()));
    }
}
