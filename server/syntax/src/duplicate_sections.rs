//! Duplicate sections (`language.md` §1.4): a section with the same parent,
//! level and heading text as an earlier one. Found once every section is read,
//! by sorting a short record of each heading, rather than with a map of every
//! heading kept while the tree is built: for the 60,000 sections of a 10 MiB
//! prompt the map weighed 6.4 MB, the largest part of `check`'s peak after the
//! text, the items and the tree; the records weigh 1.9 MB.

use std::ops::Range;

use crate::document::Heading;
use crate::sections::text_hash;

/// The headings of the sections read so far.
#[derive(Default)]
pub(crate) struct SeenHeadings {
    seen: Vec<Seen>,
}

/// One section's heading: what tells it from the others, and its line.
struct Seen {
    /// Its parent's number in document order, plus one (0: an H2).
    parent: u32,
    level: u8,
    /// 0-based.
    line: u32,
    /// The high half of its text's hash: records sort by it, then by text.
    hash: u32,
    text: Range<usize>,
}

/// A section that repeats an earlier one.
pub(crate) struct Duplicate {
    /// Its heading's 0-based line.
    pub line: u32,
    /// Its heading text.
    pub heading: String,
    /// The 0-based line of the first section it repeats.
    pub first_line: u32,
}

impl SeenHeadings {
    /// Room for `count` sections.
    pub fn with_capacity(count: usize) -> Self {
        SeenHeadings {
            seen: Vec::with_capacity(count),
        }
    }

    /// Records the heading of a section whose parent has number `parent` in
    /// document order (None for an H2).
    pub fn push(&mut self, parent: Option<usize>, heading: &Heading) {
        let parent = parent.map_or(0, |p| u32::try_from(p + 1).unwrap_or(u32::MAX));
        self.seen.push(Seen {
            parent,
            level: heading.level,
            line: heading.line,
            hash: text_hash(&heading.text),
            text: heading.text_range.clone(),
        });
    }

    /// Every section that repeats an earlier one, with the line of the first
    /// (in no particular order: the diagnostics are sorted afterwards).
    pub fn duplicates(self, text: &str) -> Vec<Duplicate> {
        let seen = self.seen;
        let text_of = |s: &Seen| text.get(s.text.clone()).unwrap_or("");
        let key = |s: &Seen| (s.parent, s.level, s.hash);
        let mut order: Vec<u32> = (0..seen.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        // Same parent, level and text together, each group in document order.
        order.sort_unstable_by(|&a, &b| {
            let (a_seen, b_seen) = (&seen[a as usize], &seen[b as usize]);
            key(a_seen)
                .cmp(&key(b_seen))
                .then_with(|| text_of(a_seen).cmp(text_of(b_seen)))
                .then(a.cmp(&b))
        });
        let same = |a: &u32, b: &u32| {
            let (a_seen, b_seen) = (&seen[*a as usize], &seen[*b as usize]);
            key(a_seen) == key(b_seen) && text_of(a_seen) == text_of(b_seen)
        };
        let mut out = Vec::new();
        for group in order.chunk_by(same) {
            let first = &seen[group[0] as usize];
            out.extend(group[1..].iter().map(|&i| {
                let repeat = &seen[i as usize];
                Duplicate {
                    line: repeat.line,
                    heading: text_of(repeat).to_owned(),
                    first_line: first.line,
                }
            }));
        }
        out
    }
}
