//! Property test: an incremental reparse after random edits gives exactly the
//! tree of a parse from scratch (same S-expression, same kinds, byte ranges
//! and points for every node, named or not), and no parse ever has an error.
//!
//! The number of cases can be raised with the `PROPTEST_CASES` environment
//! variable (default here: 3000).

use proptest::prelude::*;
use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

/// Fragments inserted by the edits, and used to build starting documents.
const FRAGMENTS: &[&str] = &[
    "---\n",
    "```lua\n",
    "```\n",
    "# h\n",
    "~~~\n",
    "\r\n",
    "é",
    "😀",
    "x",
    "\n",
    "\r",
    " ",
    "\t",
    "#",
    "`",
    "~",
    "-",
    "*",
    "---",
    "````",
    "```lua shared\n",
    "## t ##",
    "   ",
    "\u{FEFF}",
    "prose line\n",
    "- - -\n",
    "\0",
];

/// Documents that edits start from, besides random fragment sequences.
const SEEDS: &[&str] = &[
    "---\nname: demo\npromptforge: 0\n---\n\n# Demo\n\n```lua shared\nfunction f() end\n```\n\n```lua\nmodels.default('w')\n```\n\n## Step ##\n\nProse\nmore prose\n---\n~~~~ python\n# in fence\n~~~\n~~~~~\n",
    "\u{FEFF}---\r\nname: x\r\n---\r\n# T\r\n```lua\r\nreturn 1\r\n```\r\n",
    "---\rname: x\r---\r# T\r~~~\r---\r~~~\r",
    "# A\n\n    # not a heading\n  ### B ###\n####### seven\n#5 no\n```\nunclosed\n# still code\n",
    "---\nunclosed: frontmatter\n# heading\n",
    "",
];

fn parser() -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_promptforge::LANGUAGE.into())
        .expect("load the grammar");
    parser
}

/// The point of a byte offset, as tree-sitter counts it: rows end at '\n',
/// columns are bytes.
fn point_at(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let column = match before.iter().rposition(|&b| b == b'\n') {
        Some(newline) => byte - newline - 1,
        None => byte,
    };
    Point::new(row, column)
}

/// The largest char boundary of `text` at or below `byte`.
fn floor_boundary(text: &str, byte: usize) -> usize {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    byte
}

/// One edit: replace `start..old_end` by `inserted`.
#[derive(Clone, Debug)]
enum Edit {
    Insert { at: usize, fragment: usize },
    Delete { at: usize, len: usize },
}

/// Applies `edit` to `text`, returning the new text and the `InputEdit`.
fn apply(text: &str, edit: &Edit) -> (String, InputEdit) {
    let (start, old_end, inserted) = match *edit {
        Edit::Insert { at, fragment } => {
            let start = floor_boundary(text, at % (text.len() + 1));
            (start, start, FRAGMENTS[fragment % FRAGMENTS.len()])
        }
        Edit::Delete { at, len } => {
            let start = floor_boundary(text, at % (text.len() + 1));
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            (start, end, "")
        }
    };
    let mut new_text = String::with_capacity(text.len() + inserted.len());
    new_text.push_str(&text[..start]);
    new_text.push_str(inserted);
    new_text.push_str(&text[old_end..]);
    let new_end = start + inserted.len();
    let input_edit = InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point_at(text, start),
        old_end_position: point_at(text, old_end),
        new_end_position: point_at(&new_text, new_end),
    };
    (new_text, input_edit)
}

/// Every node (named or not) with its kind, flags, byte range and points.
fn describe(node: Node<'_>, out: &mut Vec<String>) {
    out.push(format!(
        "{} named={} error={} missing={} {}..{} {:?}..{:?}",
        node.kind(),
        node.is_named(),
        node.is_error(),
        node.is_missing(),
        node.start_byte(),
        node.end_byte(),
        node.start_position(),
        node.end_position(),
    ));
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        describe(child, out);
    }
}

fn snapshot(tree: &Tree) -> (String, Vec<String>) {
    let mut nodes = Vec::new();
    describe(tree.root_node(), &mut nodes);
    (tree.root_node().to_sexp(), nodes)
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<usize>(), any::<usize>())
            .prop_map(|(at, fragment)| Edit::Insert { at, fragment }),
        1 => (any::<usize>(), 1usize..12).prop_map(|(at, len)| Edit::Delete { at, len }),
    ]
}

fn document_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..SEEDS.len()).prop_map(|i| SEEDS[i].to_string()),
        prop::collection::vec(0..FRAGMENTS.len(), 0..40)
            .prop_map(|parts| parts.into_iter().map(|i| FRAGMENTS[i]).collect()),
    ]
}

/// The document must span the whole text: nothing but blank space may be left
/// outside it (the scanner never gives up before the end of the input).
fn check_coverage(tree: &Tree, text: &str) -> Result<(), TestCaseError> {
    let root = tree.root_node();
    if root.child_count() > 0 {
        prop_assert_eq!(
            root.end_byte(),
            text.len(),
            "document ends early in {:?}",
            text
        );
    } else {
        let body = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        prop_assert!(
            body.bytes()
                .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')),
            "empty document for non-blank text {:?}",
            text
        );
    }
    Ok(())
}

/// True when `byte` is the first byte of a line of `text` (a leading BOM is
/// not part of the first line).
fn is_line_start(text: &[u8], byte: usize) -> bool {
    byte == 0
        || (byte == 3 && text.starts_with("\u{FEFF}".as_bytes()))
        || matches!(text[byte - 1], b'\n' | b'\r')
            && !(text[byte - 1] == b'\r' && text.get(byte) == Some(&b'\n'))
}

/// True when `byte` is where a line ends (a line ending or the end of input).
fn is_line_end(text: &[u8], byte: usize) -> bool {
    byte == text.len()
        || matches!(text[byte], b'\n' | b'\r')
            && !(byte > 0 && text[byte - 1] == b'\r' && text[byte] == b'\n')
}

/// The node contract's shape rules, checked on every node of a fresh parse.
fn check_invariants(node: Node<'_>, text: &str) -> Result<(), TestCaseError> {
    let bytes = text.as_bytes();
    let (start, end) = (node.start_byte(), node.end_byte());
    let slice = &bytes[start..end];
    match node.kind() {
        // Line nodes: from the first byte of a line to the end of a line.
        "frontmatter"
        | "frontmatter_delimiter"
        | "atx_heading"
        | "fenced_code_block"
        | "fence_open"
        | "fence_close"
        | "thematic_break"
        | "paragraph" => {
            prop_assert!(
                is_line_start(bytes, start),
                "{} does not start a line in {:?}",
                node.kind(),
                text
            );
            let ends_fence_at_eof = node.kind() == "fenced_code_block" && end == bytes.len();
            prop_assert!(
                ends_fence_at_eof || is_line_end(bytes, end),
                "{} does not end a line in {:?}",
                node.kind(),
                text
            );
            prop_assert!(!slice.is_empty());
        }
        // Content nodes: whole lines, line endings included.
        "frontmatter_content" | "code_content" => {
            prop_assert!(
                is_line_start(bytes, start),
                "{} start in {:?}",
                node.kind(),
                text
            );
            prop_assert!(
                end == bytes.len() || is_line_start(bytes, end),
                "{} end in {:?}",
                node.kind(),
                text
            );
            prop_assert!(!slice.is_empty());
        }
        // Trimmed inline pieces: no line ending, no surrounding spaces.
        "heading_content" | "info_string" => {
            prop_assert!(!slice.is_empty());
            prop_assert!(!slice.iter().any(|b| matches!(b, b'\n' | b'\r')));
            prop_assert!(
                !matches!(slice[0], b' ' | b'\t'),
                "{} not trimmed in {:?}",
                node.kind(),
                text
            );
            prop_assert!(
                !matches!(slice[slice.len() - 1], b' ' | b'\t'),
                "{} not trimmed in {:?}",
                node.kind(),
                text
            );
        }
        "atx_marker" => {
            prop_assert!((1..=6).contains(&slice.len()) && slice.iter().all(|&b| b == b'#'));
        }
        "fence_marker" => {
            prop_assert!(
                slice.len() >= 3
                    && (slice.iter().all(|&b| b == b'`') || slice.iter().all(|&b| b == b'~'))
            );
        }
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        check_invariants(child, text)?;
    }
    Ok(())
}

/// Checks the property for one starting document and a sequence of edits.
fn check(document: &str, edits: &[Edit]) -> Result<(), TestCaseError> {
    let mut parser = parser();
    let mut text = document.to_string();
    let mut tree = parser.parse(&text, None).expect("parse");
    prop_assert!(
        !tree.root_node().has_error(),
        "error in {:?}: {}",
        text,
        tree.root_node().to_sexp()
    );
    check_coverage(&tree, &text)?;
    check_invariants(tree.root_node(), &text)?;
    for edit in edits {
        let (new_text, input_edit) = apply(&text, edit);
        tree.edit(&input_edit);
        let incremental = parser.parse(&new_text, Some(&tree)).expect("reparse");
        let fresh = parser.parse(&new_text, None).expect("parse");
        prop_assert!(
            !fresh.root_node().has_error(),
            "error in {:?}: {}",
            new_text,
            fresh.root_node().to_sexp()
        );
        check_coverage(&fresh, &new_text)?;
        check_invariants(fresh.root_node(), &new_text)?;
        let (fresh_sexp, fresh_nodes) = snapshot(&fresh);
        let (incremental_sexp, incremental_nodes) = snapshot(&incremental);
        prop_assert_eq!(
            &incremental_sexp,
            &fresh_sexp,
            "S-expressions differ after {:?}: {:?} -> {:?}",
            edit,
            text,
            new_text
        );
        prop_assert_eq!(
            &incremental_nodes,
            &fresh_nodes,
            "nodes differ after {:?}: {:?} -> {:?}",
            edit,
            text,
            new_text
        );
        text = new_text;
        tree = incremental;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn incremental_reparse_matches_fresh_parse(
        document in document_strategy(),
        edits in prop::collection::vec(edit_strategy(), 1..8),
    ) {
        check(&document, &edits)?;
    }
}

/// Regression cases: edits that join or split a CRLF, open or close the
/// frontmatter or a fence far from the edit.
#[test]
fn targeted_edits() {
    let cases: &[(&str, &[Edit])] = &[
        // "\r" + inserted "\n" becomes one CRLF line ending.
        ("a\rb", &[Edit::Insert { at: 2, fragment: 9 }]),
        // Closing the frontmatter at the end of the file.
        (
            "---\nname: x\n# h\n",
            &[Edit::Insert {
                at: 16,
                fragment: 0,
            }],
        ),
        // Removing the closing line of the frontmatter.
        (
            "---\nname: x\n---\n# h\n",
            &[Edit::Delete { at: 12, len: 4 }],
        ),
        // Opening a fence above headings.
        ("# a\n# b\n", &[Edit::Insert { at: 0, fragment: 2 }]),
        // Lengthening the opener so that the closer no longer closes.
        (
            "```\ncode\n```\n# h\n",
            &[Edit::Insert {
                at: 0,
                fragment: 14,
            }],
        ),
        // A BOM inserted at the start of the file.
        (
            "---\nx\n---\n",
            &[Edit::Insert {
                at: 0,
                fragment: 23,
            }],
        ),
        // Heading content changed after the marker.
        ("# abc ##\n", &[Edit::Insert { at: 8, fragment: 8 }]),
    ];
    for (document, edits) in cases {
        if let Err(error) = check(document, edits) {
            panic!("{document:?} {edits:?}: {error}");
        }
    }
}
