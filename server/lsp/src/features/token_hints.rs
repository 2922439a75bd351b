//! `textDocument/inlayHint`, token counts: `≈ N tokens` after each string
//! literal that goes to a model (a conversation's `:system`/`:user`/`:assistant`
//! argument, `models.infer`'s), counted with the prompt's model's encoding when
//! it declares one label, else `o200k_base`. Counts are made only for the
//! literals in the requested range and kept per text ([`TokenCounts`]).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;

use promptforge_analysis::requirements::CatalogView;
use promptforge_tokens::Encoding;
use tower_lsp::lsp_types::{
    InlayHint, InlayHintKind, InlayHintLabel, InlayHintTooltip, Range as LspRange,
};

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

/// The token hints inside `range`.
pub fn token_hints(
    snapshot: &Snapshot,
    catalog: &CatalogView,
    counts: &TokenCounts,
    range: LspRange,
) -> Vec<InlayHint> {
    let positions = snapshot.positions();
    let wanted = positions.byte_range(range);
    let encoding = encoding_of(catalog);
    let texts = snapshot
        .model()
        .blocks
        .iter()
        .flat_map(|f| f.model_texts.iter());
    texts
        .filter(|text| wanted.start <= text.range.end && text.range.end <= wanted.end)
        .filter_map(|text| {
            let content = snapshot.text.get(text.content.clone())?;
            let tokens = counts.count(encoding, content)?;
            let unit = if tokens == 1 { "token" } else { "tokens" };
            Some(InlayHint {
                position: positions.position(text.range.end),
                label: InlayHintLabel::String(format!("≈ {tokens} {unit}")),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: Some(InlayHintTooltip::String(format!(
                    "Estimated with {}; the model's own count may differ.",
                    encoding.name()
                ))),
                padding_left: Some(true),
                padding_right: None,
                data: None,
            })
        })
        .collect()
}
