//! Lua facts reused across versions: a keystroke changes one block, so the
//! other blocks' facts are taken from the previous version (keyed by their code)
//! and shared with it (an `Arc`), wherever the block now is: facts' ranges are
//! relative to the block's code.
//!
//! The key is a 128-bit SipHash of the code with keys drawn once per process,
//! not a copy of the code: a copy made every open document hold its Lua twice.
//! Two different blocks share a key with a chance of about 2^-128 per pair, and
//! nobody can aim at one without the process's keys.

use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use siphasher::sip128::{Hasher128, SipHasher13};

use promptforge_syntax::cores::cores;
use promptforge_syntax::LuaBlock;
use rustc_hash::FxHashMap as HashMap;

use crate::lua_facts::{read, LuaFacts};
use crate::read_budget;

/// The facts of one document's blocks, keyed by their code's hash.
#[derive(Debug, Default)]
pub struct FactsCache {
    by_code: Mutex<HashMap<CodeKey, Arc<LuaFacts>>>,
}

/// A block's code as the cache knows it: its 128-bit hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct CodeKey(u128);

impl CodeKey {
    fn of(code: &str) -> Self {
        static KEYS: OnceLock<(u64, u64)> = OnceLock::new();
        let (k0, k1) = *KEYS.get_or_init(|| {
            let random = std::collections::hash_map::RandomState::new();
            let draw = |salt: u64| {
                let mut hasher = random.build_hasher();
                hasher.write_u64(salt);
                hasher.finish()
            };
            (draw(0), draw(1))
        });
        let mut hasher = SipHasher13::new_with_keys(k0, k1);
        hasher.write(code.as_bytes());
        CodeKey(hasher.finish128().as_u128())
    }
}

impl FactsCache {
    /// The facts of `blocks` of the file `text`, in order; keeps only these
    /// blocks' entries.
    pub fn facts(&self, text: &str, blocks: &[LuaBlock]) -> Vec<LuaFacts> {
        self.shared(text, blocks)
            .into_iter()
            .map(|facts| Arc::try_unwrap(facts).unwrap_or_else(|facts| (*facts).clone()))
            .collect()
    }

    /// Like [`FactsCache::facts`], sharing the facts of blocks read before.
    pub fn shared(&self, text: &str, blocks: &[LuaBlock]) -> Vec<Arc<LuaFacts>> {
        self.shared_until(text, blocks, &|| false)
    }

    /// Like [`FactsCache::shared`], but a block not in the cache is no longer
    /// read once `abandoned` says so (a newer version of the text arrived, the
    /// session ended): such blocks get no facts, and the cache keeps what it had
    /// for the next version. Blocks past the [`read_budget`] are never read.
    pub fn shared_until(
        &self,
        text: &str,
        blocks: &[LuaBlock],
        abandoned: &Abandoned<'_>,
    ) -> Vec<Arc<LuaFacts>> {
        let mut cache = self.by_code.lock().unwrap_or_else(|p| p.into_inner());
        let mut old = std::mem::take(&mut *cache);
        let plan = read_budget::plan(blocks.iter().map(|b| b.code(text)));
        // Room for the blocks read, not for those past the budget: a 10 MiB
        // prompt has 60,000 blocks, and reads the first 9,000.
        cache.reserve(plan.iter().filter(|unread| unread.is_none()).count());
        let mut out = Vec::with_capacity(blocks.len());
        // The blocks neither cache holds, with their keys: read after this pass,
        // in parallel when there are many.
        let mut unknown = Vec::new();
        let mut unknown_keys = Vec::new();
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
            let key = CodeKey::of(block.code(text));
            let facts = match old.remove(&key) {
                Some(facts) => facts,
                None => match cache.get(&key) {
                    Some(facts) => Arc::clone(facts),
                    None => {
                        unknown.push(index);
                        unknown_keys.push(key);
                        out.push(Arc::default());
                        continue;
                    }
                },
            };
            out.push(Arc::clone(&facts));
            cache.insert(key, facts);
        }
        let read = read_blocks(text, blocks, &unknown, abandoned);
        let stopped = read.len() < unknown.len();
        for ((index, key), facts) in unknown.into_iter().zip(unknown_keys).zip(read) {
            let facts = Arc::new(facts);
            out[index] = Arc::clone(&facts);
            cache.insert(key, facts);
        }
        if stopped {
            for (key, entry) in old {
                cache.entry(key).or_insert(entry);
            }
        }
        out
    }

    /// The facts of `block` after an edit changed its code from the code whose
    /// facts were `old`: found when another block has that code, else read.
    /// `old` is forgotten unless `old_in_use` (another block has the old code).
    pub fn replace(
        &self,
        text: &str,
        block: &LuaBlock,
        old: &Arc<LuaFacts>,
        old_in_use: bool,
    ) -> Arc<LuaFacts> {
        let mut cache = self.by_code.lock().unwrap_or_else(|p| p.into_inner());
        if !old_in_use {
            cache.retain(|_, facts| !Arc::ptr_eq(facts, old));
        }
        let key = CodeKey::of(block.code(text));
        Arc::clone(
            cache
                .entry(key)
                .or_insert_with(|| Arc::new(read(text, block))),
        )
    }
}

/// Says when nobody needs the facts being read any more; asked between blocks,
/// from every thread that reads.
pub type Abandoned<'a> = dyn Fn() -> bool + Sync + 'a;

/// Below this many blocks to read, one thread reads them all: starting threads
/// costs more than it saves (a keystroke changes one block).
const PARALLEL_FROM: usize = 64;

/// Reads the facts of `blocks[i]` for each `i` of `indices`, in order, stopping
/// at the first block `abandoned` finds unwanted (the result is then shorter).
/// Many blocks are shared out in contiguous runs among the machine's cores.
pub(crate) fn read_blocks(
    text: &str,
    blocks: &[LuaBlock],
    indices: &[usize],
    abandoned: &Abandoned<'_>,
) -> Vec<LuaFacts> {
    let read_run = |run: &[usize]| -> Vec<LuaFacts> {
        let mut facts = Vec::with_capacity(run.len());
        for &index in run {
            if abandoned() {
                break;
            }
            facts.push(read(text, &blocks[index]));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_block_shares_its_facts_and_its_problems_move_with_it() {
        let text = "---\nname: x\nmodels:\n  writer: {}\n---\n# T\n```lua\njump('## A')\n```\n```lua\ntools.add({'a', x = 'b'})\nmodels.use('nope')\n```\n";
        let cache = FactsCache::default();
        let document = crate::parse_for_tests(text).document;
        let first = cache.shared(text, &document.lua_blocks);
        let moved = text.replace("# T\n", "# T\n\nSome prose.\n\n");
        let document = crate::parse_for_tests(&moved).document;
        let model = crate::Model::build(&moved, &document, &cache);
        // The same facts, not a copy: their ranges are the block's own.
        assert!(first
            .iter()
            .zip(&model.blocks)
            .all(|(a, b)| Arc::ptr_eq(a, b)));
        let fresh: Vec<LuaFacts> = document
            .lua_blocks
            .iter()
            .map(|b| read(&moved, b))
            .collect();
        assert!(model.blocks.iter().zip(&fresh).all(|(a, b)| **a == *b));
        // What is placed on a fact lands where the block now is.
        let placed: Vec<&str> = model
            .problems
            .iter()
            .map(|p| &moved[p.range.start..p.range.end])
            .collect();
        assert_eq!(placed, ["'## A'", "'a'", "'nope'"]);
        assert!(model.problems.iter().all(|p| p.offset == p.range.start));
        let (facts, code_start) = model.blocks_in_file().nth(1).expect("second block");
        let call = &facts.calls[1];
        let callee = crate::lua_facts::in_file(code_start, &call.callee_range);
        assert_eq!(&moved[callee], "models.use");
    }

    #[test]
    fn an_abandoned_pass_reads_no_new_block_and_the_cache_keeps_the_old_ones() {
        let blocks = |text: &str| crate::parse_for_tests(text).document.lua_blocks;
        let a = "---\nname: x\n---\n# T\n```lua\njump('## A')\n```\n";
        let cache = FactsCache::default();
        let called = format!("{a}```lua\ncall('## B')\n```\n");
        let first = cache.shared(&called, &blocks(&called));
        assert_eq!(first[1].calls[0].callee, "call");
        // A new block is not read once the pass is abandoned; a cached one is.
        let fanned = format!("{a}```lua\nfanout('## C')\n```\n");
        let edited = blocks(&fanned);
        let abandoned = cache.shared_until(&fanned, &edited, &|| true);
        assert_eq!(abandoned[0].calls[0].callee, "jump");
        assert_eq!(*abandoned[1], LuaFacts::default());
        // The block edited away is still cached; the next whole pass reads the new one.
        let back = blocks(&called);
        assert_eq!(cache.shared_until(&called, &back, &|| true), first);
        assert_eq!(cache.shared(&fanned, &edited)[1].calls[0].callee, "fanout");
    }

    #[test]
    fn a_block_past_the_budget_is_not_read() {
        let big = format!("jump('## A')\n{}", "x = 1\n".repeat(50_000));
        let text = format!("---\nname: x\n---\n# T\n```lua\n{big}```\n```lua\njump('## A')\n```\n");
        let facts =
            FactsCache::default().shared(&text, &crate::parse_for_tests(&text).document.lua_blocks);
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
        let fresh: Vec<LuaFacts> = blocks.iter().map(|b| read(&text, b)).collect();
        assert_eq!(FactsCache::default().facts(&text, &blocks), fresh);
        // Abandoned half-way (asked from several threads): what was read is a
        // prefix of the blocks, each with its own facts, and the rest are empty.
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let half = || asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= blocks.len() / 2;
        let partial = FactsCache::default().shared_until(&text, &blocks, &half);
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
