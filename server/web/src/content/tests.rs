//! The unit tests of `content`: media types, charsets, HTML to Markdown, and pages
//! nested too deep, converted on a thread with a tokio worker's 2 MiB stack.

use super::*;

#[test]
fn content_types_are_parsed_and_classified() {
    let parsed = ContentType::parse("Text/HTML; Charset=\"ISO-8859-1\"");
    assert_eq!(parsed.essence, "text/html");
    assert_eq!(parsed.charset.as_deref(), Some("ISO-8859-1"));
    assert_eq!(kind_of("text/html"), Some(Kind::Html));
    assert_eq!(kind_of("application/xhtml+xml"), Some(Kind::Html));
    assert_eq!(kind_of("text/plain"), Some(Kind::Text));
    assert_eq!(kind_of("application/ld+json"), Some(Kind::Text));
    assert_eq!(kind_of("image/png"), None);
    assert_eq!(kind_of("application/pdf"), None);
}

#[test]
fn charsets_come_from_the_header_the_meta_or_the_bytes() {
    let latin = b"<html><body>caf\xe9</body></html>";
    assert!(decode(latin, Some("iso-8859-1"), Kind::Html).contains("café"));
    assert!(decode(latin, None, Kind::Html).contains("café"));
    let meta = "<html><head><meta charset=\"utf-8\"></head><body>café</body></html>";
    assert_eq!(meta_charset(meta.as_bytes()), Some(UTF_8));
    let equiv = b"<meta http-equiv='Content-Type' content='text/html; charset=windows-1252'>";
    assert_eq!(meta_charset(equiv), Some(WINDOWS_1252));
    let bom = b"\xef\xbb\xbfna\xc3\xafve";
    assert_eq!(decode(bom, Some("windows-1252"), Kind::Text), "naïve");
}

#[test]
fn html_becomes_markdown_without_scripts() {
    let markdown = html_to_markdown(
        "<html><head><title>T</title><script>alert(1)</script></head><body><h1>Hello</h1><p>A <a href=\"https://example.com/\">link</a>.</p><script>x()</script></body></html>",
        None,
    );
    assert_eq!(markdown, "# Hello\n\nA [link](https://example.com/).");
}

#[test]
fn a_meta_charset_does_not_end_the_parse() {
    // The tokenizer pauses at an encoding indicator; the rest is parsed all the same.
    let html = "<html><head><meta charset=\"utf-8\"></head><body><p>日本語</p><script>x()</script><p>fin</p></body></html>";
    assert_eq!(html_to_markdown(html, None), "日本語\n\nfin");
}

#[test]
fn links_and_images_become_absolute() {
    let page = Url::parse("https://example.com/docs/guide/").unwrap();
    let html = "<p><a href=\"intro\">Intro</a> <a href=\"/top\">Top</a> <a href=\"mailto:a@b.c\">Mail</a> <img src=\"../logo.png\" alt=\"Logo\"></p>";
    assert_eq!(
        html_to_markdown(html, Some(&page)),
        "[Intro](https://example.com/docs/guide/intro) [Top](https://example.com/top) [Mail](mailto:a@b.c) ![Logo](https://example.com/docs/logo.png)"
    );
    let based = "<html><head><base href=\"https://cdn.example.net/x/\"></head><body><a href=\"y\">Y</a></body></html>";
    assert_eq!(
        html_to_markdown(based, Some(&page)),
        "[Y](https://cdn.example.net/x/y)"
    );
}

/// Runs `work` on a thread with a tokio worker's stack, 2 MiB, where `fetch` runs.
fn on_worker_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(work)
        .expect("a thread")
        .join()
        .expect("the work does not panic")
}

/// `open` repeated `depth` times around a text, converted on a worker stack.
fn deep(open: &str, depth: usize) -> String {
    let html = format!(
        "<html><body>{}bottom text</body></html>",
        open.repeat(depth)
    );
    on_worker_stack(move || html_to_markdown(&html, None))
}

/// The deepest element under `root`, its children being at 1.
fn depth_of(root: &Handle) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root.clone(), 0)];
    while let Some((node, depth)) = stack.pop() {
        if matches!(node.data, NodeData::Element { .. }) {
            deepest = deepest.max(depth);
        }
        let children = node.children.borrow();
        stack.extend(children.iter().map(|child| (child.clone(), depth + 1)));
    }
    deepest
}

fn note() -> String {
    messages::fetch_deep_note(MAX_DEPTH)
}

fn assert_flattened(open: &str) {
    for depth in [10_000, 100_000] {
        let markdown = deep(open, depth);
        assert!(markdown.contains("bottom text"), "{open} x {depth}");
        assert!(
            markdown.ends_with(&format!("\n\n{}", note())),
            "{open} x {depth}"
        );
    }
}

#[test]
fn deep_bold_is_flattened_with_a_note() {
    assert_flattened("<b>");
}

#[test]
fn deep_divs_are_flattened_with_a_note() {
    assert_flattened("<div>");
}

#[test]
fn deep_lists_are_flattened_with_a_note() {
    assert_flattened("<ul><li>");
}

#[test]
fn deep_tables_are_flattened_with_a_note() {
    assert_flattened("<table><tr><td>");
}

#[test]
fn the_costliest_nestings_are_flattened_too() {
    // The shapes that take `htmd` the most stack a level, and formatting elements
    // the tree builder keeps one active entry each for (their attributes differ).
    for open in [
        "<table><caption>",
        "<table><thead><tr><th>",
        "<ol><li><pre><code>",
        "<dl><dd>",
        "<blockquote>",
        "<code>",
        "<h1><span>",
        "<svg><g>",
        "<template>",
    ] {
        let markdown = deep(open, 10_000);
        assert!(markdown.ends_with(&note()), "{open}");
    }
    let distinct: String = (0..10_000).map(|i| format!("<b id={i}>")).collect();
    let markdown = deep(&distinct, 1);
    assert!(markdown.ends_with(&note()), "{markdown}");
}

#[test]
fn the_parse_keeps_the_tree_shallow_and_the_drop_is_safe() {
    on_worker_stack(|| {
        for open in ["<b>", "<div>", "<ul><li>", "<table><tr><td>", "<a><i>"] {
            let (tree, dropped) = parse(&open.repeat(100_000));
            assert!(dropped, "{open}");
            assert!(depth_of(&tree) <= PARSE_LIMIT, "{open}");
        }
        // Elements that nest nothing in HTML nest in SVG and MathML (`<img>` leaves
        // them, an SVG `<title>` holds HTML).
        for foreign in ["<svg>", "<math>"] {
            for open in ["<style>", "<script>", "<textarea>", "<title>", "<img>"] {
                let (tree, _) = parse(&format!("{foreign}{}", open.repeat(20_000)));
                let depth = depth_of(&tree);
                assert!(depth <= PARSE_LIMIT + NON_NESTING_SLACK, "{foreign}{open}");
            }
            let (_, dropped) = parse(&format!("{foreign}{}", "<style>".repeat(1_000)));
            assert!(dropped, "{foreign}");
        }
        let (tree, dropped) = parse("<div>".repeat(100).as_str());
        assert!(!dropped);
        assert_eq!(depth_of(&tree), 102);
    });
}

#[test]
fn a_tree_a_million_deep_is_freed_without_recursion() {
    on_worker_stack(|| {
        let root = Node::new(NodeData::Document);
        let mut parent = root.clone();
        for _ in 0..1_000_000 {
            let child = Node::new(NodeData::Text {
                contents: RefCell::new(StrTendril::new()),
            });
            child.parent.set(Some(Rc::downgrade(&parent)));
            parent.children.borrow_mut().push(child.clone());
            parent = child;
        }
        drop(parent);
        drop(root);
    });
}

#[test]
fn nesting_at_the_limit_is_whole_and_one_level_more_is_flattened() {
    // `<html>` and `<body>` are levels 1 and 2.
    assert_eq!(deep("<div>", MAX_DEPTH - 2), "bottom text");
    assert_eq!(
        deep("<div>", MAX_DEPTH - 1),
        format!("bottom text\n\n{}", note())
    );
}

#[test]
fn flattened_text_keeps_words_apart_and_leaves_scripts_out() {
    let inner = "<div>one</div><p>two<br>three</p>un<b>bold</b>ed <em>[x](javascript:y)</em>\
        <script>evil()</script><style>p{}</style><noscript>hidden</noscript><ul><li>end</li></ul>";
    for depth in [MAX_DEPTH, 1_000] {
        // At MAX_DEPTH the structure is parsed and then flattened; at 1,000 its start
        // tags are dropped by the parse, but scripts and styles still are not text.
        let html = format!(
            "<html><body>{}{inner}</body></html>",
            "<section>".repeat(depth)
        );
        let markdown = on_worker_stack(move || html_to_markdown(&html, None));
        assert_eq!(
            markdown,
            format!(
                "one two three unbolded \\[x\\](javascript:y) end\n\n{}",
                note()
            ),
            "{depth}"
        );
    }
}

#[test]
fn content_after_a_deep_part_converts_normally() {
    let html = format!(
        "<html><body><h1>Before</h1>{}deep{}<h2>After</h2><p>A <a href=\"/x\">link</a>.</p></body></html>",
        "<div>".repeat(100_000),
        "</div>".repeat(100_000)
    );
    let page = Url::parse("https://example.com/").unwrap();
    let markdown = on_worker_stack(move || html_to_markdown(&html, Some(&page)));
    assert_eq!(
        markdown,
        format!(
            "# Before\n\ndeep\n\n## After\n\nA [link](https://example.com/x).\n\n{}",
            note()
        )
    );
}

#[test]
fn a_normal_nested_page_converts_unchanged() {
    let html = format!(
        "<html><head><title>T</title></head><body>{}<h2>Notes</h2>\
         <ul><li>one<ul><li>two<ol><li>three</li><li>four</li></ol></li></ul></li><li>five</li></ul>\
         <blockquote><p>Quoted <b>bold <i>and italic</i></b>.</p><blockquote><p>Deeper</p></blockquote></blockquote>\
         <table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td><code>x</code></td></tr></table>\
         <pre><code>let x = 1;\n</code></pre>{}</body></html>",
        "<div><section>".repeat(20),
        "</section></div>".repeat(20)
    );
    let markdown = on_worker_stack(move || html_to_markdown(&html, None));
    // The output before depth was bounded.
    assert_eq!(
        markdown,
        "## Notes\n\n*   one\n    *   two\n        1.  three\n        2.  four\n*   five\n\n\
         > Quoted **bold *and italic***.\n> \n> > Deeper\n\n\
         | A | B   |\n| - | --- |\n| 1 | `x` |\n\n```\nlet x = 1;\n```"
    );
}
