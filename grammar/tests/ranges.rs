//! Exact byte ranges: the text of every named node (other than `document`)
//! for inputs covering each rule of the node contract.

use tree_sitter::{Node, Parser};

fn parse_named(text: &str) -> Vec<(String, String)> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_promptforge::LANGUAGE.into())
        .expect("load the grammar");
    let tree = parser.parse(text, None).expect("parse");
    let root = tree.root_node();
    assert!(!root.has_error(), "{text:?}: {}", root.to_sexp());
    let mut out = Vec::new();
    collect(root, text, &mut out);
    out
}

fn collect(node: Node<'_>, text: &str, out: &mut Vec<(String, String)>) {
    if node.is_named() && node.kind() != "document" {
        out.push((node.kind().to_string(), text[node.byte_range()].to_string()));
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect(child, text, out);
    }
}

/// Asserts the (kind, text) list of `text`'s named nodes.
fn check(text: &str, expected: &[(&str, &str)]) {
    let actual = parse_named(text);
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, t)| (k.to_string(), t.to_string()))
        .collect();
    assert_eq!(actual, expected, "input {text:?}");
}

#[test]
fn frontmatter() {
    check(
        "---\nname: x\nb: 2\n---\n",
        &[
            ("frontmatter", "---\nname: x\nb: 2\n---"),
            ("frontmatter_delimiter", "---"),
            ("frontmatter_content", "name: x\nb: 2\n"),
            ("frontmatter_delimiter", "---"),
        ],
    );
    check(
        "---\n---",
        &[
            ("frontmatter", "---\n---"),
            ("frontmatter_delimiter", "---"),
            ("frontmatter_delimiter", "---"),
        ],
    );
    check(
        "---\r\n\r\na: 1\r\n---\r\nx",
        &[
            ("frontmatter", "---\r\n\r\na: 1\r\n---"),
            ("frontmatter_delimiter", "---"),
            ("frontmatter_content", "\r\na: 1\r\n"),
            ("frontmatter_delimiter", "---"),
            ("paragraph", "x"),
        ],
    );
    check(
        "---\ra: 1\r---\r",
        &[
            ("frontmatter", "---\ra: 1\r---"),
            ("frontmatter_delimiter", "---"),
            ("frontmatter_content", "a: 1\r"),
            ("frontmatter_delimiter", "---"),
        ],
    );
    // Unclosed: a thematic break, then the body.
    check(
        "---\na: 1\n",
        &[("thematic_break", "---"), ("paragraph", "a: 1")],
    );
    // A closing line with a trailing space does not close.
    check(
        "---\na\n--- \n---\n",
        &[
            ("frontmatter", "---\na\n--- \n---"),
            ("frontmatter_delimiter", "---"),
            ("frontmatter_content", "a\n--- \n"),
            ("frontmatter_delimiter", "---"),
        ],
    );
}

#[test]
fn bom() {
    check(
        "\u{FEFF}---\na\n---\n",
        &[
            ("frontmatter", "---\na\n---"),
            ("frontmatter_delimiter", "---"),
            ("frontmatter_content", "a\n"),
            ("frontmatter_delimiter", "---"),
        ],
    );
    check(
        "\u{FEFF}# T",
        &[
            ("atx_heading", "# T"),
            ("atx_marker", "#"),
            ("heading_content", "T"),
        ],
    );
    check("\u{FEFF}\u{FEFF}x", &[("paragraph", "\u{FEFF}x")]);
}

#[test]
fn headings() {
    let heading = |line: &str, marker: &str, content: Option<&str>| {
        let mut expected = vec![("atx_heading", line), ("atx_marker", marker)];
        if let Some(content) = content {
            expected.push(("heading_content", content));
        }
        check(line, &expected);
        // The same with each line ending after it.
        for ending in ["\n", "\r\n", "\r"] {
            check(&format!("{line}{ending}"), &expected);
        }
    };
    heading("# Title", "#", Some("Title"));
    heading("###### Six", "######", Some("Six"));
    heading("#   spaced   out   ", "#", Some("spaced   out"));
    heading("#\ttab\t", "#", Some("tab"));
    heading("## closed ##", "##", Some("closed"));
    heading("## closed #####   ", "##", Some("closed"));
    heading("# a ## b", "#", Some("a ## b"));
    heading("# a ## ##", "#", Some("a ##"));
    heading("# foo#", "#", Some("foo#"));
    heading("# foo \\#", "#", Some("foo \\#"));
    heading("   ### indented", "###", Some("indented"));
    heading(" # é 😀 #", "#", Some("é 😀"));
    heading("#", "#", None);
    heading("#   ", "#", None);
    heading("## ###", "##", None);
    heading("# #", "#", None);
    check("####### x", &[("paragraph", "####### x")]);
    check("#5 x", &[("paragraph", "#5 x")]);
    check("    # x", &[("paragraph", "    # x")]);
}

#[test]
fn fences() {
    check(
        "```lua\nreturn 1\n```\n",
        &[
            ("fenced_code_block", "```lua\nreturn 1\n```"),
            ("fence_open", "```lua"),
            ("fence_marker", "```"),
            ("info_string", "lua"),
            ("code_content", "return 1\n"),
            ("fence_close", "```"),
        ],
    );
    check(
        "  ````  lua shared  \r\n\r\nx\r\n  `````  \r\n",
        &[
            (
                "fenced_code_block",
                "  ````  lua shared  \r\n\r\nx\r\n  `````  ",
            ),
            ("fence_open", "  ````  lua shared  "),
            ("fence_marker", "````"),
            ("info_string", "lua shared"),
            ("code_content", "\r\nx\r\n"),
            ("fence_close", "  `````  "),
        ],
    );
    check(
        "~~~   \ra\r~~~",
        &[
            ("fenced_code_block", "~~~   \ra\r~~~"),
            ("fence_open", "~~~   "),
            ("fence_marker", "~~~"),
            ("code_content", "a\r"),
            ("fence_close", "~~~"),
        ],
    );
    // Unclosed: the content runs to the end of the file, blank lines included.
    check(
        "```\n# x\n---\n\n",
        &[
            ("fenced_code_block", "```\n# x\n---\n\n"),
            ("fence_open", "```"),
            ("fence_marker", "```"),
            ("code_content", "# x\n---\n\n"),
        ],
    );
    check(
        "```\n",
        &[
            ("fenced_code_block", "```\n"),
            ("fence_open", "```"),
            ("fence_marker", "```"),
        ],
    );
    check(
        "```\n```",
        &[
            ("fenced_code_block", "```\n```"),
            ("fence_open", "```"),
            ("fence_marker", "```"),
            ("fence_close", "```"),
        ],
    );
    // Shorter closers and other characters are content.
    check(
        "````\n```\n~~~~\n````\n",
        &[
            ("fenced_code_block", "````\n```\n~~~~\n````"),
            ("fence_open", "````"),
            ("fence_marker", "````"),
            ("code_content", "```\n~~~~\n"),
            ("fence_close", "````"),
        ],
    );
    check("``` a`b", &[("paragraph", "``` a`b")]);
    check(
        "~~~ a`b",
        &[
            ("fenced_code_block", "~~~ a`b"),
            ("fence_open", "~~~ a`b"),
            ("fence_marker", "~~~"),
            ("info_string", "a`b"),
        ],
    );
}

#[test]
fn thematic_breaks_and_paragraphs() {
    check("   - - -  \n", &[("thematic_break", "   - - -  ")]);
    check(
        "Title\n---\nText\n",
        &[
            ("paragraph", "Title"),
            ("thematic_break", "---"),
            ("paragraph", "Text"),
        ],
    );
    check("--\n", &[("paragraph", "--")]);
    check(
        "  one  \r\ntwo\r\n \t \r\nthree",
        &[("paragraph", "  one  \r\ntwo"), ("paragraph", "three")],
    );
    check(
        "a\rb\r\r# h\rc",
        &[
            ("paragraph", "a\rb"),
            ("atx_heading", "# h"),
            ("atx_marker", "#"),
            ("heading_content", "h"),
            ("paragraph", "c"),
        ],
    );
    check(
        "p\n```\nc\n```\nq",
        &[
            ("paragraph", "p"),
            ("fenced_code_block", "```\nc\n```"),
            ("fence_open", "```"),
            ("fence_marker", "```"),
            ("code_content", "c\n"),
            ("fence_close", "```"),
            ("paragraph", "q"),
        ],
    );
    check("\n\n  \n", &[]);
    check("", &[]);
}

#[test]
fn invalid_utf8_and_nul() {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_promptforge::LANGUAGE.into())
        .expect("load the grammar");
    let bytes: &[u8] = b"# \xff\xfe title \x00\n```\xc3\n\x80\n```\n\xed\xa0\x80 prose";
    let tree = parser.parse(bytes, None).expect("parse");
    let root = tree.root_node();
    assert!(!root.has_error(), "{}", root.to_sexp());
    assert_eq!(root.end_byte(), bytes.len());
    assert_eq!(
        root.to_sexp(),
        "(document (atx_heading marker: (atx_marker) content: (heading_content)) \
         (fenced_code_block (fence_open marker: (fence_marker) info: (info_string)) (code_content) (fence_close)) \
         (paragraph))"
    );
    let content = root
        .child(0)
        .unwrap()
        .child_by_field_name("content")
        .unwrap();
    assert_eq!(&bytes[content.byte_range()], b"\xff\xfe title \x00");
}

#[test]
fn huge_lines() {
    let long = "x".repeat(200_000);
    let text = format!("# {long} ##\n```{long}\n{long}\n```\n{long}\n");
    let nodes = parse_named(&text);
    assert_eq!(nodes[2], ("heading_content".to_string(), long.clone()));
    assert_eq!(nodes[6], ("info_string".to_string(), long.clone()));
    assert_eq!(nodes[7], ("code_content".to_string(), format!("{long}\n")));
    let backticks = "`".repeat(100_000);
    let text = format!("{backticks}\n{long}\n{backticks}`\n");
    let nodes = parse_named(&text);
    assert_eq!(nodes[0].0, "fenced_code_block");
    assert_eq!(
        nodes[4],
        ("fence_close".to_string(), format!("{backticks}`"))
    );
}
