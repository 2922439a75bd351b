//! `textDocument/foldingRange`: the frontmatter, every executable block and every section.

use tower_lsp::lsp_types::{FoldingRange, FoldingRangeKind};

use crate::snapshot::Snapshot;

/// The folding ranges of a snapshot, by start line.
pub fn folding_ranges(snapshot: &Snapshot) -> Vec<FoldingRange> {
    let index = &snapshot.analysis.line_index;
    let text = snapshot.text.as_str();
    let document = &snapshot.analysis.document;
    let mut out = Vec::new();
    let mut fold = |range: &std::ops::Range<usize>, kind: Option<FoldingRangeKind>| {
        // The range's last line is the line of its last character (an end right after
        // a line break belongs to the line before).
        let start = index.line_of(range.start);
        let mut last = range.end.min(text.len());
        while last > range.start && matches!(text.as_bytes().get(last - 1), Some(b'\n' | b'\r')) {
            last -= 1;
        }
        let end = index.line_of(last);
        if end > start {
            out.push(FoldingRange {
                start_line: start,
                start_character: None,
                end_line: end,
                end_character: None,
                kind,
                collapsed_text: None,
            });
        }
    };
    if let Some(frontmatter) = &document.frontmatter {
        fold(&frontmatter.range, Some(FoldingRangeKind::Region));
    }
    for block in &document.lua_blocks {
        fold(&block.block_range, Some(FoldingRangeKind::Region));
    }
    for section in snapshot.model().sections.all() {
        fold(&section.range, None);
    }
    out.sort_by_key(|r| (r.start_line, std::cmp::Reverse(r.end_line)));
    out
}
