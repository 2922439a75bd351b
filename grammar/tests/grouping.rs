//! The hidden grouping of sections (see `grammar.js`): a heading of rank k >= 1
//! (a hash of its line) opens a hidden group of level k, announced by its
//! first token. None of it is visible: these tests parse documents with many
//! distinct headings, so that every rank occurs, and check that
//!
//! - `document`'s named children are still the blocks, in order, with exact
//!   byte ranges, and every heading has the same kind and fields;
//! - the queries see headings of every rank alike;
//! - an incremental reparse after edits, including edits to headings that
//!   change their rank (and so the hidden groups), gives the tree of a parse
//!   from scratch, down to the heading's hidden rank.
//!
//! The number of property cases can be raised with `PROPTEST_CASES` (default
//! here: 300).

use std::collections::BTreeSet;

use proptest::prelude::*;
use tree_sitter::{InputEdit, Node, Parser, Point, Query, QueryCursor, StreamingIterator, Tree};

fn parser() -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_promptforge::LANGUAGE.into())
        .expect("load the grammar");
    parser
}

/// One section of a generated document.
#[derive(Clone, Debug)]
struct Section {
    level: usize,
    number: u32,
    indent: bool,
    closing: bool,
    prose: bool,
    code: bool,
}

/// The text of `sections`, after a frontmatter, and the expected
/// `(kind, start, end)` of every child of `document`.
fn build(sections: &[Section]) -> (String, Vec<(&'static str, usize, usize)>) {
    let mut text = String::from("---\nname: t\n---\n\n");
    let mut blocks = vec![("frontmatter", 0, "---\nname: t\n---".len())];
    let mut push = |text: &mut String, kind: &'static str, line: &str| {
        let start = text.len();
        text.push_str(line);
        blocks.push((kind, start, text.len()));
        text.push_str("\n\n");
    };
    for s in sections {
        let heading = format!(
            "{}{} Section {}{}",
            if s.indent { "  " } else { "" },
            "#".repeat(s.level),
            s.number,
            if s.closing { " ##" } else { "" },
        );
        push(&mut text, "atx_heading", &heading);
        if s.prose {
            push(
                &mut text,
                "paragraph",
                &format!("Prose {}\nmore prose", s.number),
            );
        }
        if s.code {
            push(
                &mut text,
                "fenced_code_block",
                &format!("```lua\nlocal n = {}\n```", s.number),
            );
        }
    }
    (text, blocks)
}

fn sections(count: u32) -> Vec<Section> {
    (0..count)
        .map(|i| Section {
            level: 1 + (i % 3) as usize,
            number: i,
            indent: i % 7 == 3,
            closing: i % 5 == 1,
            prose: i % 4 != 2,
            code: i % 3 != 1,
        })
        .collect()
}

#[test]
fn ranks_occur_and_stay_hidden() {
    let (text, expected) = build(&sections(3000));
    let tree = parser().parse(&text, None).expect("parse");
    let root = tree.root_node();
    assert!(!root.has_error());
    assert_eq!((root.start_byte(), root.end_byte()), (0, text.len()));

    let mut cursor = root.walk();
    let children: Vec<(&str, usize, usize)> = root
        .named_children(&mut cursor)
        .map(|n| (n.kind(), n.start_byte(), n.end_byte()))
        .collect();
    assert_eq!(children, expected);
    assert_eq!(root.named_child_count(), expected.len());
    assert_eq!(root.child_count() as usize, expected.len());

    // Every heading looks the same; only its hidden grammar symbol tells its
    // rank, and all four ranks occur.
    let mut kind_ids = BTreeSet::new();
    let mut grammar_ids = BTreeSet::new();
    for heading in root
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "atx_heading")
    {
        kind_ids.insert(heading.kind_id());
        grammar_ids.insert(heading.grammar_id());
        assert_eq!(heading.grammar_name(), "atx_heading");
        let marker = heading.child_by_field_name("marker").expect("marker");
        assert_eq!(marker.kind(), "atx_marker");
        assert!(text[marker.byte_range()].bytes().all(|b| b == b'#'));
        let content = heading.child_by_field_name("content").expect("content");
        assert!(text[content.byte_range()].starts_with("Section "));
        assert_eq!(heading.named_child_count(), 2);
    }
    assert_eq!(kind_ids.len(), 1);
    assert_eq!(grammar_ids.len(), 4, "headings of ranks 0 to 3");
}

#[test]
fn queries_see_ranked_headings() {
    let (text, expected) = build(&sections(1000));
    let tree = parser().parse(&text, None).expect("parse");
    let language = tree_sitter_promptforge::LANGUAGE.into();
    let query = Query::new(&language, tree_sitter_promptforge::HIGHLIGHTS_QUERY).expect("query");
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    let mut cursor = QueryCursor::new();
    let mut captures = cursor.captures(&query, tree.root_node(), text.as_bytes());
    while let Some((m, index)) = captures.next() {
        let name = query.capture_names()[m.captures()[*index].index as usize];
        *counts.entry(name.to_string()).or_default() += 1;
    }
    let headings = expected.iter().filter(|b| b.0 == "atx_heading").count();
    let level_2 = sections(1000).iter().filter(|s| s.level == 2).count();
    assert_eq!(counts.get("punctuation.special"), Some(&headings));
    assert_eq!(counts.get("markup.heading"), Some(&headings));
    assert_eq!(counts.get("markup.heading.2"), Some(&level_2));
}

fn point_at(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let column = byte
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1);
    Point::new(row, column)
}

/// Every visible node with its kind, grammar symbol (which tells a heading's
/// rank), field and byte range.
fn describe(tree: &Tree) -> Vec<String> {
    fn walk(node: Node<'_>, field: Option<&str>, out: &mut Vec<String>) {
        out.push(format!(
            "{} {} {:?} {}..{} {}",
            node.kind(),
            node.grammar_id(),
            field,
            node.start_byte(),
            node.end_byte(),
            node.has_error(),
        ));
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                walk(cursor.node(), cursor.field_name(), out);
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree.root_node(), None, &mut out);
    out
}

/// Replaces `start..end` by `inserted`, in the text and in the tree.
fn edit(text: &mut String, tree: &mut Tree, start: usize, end: usize, inserted: &str) {
    let mut new_text = String::with_capacity(text.len() + inserted.len());
    new_text.push_str(&text[..start]);
    new_text.push_str(inserted);
    new_text.push_str(&text[end..]);
    let new_end = start + inserted.len();
    tree.edit(&InputEdit {
        start_byte: start,
        old_end_byte: end,
        new_end_byte: new_end,
        start_position: point_at(text, start),
        old_end_position: point_at(text, end),
        new_end_position: point_at(&new_text, new_end),
    });
    *text = new_text;
}

const INSERTS: &[&str] = &[
    "7",
    "3",
    "## Section 12\n",
    "\n",
    "```\n",
    "# ",
    "x",
    "- - -\n",
    "\n\n# 99\n",
];

fn section_strategy() -> impl Strategy<Value = Section> {
    (1usize..4, 0u32..100_000, any::<[bool; 4]>()).prop_map(|(level, number, flags)| Section {
        level,
        number,
        indent: flags[0] && number % 4 == 0,
        closing: flags[1],
        prose: flags[2],
        code: flags[3],
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300),
        max_shrink_iters: 500,
        ..ProptestConfig::default()
    })]

    /// Edits land anywhere (often inside a heading, changing its rank); after
    /// each, the incremental reparse equals a parse from scratch.
    #[test]
    fn incremental_reparse_with_ranked_headings(
        sections in prop::collection::vec(section_strategy(), 1..80),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..12, 0usize..INSERTS.len()), 1..10),
    ) {
        let (mut text, _) = build(&sections);
        let mut parser = parser();
        let mut tree = parser.parse(&text, None).expect("parse");
        for (at, delete, insert) in edits {
            let start = at.index(text.len() + 1);
            let end = (start + delete % 3).min(text.len());
            let inserted = if delete % 3 == 0 { INSERTS[insert] } else { "" };
            edit(&mut text, &mut tree, start, end, inserted);
            let incremental = parser.parse(&text, Some(&tree)).expect("reparse");
            let fresh = parser.parse(&text, None).expect("parse");
            prop_assert!(!fresh.root_node().has_error());
            prop_assert_eq!(describe(&incremental), describe(&fresh), "text {:?}", text);
            tree = incremental;
        }
    }
}
