//! Tree-sitter grammar of the block structure of PromptForge prompt files.
//!
//! A prompt is a Markdown file with YAML frontmatter and embedded Lua. This
//! grammar parses its line-oriented blocks only: the `frontmatter`, ATX
//! headings (`atx_heading`), fenced code blocks (`fenced_code_block`),
//! thematic breaks and prose paragraphs. Inline Markdown, YAML and Lua are left
//! to other parsers (see [`INJECTIONS_QUERY`]).
//!
//! ```
//! let code = "---\nname: demo\n---\n\n# Demo\n\n```lua\nreturn 1\n```\n";
//! let mut parser = tree_sitter::Parser::new();
//! parser
//!     .set_language(&tree_sitter_promptforge::LANGUAGE.into())
//!     .expect("Error loading the PromptForge grammar");
//! let tree = parser.parse(code, None).unwrap();
//! assert!(!tree.root_node().has_error());
//! assert_eq!(tree.root_node().child(0).unwrap().kind(), "frontmatter");
//! ```
//!
//! The node kinds, their fields and their exact byte ranges are described in
//! the crate's `README.md`.

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_promptforge() -> *const ();
}

/// The tree-sitter [`LanguageFn`] of the PromptForge block grammar; convert it
/// with `.into()` to get a `tree_sitter::Language`.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_promptforge) };

/// The content of the grammar's [`node-types.json`] file: every node kind,
/// its fields and children.
///
/// [`node-types.json`]: https://tree-sitter.github.io/tree-sitter/using-parsers/6-static-node-types
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// The syntax highlighting query (`queries/highlights.scm`): delimiters,
/// markers, heading text, info strings and thematic breaks.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");

/// The language injection query (`queries/injections.scm`): YAML into the
/// frontmatter, Lua into `lua` and `lua shared` fences, the info string's
/// language into other fences, and inline Markdown into prose and headings.
pub const INJECTIONS_QUERY: &str = include_str!("../../queries/injections.scm");

/// The folding query (`queries/folds.scm`): the frontmatter and fenced code
/// blocks.
pub const FOLDS_QUERY: &str = include_str!("../../queries/folds.scm");

#[cfg(test)]
mod tests {
    use tree_sitter::{Language, Node, Parser, Query};

    fn language() -> Language {
        super::LANGUAGE.into()
    }

    fn parse(text: &str) -> tree_sitter::Tree {
        let mut parser = Parser::new();
        parser.set_language(&language()).expect("load the grammar");
        parser.parse(text, None).expect("parse")
    }

    /// Every named node as `(kind, start_byte, end_byte)`, in document order.
    fn named_nodes(node: Node<'_>, out: &mut Vec<(String, usize, usize)>) {
        if node.is_named() {
            out.push((node.kind().to_string(), node.start_byte(), node.end_byte()));
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            named_nodes(child, out);
        }
    }

    fn nodes_of(text: &str) -> Vec<(String, usize, usize)> {
        let tree = parse(text);
        assert!(
            !tree.root_node().has_error(),
            "{}",
            tree.root_node().to_sexp()
        );
        let mut out = Vec::new();
        named_nodes(tree.root_node(), &mut out);
        out
    }

    fn expect(list: &[(&str, usize, usize)]) -> Vec<(String, usize, usize)> {
        list.iter()
            .map(|&(k, s, e)| (k.to_string(), s, e))
            .collect()
    }

    #[test]
    fn language_loads() {
        let mut parser = Parser::new();
        parser
            .set_language(&language())
            .expect("Error loading the PromptForge grammar");
        assert!(language().abi_version() >= 14);
        assert!(super::NODE_TYPES.contains("\"fenced_code_block\""));
    }

    #[test]
    fn queries_compile() {
        for (name, source) in [
            ("highlights", super::HIGHLIGHTS_QUERY),
            ("injections", super::INJECTIONS_QUERY),
            ("folds", super::FOLDS_QUERY),
        ] {
            if let Err(error) = Query::new(&language(), source) {
                panic!("{name}.scm does not compile: {error}");
            }
        }
    }

    /// `(language, injected text)` pairs produced by the injection query.
    fn injections(text: &str) -> Vec<(String, String)> {
        use tree_sitter::{QueryCursor, StreamingIterator};
        let tree = parse(text);
        let query = Query::new(&language(), super::INJECTIONS_QUERY).expect("injections.scm");
        let content_index = query.capture_index_for_name("injection.content").unwrap();
        let language_index = query.capture_index_for_name("injection.language");
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.matches(&query, tree.root_node(), text.as_bytes());
        let mut out = Vec::new();
        while let Some(m) = matches.next() {
            let set_language = query
                .property_settings(m.pattern_index)
                .iter()
                .find_map(|p| {
                    (&*p.key == "injection.language")
                        .then(|| p.value.as_deref().unwrap().to_string())
                });
            let captured_language = m
                .captures()
                .iter()
                .find(|c| Some(c.index) == language_index)
                .map(|c| text[c.node.byte_range()].to_string());
            let content = m
                .captures()
                .iter()
                .find(|c| c.index == content_index)
                .unwrap();
            let language = set_language.or(captured_language).expect("a language");
            out.push((language, text[content.node.byte_range()].to_string()));
        }
        out
    }

    #[test]
    fn injection_languages() {
        let text = "---\nname: x\n---\n# Title\n```lua\na()\n```\n```lua shared\nb()\n```\n```lua  shared\nc()\n```\n~~~ python\nd()\n~~~\n```python title\ne()\n```\n```\nf()\n```\nprose\n";
        let mut found = injections(text);
        found.sort();
        let mut expected: Vec<(String, String)> = [
            ("yaml", "name: x\n"),
            ("markdown_inline", "Title"),
            ("lua", "a()\n"),
            ("lua", "b()\n"),
            ("python", "d()\n"),
            ("markdown_inline", "prose"),
        ]
        .iter()
        .map(|(l, t)| (l.to_string(), t.to_string()))
        .collect();
        expected.sort();
        assert_eq!(found, expected);
    }

    #[test]
    fn sample_prompt() {
        let text = "---\nname: page-fetcher\npromptforge: 0\n---\n\n# Page fetcher\n\n```lua shared\nfunction label(t) return t.name end\n```\n\n## Fetch ##\n\nSome prose\nover two lines.\n---\n```python\n# not a heading\n```\n";
        let nodes = nodes_of(text);
        let kinds: Vec<&str> = nodes.iter().map(|n| n.0.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "document",
                "frontmatter",
                "frontmatter_delimiter",
                "frontmatter_content",
                "frontmatter_delimiter",
                "atx_heading",
                "atx_marker",
                "heading_content",
                "fenced_code_block",
                "fence_open",
                "fence_marker",
                "info_string",
                "code_content",
                "fence_close",
                "atx_heading",
                "atx_marker",
                "heading_content",
                "paragraph",
                "thematic_break",
                "fenced_code_block",
                "fence_open",
                "fence_marker",
                "info_string",
                "code_content",
                "fence_close",
            ]
        );
        let text_of = |kind: &str, nth: usize| {
            let (_, s, e) = nodes.iter().filter(|n| n.0 == kind).nth(nth).unwrap();
            &text[*s..*e]
        };
        assert_eq!(
            text_of("frontmatter_content", 0),
            "name: page-fetcher\npromptforge: 0\n"
        );
        assert_eq!(text_of("heading_content", 0), "Page fetcher");
        assert_eq!(text_of("heading_content", 1), "Fetch");
        assert_eq!(text_of("atx_heading", 1), "## Fetch ##");
        assert_eq!(text_of("info_string", 0), "lua shared");
        assert_eq!(text_of("info_string", 1), "python");
        assert_eq!(
            text_of("code_content", 0),
            "function label(t) return t.name end\n"
        );
        assert_eq!(text_of("code_content", 1), "# not a heading\n");
        assert_eq!(text_of("paragraph", 0), "Some prose\nover two lines.");
        assert_eq!(text_of("thematic_break", 0), "---");
    }

    #[test]
    fn crlf_byte_ranges() {
        let text = "---\r\nname: x\r\n---\r\n\r\n  # Title  #\r\n```lua  \r\nlocal a = 1\r\n```\r\nprose\r\nmore\r\n";
        assert_eq!(
            nodes_of(text),
            expect(&[
                ("document", 0, 76),
                ("frontmatter", 0, 17),
                ("frontmatter_delimiter", 0, 3),
                ("frontmatter_content", 5, 14),
                ("frontmatter_delimiter", 14, 17),
                ("atx_heading", 21, 33),
                ("atx_marker", 23, 24),
                ("heading_content", 25, 30),
                ("fenced_code_block", 35, 61),
                ("fence_open", 35, 43),
                ("fence_marker", 35, 38),
                ("info_string", 38, 41),
                ("code_content", 45, 58),
                ("fence_close", 58, 61),
                ("paragraph", 63, 74),
            ])
        );
    }

    #[test]
    fn bom_byte_ranges() {
        // U+FEFF is 3 bytes in UTF-8; it belongs to no node.
        let text = "\u{FEFF}---\ntitle: é\n---\n# H\n";
        assert_eq!(
            nodes_of(text),
            expect(&[
                ("document", 3, 25),
                ("frontmatter", 3, 20),
                ("frontmatter_delimiter", 3, 6),
                ("frontmatter_content", 7, 17),
                ("frontmatter_delimiter", 17, 20),
                ("atx_heading", 21, 24),
                ("atx_marker", 21, 22),
                ("heading_content", 23, 24),
            ])
        );
    }
}
