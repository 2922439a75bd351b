//! Targets (`language.md` §3.2), the one implementation: the section tree
//! flattened in document order, which section each Lua block runs in, which
//! sections each caller can see (its siblings and direct children) and the
//! section a target string names. The engine resolves `jump`/`call`/`fanout`
//! with it, the static checks and the editor read it.

use std::hash::{Hash, Hasher};
use std::ops::Range;

use crate::block_edit::BlockEdit;
use crate::document::{Body, Document, Heading, Section};
use crate::messages;
use rustc_hash::FxHasher;

/// Where a Lua block runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// An H1 block, in the H1 pass.
    H1,
    /// A `lua shared` block: replayed in every section, so it has no one caller.
    Shared,
    /// A block of the section with this index in [`Sections::all`].
    Section(usize),
}

/// One section with its place in the tree. Its content (prose, blocks) is the
/// document's [`Section`], found with [`Sections::path`] and
/// [`Document::section_at`]: a 10 MiB prompt has 60,000 sections, and a copy of
/// each one's prose and path here weighed 6 MiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionEntry {
    /// Its heading.
    pub heading: Heading,
    /// Index of its parent section; None for an H2.
    pub parent: Option<usize>,
    /// Byte range from the heading to the end of its last descendant's content.
    pub range: Range<usize>,
    /// True when it runs only when addressed.
    pub off_walk: bool,
}

/// Every section of a document in document order, and each Lua block's caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sections {
    all: Vec<SectionEntry>,
    /// The H2s, by index.
    top: Vec<u32>,
    /// Each section's direct children, by index, in one list: those of section
    /// `i` are `children[child_starts[i]..child_starts[i + 1]]`. A vector per
    /// section weighed 24 bytes each, most of them empty (1.4 MiB for the
    /// 60,000 sections of a 10 MiB prompt).
    child_starts: Vec<u32>,
    children: Vec<u32>,
    /// Where each block runs, as [`caller_code`] writes it (4 bytes, not 16).
    callers: Vec<u32>,
    title: Option<Heading>,
    /// Each section's heading text hash and index, sorted (so in document order
    /// among equal hashes): finds the candidates a target names, whose text is
    /// then compared.
    by_text: Vec<(u32, u32)>,
}

/// An index of a section or block as the index keeps it. A text has fewer than
/// 2^32 of them (each takes bytes of text), as the line index has fewer lines.
fn small(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

/// A caller in 4 bytes: 0 for the H1 pass, 1 for a shared block, then the
/// sections from 2.
fn caller_code(caller: Caller) -> u32 {
    match caller {
        Caller::H1 => 0,
        Caller::Shared => 1,
        Caller::Section(index) => small(index).saturating_add(2),
    }
}

/// The caller [`caller_code`] wrote.
fn caller_of_code(code: u32) -> Caller {
    match code {
        0 => Caller::H1,
        1 => Caller::Shared,
        section => Caller::Section(section as usize - 2),
    }
}

/// Builds a [`Sections`] from sections opened in document order and closed
/// after their children: from a document's tree ([`Sections::new`]), or while
/// the body is read, for a caller that needs the index and not the tree
/// (`check`: the tree and the index together were its peak).
#[derive(Debug)]
pub struct SectionsBuilder {
    sections: Sections,
}

impl SectionsBuilder {
    /// Room for `sections` sections; `blocks` Lua blocks, each run by a shared
    /// block's caller until [`SectionsBuilder::block`] says otherwise.
    pub fn new(sections: usize, blocks: usize) -> Self {
        // Sized once: a vector that doubles holds twice what it needs, and the
        // old and the new copy at once while it grows.
        SectionsBuilder {
            sections: Sections {
                all: Vec::with_capacity(sections),
                top: Vec::new(),
                child_starts: Vec::new(),
                children: Vec::new(),
                callers: vec![caller_code(Caller::Shared); blocks],
                title: None,
                by_text: Vec::with_capacity(sections),
            },
        }
    }

    /// Opens the next section, under the open section numbered `parent` (None
    /// for an H2); returns its number. Its range ends at the text's end until
    /// it is closed.
    pub fn open(&mut self, heading: &Heading, parent: Option<usize>, end: usize) -> usize {
        let sections = &mut self.sections;
        let index = sections.all.len();
        if parent.is_none() {
            sections.top.push(small(index));
        }
        sections
            .by_text
            .push((text_hash(&heading.text), small(index)));
        sections.all.push(SectionEntry {
            heading: heading.clone(),
            parent,
            range: heading.line_range.start..end,
            off_walk: false,
        });
        index
    }

    /// Closes the section numbered `number`: its range ends at `end`.
    pub fn close(&mut self, number: usize, end: usize, off_walk: bool) {
        if let Some(entry) = self.sections.all.get_mut(number) {
            entry.range.end = end;
            entry.off_walk = off_walk;
        }
    }

    /// The Lua block with this index runs in `caller` (a shared block runs in
    /// every section: its caller is [`Caller::Shared`]).
    pub fn block(&mut self, index: usize, caller: Caller, shared: bool) {
        if let Some(slot) = self.sections.callers.get_mut(index) {
            *slot = caller_code(if shared { Caller::Shared } else { caller });
        }
    }

    /// The index of a document with this H1 `title` and this many Lua blocks.
    pub fn finish(self, title: Option<Heading>, blocks: usize) -> Sections {
        let mut sections = self.sections;
        sections.title = title;
        sections.callers.resize(blocks, caller_code(Caller::Shared));
        sections.by_text.sort_unstable();
        sections.top.shrink_to_fit();
        sections.link_children();
        sections
    }

    /// Opens, fills and closes `section` and its children.
    fn tree(&mut self, section: &Section, parent: Option<usize>, document: &Document) {
        let number = self.open(&section.heading, parent, section.range.end);
        self.body(&section.body, Caller::Section(number), document);
        for child in &section.children {
            self.tree(child, Some(number), document);
        }
        self.close(number, section.range.end, section.off_walk);
    }

    fn body(&mut self, body: &Body, caller: Caller, document: &Document) {
        for &index in &body.blocks {
            let shared = document.lua_blocks.get(index).is_some_and(|b| b.shared);
            self.block(index, caller, shared);
        }
    }
}

impl Sections {
    /// Flattens the document's section tree.
    pub fn new(document: &Document) -> Self {
        let count = count_sections(&document.sections);
        let mut builder = SectionsBuilder::new(count, document.lua_blocks.len());
        builder.body(&document.h1_body, Caller::H1, document);
        for section in &document.sections {
            builder.tree(section, None, document);
        }
        builder.finish(document.title.clone(), document.lua_blocks.len())
    }

    /// Lists each section's children, once every section is in `all` (in
    /// document order, so each list is).
    fn link_children(&mut self) {
        let mut starts = vec![0u32; self.all.len() + 1];
        for parent in self.all.iter().filter_map(|s| s.parent) {
            starts[parent + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut children = vec![0u32; starts.last().map_or(0, |&n| n as usize)];
        let mut next = starts.clone();
        for (index, entry) in self.all.iter().enumerate() {
            if let Some(parent) = entry.parent {
                children[next[parent] as usize] = small(index);
                next[parent] += 1;
            }
        }
        self.child_starts = starts;
        self.children = children;
    }

    /// The direct children of the section with this index, in document order.
    fn children_of(&self, section: usize) -> &[u32] {
        let (Some(&start), Some(&end)) = (
            self.child_starts.get(section),
            self.child_starts.get(section.wrapping_add(1)),
        ) else {
            return &[];
        };
        self.children
            .get(start as usize..end as usize)
            .unwrap_or_default()
    }

    /// Moves the sections of the text before `edit` to the text after it, in
    /// place: a block edit moves no heading, so only their byte ranges move.
    pub fn shift(&mut self, edit: &BlockEdit) {
        for entry in &mut self.all {
            edit.shift_heading(&mut entry.heading);
            edit.shift_range(&mut entry.range);
        }
        if let Some(title) = &mut self.title {
            edit.shift_heading(title);
        }
    }

    /// Every section, in document order.
    pub fn all(&self) -> &[SectionEntry] {
        &self.all
    }

    /// The section with this index.
    pub fn get(&self, index: usize) -> Option<&SectionEntry> {
        self.all.get(index)
    }

    /// The place in the tree of the section with this index: the indices from
    /// the top-level sections down (empty for an index out of range).
    pub fn path(&self, index: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut at = index;
        while let Some(entry) = self.all.get(at) {
            let siblings = match entry.parent {
                Some(parent) => self.children_of(parent),
                None => &self.top,
            };
            // Siblings are listed in document order, so by index.
            let Ok(position) = siblings.binary_search(&small(at)) else {
                return Vec::new();
            };
            path.push(position);
            match entry.parent {
                Some(parent) => at = parent,
                None => break,
            }
        }
        path.reverse();
        path
    }

    /// Where the Lua block with this index in `Document::lua_blocks` runs.
    pub fn caller_of_block(&self, block: usize) -> Caller {
        self.callers
            .get(block)
            .map_or(Caller::Shared, |&code| caller_of_code(code))
    }

    /// The caller as messages name it: its target string (`## Fetch`, or `# Title`
    /// for the H1 pass).
    pub fn caller_name(&self, caller: Caller) -> String {
        match caller {
            Caller::Section(i) => self
                .all
                .get(i)
                .map(|s| s.heading.target())
                .unwrap_or_default(),
            Caller::H1 | Caller::Shared => self
                .title
                .as_ref()
                .map_or_else(|| "#".to_owned(), Heading::target),
        }
    }

    /// Indices of the sections visible from `caller`, in document order: its
    /// siblings (itself included) and its direct children; from the H1 pass, the H2s.
    /// A shared block has no one caller: nothing is visible for certain.
    pub fn visible(&self, caller: Caller) -> Vec<usize> {
        match caller {
            Caller::Shared => Vec::new(),
            Caller::H1 => self.top.iter().map(|&i| i as usize).collect(),
            Caller::Section(me) => {
                let parent = self.all.get(me).and_then(|s| s.parent);
                let siblings = match parent {
                    Some(p) => self.children_of(p),
                    None => &self.top,
                };
                let own = self.children_of(me);
                let mut visible: Vec<usize> =
                    siblings.iter().chain(own).map(|&i| i as usize).collect();
                visible.sort_unstable();
                visible
            }
        }
    }

    /// The section a target string names from `caller`, when it is visible: the
    /// `#` count is the level (2 to 6), then one space, then the heading text
    /// (surrounding blanks ignored), as the engine resolves it.
    pub fn resolve(&self, caller: Caller, target: &str) -> Option<usize> {
        let level = target.bytes().take_while(|b| *b == b'#').count();
        let text = target.get(level..)?.strip_prefix(' ')?.trim();
        let level = u8::try_from(level).ok().filter(|l| (2..=6).contains(l))?;
        let hash = text_hash(text);
        let first = self.by_text.partition_point(|&(h, _)| h < hash);
        let candidates = self.by_text[first..]
            .iter()
            .take_while(|&&(h, _)| h == hash)
            .map(|&(_, i)| i as usize);
        let named = |parent: Option<usize>| {
            candidates.clone().find(|&i| {
                self.all.get(i).is_some_and(|s| {
                    s.heading.level == level && s.parent == parent && &*s.heading.text == text
                })
            })
        };
        // The siblings (sections with the caller's parent), then the caller's direct
        // children; siblings and children differ in level, so the first match is the
        // only one. `candidates` are in document order, like the siblings and children.
        match caller {
            Caller::Shared => None,
            Caller::H1 => named(None),
            Caller::Section(me) => {
                let parent = self.all.get(me).and_then(|s| s.parent);
                named(parent).or_else(|| {
                    if me < self.all.len() {
                        named(Some(me))
                    } else {
                        None
                    }
                })
            }
        }
    }

    /// The section at `path` (indices from the top-level sections down); None for
    /// the H1 (an empty path) or a path out of range.
    pub fn at_path(&self, path: &[usize]) -> Option<usize> {
        let (first, rest) = path.split_first()?;
        let mut index = *self.top.get(*first)? as usize;
        for step in rest {
            index = *self.children_of(index).get(*step)? as usize;
        }
        Some(index)
    }

    /// The caller a section path is: the H1 pass for the empty path.
    pub fn caller_at_path(&self, path: &[usize]) -> Caller {
        self.at_path(path).map_or(Caller::H1, Caller::Section)
    }

    /// The section `target` names from `caller`, or the §3.2 message
    /// (`no section "{target}" is visible from "{caller}"; visible: [...]`).
    pub fn resolve_or_message(&self, caller: Caller, target: &str) -> Result<usize, String> {
        self.resolve(caller, target)
            .ok_or_else(|| self.not_visible_message(caller, target))
    }

    /// The §3.2 message for a target not visible from `caller`.
    pub fn not_visible_message(&self, caller: Caller, target: &str) -> String {
        let (visible, more) = self.visible_targets_shown(caller, messages::SECTIONS_SHOWN);
        messages::section_not_visible(target, &self.caller_name(caller), &visible, more)
    }

    /// The target strings of the first `limit` sections visible from `caller`,
    /// in document order, and how many more are visible; in time of `limit`,
    /// not of the sections visible.
    pub fn visible_targets_shown(&self, caller: Caller, limit: usize) -> (Vec<String>, usize) {
        let (siblings, own): (&[u32], &[u32]) = match caller {
            Caller::Shared => (&[], &[]),
            Caller::H1 => (&self.top, &[]),
            Caller::Section(me) => {
                let siblings = match self.all.get(me).and_then(|s| s.parent) {
                    Some(p) => self.children_of(p),
                    None => &self.top,
                };
                (siblings, self.children_of(me))
            }
        };
        // Both lists are in document order: merged, their first `limit`.
        let (mut a, mut b) = (siblings.iter().peekable(), own.iter().peekable());
        let mut shown = Vec::with_capacity(limit.min(siblings.len() + own.len()));
        while shown.len() < limit {
            let next = match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) if x <= y => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, _) => b.next(),
            };
            let Some(&index) = next else { break };
            shown.extend(self.get(index as usize).map(|s| s.heading.target()));
        }
        let more = (siblings.len() + own.len()).saturating_sub(shown.len());
        (shown, more)
    }

    /// The target strings of the sections visible from `caller`, in document order.
    pub fn visible_targets(&self, caller: Caller) -> Vec<String> {
        self.visible(caller)
            .into_iter()
            .filter_map(|i| self.get(i).map(|s| s.heading.target()))
            .collect()
    }

    /// The section whose heading line holds `offset`.
    pub fn heading_at(&self, offset: usize) -> Option<usize> {
        self.all.iter().position(|s| {
            s.heading.line_range.start <= offset && offset <= s.heading.line_range.end
        })
    }

    /// The innermost section holding `offset`, as a caller (the H1 pass before the first H2).
    pub fn caller_at(&self, offset: usize) -> Caller {
        self.all
            .iter()
            .enumerate()
            .filter(|(_, s)| s.range.start <= offset && offset <= s.range.end)
            .map(|(i, _)| i)
            .next_back()
            .map_or(Caller::H1, Caller::Section)
    }
}

/// How many sections a tree holds, its children's included.
fn count_sections(sections: &[Section]) -> usize {
    sections
        .iter()
        .map(|s| 1 + count_sections(&s.children))
        .sum()
}

/// The high half of a heading text's hash: the sections index and the search
/// for duplicate sections sort by it (a collision only adds a candidate, whose
/// text is then compared).
pub(crate) fn text_hash(text: &str) -> u32 {
    let mut hasher = FxHasher::default();
    text.hash(&mut hasher);
    (hasher.finish() >> 32) as u32
}
