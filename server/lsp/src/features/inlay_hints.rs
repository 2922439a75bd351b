//! `textDocument/inlayHint`: [`promptforge_analysis::ide::inlay_hints`] (tool
//! paths) and [`promptforge_analysis::ide::token_hints`] (token counts) inside
//! the requested range. Texts are counted with the prompt's model's encoding
//! when it declares one label, else `o200k_base`, and the counts kept per text
//! ([`TokenCounts`]).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;

use promptforge_analysis::ide;
use promptforge_analysis::ide::token_hints::TokenCounter;
use promptforge_analysis::requirements::CatalogView;
use promptforge_tokens::Encoding;
use tower_lsp::lsp_types::{InlayHint, Range as LspRange};

use crate::convert;
use crate::snapshot::Snapshot;

/// How many counted texts the server keeps (past it, the cache starts over).
pub const MAX_COUNTED_TEXTS: usize = 4096;

/// The counts made so far, by encoding and text hash.
#[derive(Default)]
pub struct TokenCounts {
    counts: Mutex<HashMap<(Encoding, u64), u64>>,
}

impl TokenCounts {
    fn count(&self, encoding: Encoding, text: &str) -> Option<u64> {
        let mut hasher = rustc_hash::FxBuildHasher.build_hasher();
        hasher.write(text.as_bytes());
        let key = (encoding, hasher.finish());
        if let Some(count) = self.lock().get(&key) {
            return Some(*count);
        }
        let count = encoding.count(text)?;
        let mut counts = self.lock();
        if counts.len() >= MAX_COUNTED_TEXTS {
            counts.clear();
        }
        counts.insert(key, count);
        Some(count)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Encoding, u64), u64>> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The counts of one encoding, through the server's cache.
struct Counter<'a> {
    counts: &'a TokenCounts,
    encoding: Encoding,
}

impl TokenCounter for Counter<'_> {
    fn encoding_name(&self) -> &str {
        self.encoding.name()
    }

    fn count(&self, text: &str) -> Option<u64> {
        self.counts.count(self.encoding, text)
    }
}

/// The encoding a prompt's texts are counted with: its one label's model's, else
/// `o200k_base`.
fn encoding_of(catalog: &CatalogView) -> Encoding {
    match catalog.labels.as_slice() {
        [only] => only
            .provider_model
            .as_deref()
            .map_or(Encoding::O200kBase, Encoding::for_model),
        _ => Encoding::O200kBase,
    }
}

/// The tool path and token count hints inside `range`, in position order.
pub fn inlay_hints(
    snapshot: &Snapshot,
    catalog: &CatalogView,
    counts: &TokenCounts,
    range: LspRange,
) -> Vec<InlayHint> {
    let positions = snapshot.positions();
    let wanted = positions.byte_range(range);
    let prompt = snapshot.ide();
    let counter = Counter {
        counts,
        encoding: encoding_of(catalog),
    };
    let mut hints: Vec<InlayHint> = ide::inlay_hints::inlay_hints(prompt, catalog, &wanted)
        .into_iter()
        .chain(ide::token_hints::token_hints(prompt, &wanted, &counter))
        .map(|hint| convert::inlay_hint(&positions, hint))
        .collect();
    hints.sort_by_key(|h| (h.position.line, h.position.character));
    hints
}
