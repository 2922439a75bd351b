//! The body's structure rules of `language.md` §1.4, message by message.

use promptforge_luacheck::parse;
use promptforge_syntax::{Analysis, ParseKind};

const FRONTMATTER: &str = "---\nname: t\ndescription: d\npromptforge: 0\n---\n";

/// A prompt whose body starts at line 6.
fn prompt(body: &str) -> String {
    format!("{FRONTMATTER}{body}")
}

/// `line:col: error[Kind]: message` for the body's diagnostics.
fn body_errors(text: &str) -> Vec<String> {
    let analysis = parse(text);
    render(text, &analysis, |k| {
        matches!(k, ParseKind::Structure | ParseKind::Lua)
    })
}

fn render(text: &str, analysis: &Analysis, keep: impl Fn(ParseKind) -> bool) -> Vec<String> {
    analysis
        .diagnostics
        .iter()
        .filter(|d| d.parse_kind().is_some_and(&keep))
        .map(|d| {
            let (line, col) = analysis.line_index.position(text, d.offset);
            format!("{line}:{col}: error[{}]: {}", d.code.name(), d.message)
        })
        .collect()
}

#[test]
fn a_valid_body_has_no_errors() {
    let text = prompt("\n# Title\n\n```lua shared\nx = 1\n```\n\n## A\n\n```lua\nreturn 1\n```\n\n### B\n\ntext\n");
    assert_eq!(parse(&text).diagnostics, vec![]);
}

#[test]
fn no_h1_is_reported_at_the_first_line_after_the_frontmatter() {
    let text = prompt("\n## A\n");
    assert_eq!(
        body_errors(&text),
        ["6:1: error[Structure]: a prompt has exactly one H1 title"]
    );
}

#[test]
fn anything_before_the_h1_is_reported_at_its_line() {
    let text = prompt("\n\nintro text\n# Title\n");
    assert_eq!(
        body_errors(&text),
        ["8:1: error[Structure]: a prompt has exactly one H1 title"]
    );
}

#[test]
fn a_second_h1_is_reported_at_its_line() {
    let text = prompt("# One\n## A\n# Two\n");
    assert_eq!(
        body_errors(&text),
        ["8:1: error[Structure]: a prompt has exactly one H1 title"]
    );
}

#[test]
fn a_skipped_level_names_both_levels() {
    let text = prompt("# T\n## A\n#### Deep\n");
    assert_eq!(
        body_errors(&text),
        ["8:1: error[Structure]: heading level skipped: \"Deep\" is an H4 under an H2"]
    );
}

#[test]
fn an_h3_right_under_the_h1_skips_a_level() {
    let text = prompt("# T\n### Child\n");
    assert_eq!(
        body_errors(&text),
        ["7:1: error[Structure]: heading level skipped: \"Child\" is an H3 under an H1"]
    );
}

#[test]
fn duplicate_siblings_name_the_earlier_line() {
    let text = prompt("# T\n## A\n### X\n## B\n### X\n## A\n");
    assert_eq!(
        body_errors(&text),
        ["11:1: error[Structure]: duplicate section \"A\": also at line 7"]
    );
}

#[test]
fn lua_shared_outside_the_h1_body_fails() {
    let text = prompt("# T\n## A\n```lua shared\nx = 1\n```\n");
    assert_eq!(
        body_errors(&text),
        ["8:1: error[Structure]: lua shared blocks belong to the H1 body"]
    );
}

#[test]
fn a_lua_syntax_error_is_at_the_file_line_with_luas_message() {
    let text = prompt("# T\n## A\n```lua\nlocal x = 1\nx = = 2\n```\n");
    assert_eq!(
        body_errors(&text),
        ["10:1: error[Lua]: unexpected symbol near '='"]
    );
    // The editor's range is the token Lua names: the second `=` of `x = = 2`.
    let analysis = promptforge_luacheck::parse(&text);
    let range = analysis.diagnostics[0].range.clone();
    let at = text.find("x = = 2").expect("the line") + 2;
    assert_eq!(range, at..at + 1);
    // A token the line does not hold (the end of the input) marks the whole line.
    let text = prompt(
        "# T
## A
```lua
local t = {
```
",
    );
    let analysis = promptforge_luacheck::parse(&text);
    assert!(
        analysis.diagnostics[0].message.contains("<eof>"),
        "{:?}",
        analysis.diagnostics
    );
    let start = analysis.diagnostics[0].range.start;
    assert!(text[..start].ends_with('\n'), "a whole line");
}

#[test]
fn a_break_as_first_content_takes_the_section_off_the_walk() {
    let text = prompt("# T\n## A\n\n---\n```lua\nreturn 1\n```\n## B\ntext\n---\n");
    let analysis = parse(&text);
    assert_eq!(analysis.diagnostics, vec![]);
    let sections = &analysis.document.sections;
    assert!(sections[0].off_walk);
    assert_eq!(sections[0].body.blocks.len(), 1);
    assert!(!sections[1].off_walk);
    assert!(sections[1].body.comment.is_some());
}

#[test]
fn nothing_below_a_comment_runs_or_compiles() {
    let text = prompt("# T\n## A\n```lua\nreturn 1\n```\n---\n```lua\nx = = 1\n```\n## B\n```lua\nreturn 2\n```\n");
    let analysis = parse(&text);
    assert_eq!(analysis.diagnostics, vec![]);
    assert_eq!(analysis.document.sections[0].body.blocks.len(), 1);
    assert_eq!(analysis.document.sections[1].body.blocks.len(), 1);
    assert_eq!(analysis.document.lua_blocks.len(), 2);
}

#[test]
fn on_the_h1_a_break_is_a_comment() {
    let text = prompt("# T\n---\n```lua\nreturn 1\n```\n## A\n");
    let analysis = parse(&text);
    assert_eq!(analysis.diagnostics, vec![]);
    assert!(analysis.document.h1_body.blocks.is_empty());
    assert!(analysis.document.h1_body.comment.is_some());
}

#[test]
fn a_heading_inside_a_fence_is_not_a_heading() {
    let text = prompt("# T\n```text\n# Not a title\n## Not a section\n```\n~~~lua\n# x\n~~~\n");
    let analysis = parse(&text);
    assert_eq!(analysis.diagnostics, vec![]);
    assert!(analysis.document.sections.is_empty());
}

#[test]
fn only_exact_lua_openers_at_column_one_are_executable() {
    let text = prompt("# T\n```python\nx = = 1\n```\n~~~lua\nx = = 1\n~~~\n````lua\nx = = 1\n````\n ```lua\nx = = 1\n ```\n```lua extra\nx = = 1\n```\n```lua shared\nok = 1\n```\n");
    let analysis = parse(&text);
    assert_eq!(analysis.diagnostics, vec![]);
    assert_eq!(analysis.document.lua_blocks.len(), 1);
    assert!(analysis.document.lua_blocks[0].shared);
}

#[test]
fn the_section_tree_nests_children() {
    let text = prompt("# T\n## A\n### A1\n#### A1a\n### A2\n## B\n");
    let analysis = parse(&text);
    let a = &analysis.document.sections[0];
    assert_eq!(&*a.heading.text, "A");
    assert_eq!(a.children.len(), 2);
    assert_eq!(a.children[0].children[0].heading.target(), "#### A1a");
    assert_eq!(analysis.document.sections[1].heading.text.as_ref(), "B");
    assert_eq!(
        analysis.document.title.as_ref().map(|h| &*h.text),
        Some("T")
    );
}

#[test]
fn crlf_and_bom_keep_positions() {
    let text = format!(
        "\u{feff}{}",
        prompt("# T\n## A\n```lua\nx = = 2\n```\n").replace('\n', "\r\n")
    );
    assert_eq!(
        body_errors(&text),
        ["9:1: error[Lua]: unexpected symbol near '='"]
    );
    let analysis = parse(&text);
    assert_eq!(analysis.document.lua_blocks[0].code(&text), "x = = 2\r\n");
}

#[test]
fn missing_or_unclosed_frontmatter_is_the_only_error() {
    for text in ["# T\n## A\n", "---\nname: t\n# T\n", ""] {
        let analysis = parse(text);
        let rendered = render(text, &analysis, |_| true);
        assert_eq!(
            rendered,
            ["1:1: error[Frontmatter]: a prompt starts with YAML frontmatter between two --- lines"],
            "{text:?}"
        );
    }
}

#[test]
fn a_lua_error_at_end_of_input_points_at_the_closing_fence() {
    let text = prompt("# T\n```lua\nfunction f()\n```\n");
    assert_eq!(
        body_errors(&text),
        ["9:1: error[Lua]: 'end' expected (to close 'function' at line 8) near <eof>"]
    );
}

#[test]
fn each_section_s_path_finds_it_in_the_tree_and_in_the_index() {
    let text = prompt(
        "# T\n\n## A\n\nIn A.\n\n### A1\n\n#### A1a\n\nIn A1a.\n\n### A2\n\n## B\n\n### B1\n\nIn B1.\n",
    );
    let analysis = parse(&text);
    let sections = promptforge_syntax::Sections::new(&analysis.document);
    let paths: Vec<(String, Vec<usize>)> = (0..sections.all().len())
        .map(|i| (sections.all()[i].heading.text.to_string(), sections.path(i)))
        .collect();
    let expected = [
        ("A", vec![0]),
        ("A1", vec![0, 0]),
        ("A1a", vec![0, 0, 0]),
        ("A2", vec![0, 1]),
        ("B", vec![1]),
        ("B1", vec![1, 0]),
    ];
    let expected: Vec<(String, Vec<usize>)> = expected
        .into_iter()
        .map(|(t, p)| (t.to_owned(), p))
        .collect();
    assert_eq!(paths, expected);
    for (index, (heading, path)) in paths.iter().enumerate() {
        assert_eq!(sections.at_path(path), Some(index));
        let section = analysis.document.section_at(path).expect("in the tree");
        assert_eq!(&*section.heading.text, heading.as_str());
    }
    let b1 = analysis.document.section_at(&[1, 0]).expect("B1");
    assert_eq!(&text[b1.body.prose[0].clone()], "In B1.");
    assert!(sections.path(99).is_empty());
    assert!(analysis.document.section_at(&[]).is_none());
}

#[test]
fn a_section_with_one_paragraph_and_two_blocks_holds_them_without_the_heap() {
    let one = "## A\n\nProse.\n\n```lua\nx = 1\n```\n\n```lua\ny = 2\n```\n";
    let three = "## B\n\nOne.\n\nTwo.\n\nThree.\n\n```lua\na = 1\n```\n\n```lua\nb = 2\n```\n\n```lua\nc = 3\n```\n";
    let text = prompt(&format!("\n# Title\n\n{one}\n{three}"));
    let analysis = parse(&text);
    let [a, b] = &analysis.document.sections[..] else {
        panic!("two sections: {:?}", analysis.document.sections);
    };
    assert_eq!(
        (a.body.prose.len(), a.body.blocks.as_slice()),
        (1, &[0, 1][..])
    );
    assert!(!a.body.prose.spilled() && !a.body.blocks.spilled());
    // More than fit inline are still all kept, in order.
    assert_eq!(&text[b.body.prose[2].clone()], "Three.");
    assert_eq!(b.body.blocks.as_slice(), &[2, 3, 4]);
}

#[test]
fn duplicates_are_siblings_of_one_level_and_text_each_naming_the_first() {
    // "# T" is line 7.
    let text = prompt(concat!(
        "\n# T\n\n",
        "## A\n\n",    // 9
        "### X\n\n",   // 11
        "### X\n\n",   // 13: duplicate of 11
        "## B\n\n",    // 15
        "### X\n\n",   // 17: another parent
        "#### X\n\n",  // 19: another level
        "## A\n\n",    // 21: duplicate of 9
        "#### Y\n\n",  // 23: skipped level
        "## A\n\n",    // 25: duplicate of 9
        "### X\n\n",   // 27: under the third A
        "##### Y\n\n", // 29: skipped level
        "### x\n\n",   // 31: another text
    ));
    assert_eq!(
        body_errors(&text),
        [
            "13:1: error[Structure]: duplicate section \"X\": also at line 11",
            "21:1: error[Structure]: duplicate section \"A\": also at line 9",
            "23:1: error[Structure]: heading level skipped: \"Y\" is an H4 under an H2",
            "25:1: error[Structure]: duplicate section \"A\": also at line 9",
            "29:1: error[Structure]: heading level skipped: \"Y\" is an H5 under an H3",
        ]
    );
}

#[test]
fn a_heading_both_skipped_and_duplicated_reports_the_skip_first() {
    let text = prompt("\n# T\n\n## A\n\n#### D\n\n#### D\n");
    assert_eq!(
        body_errors(&text),
        [
            "11:1: error[Structure]: heading level skipped: \"D\" is an H4 under an H2",
            "13:1: error[Structure]: heading level skipped: \"D\" is an H4 under an H2",
            "13:1: error[Structure]: duplicate section \"D\": also at line 11",
        ]
    );
}

#[test]
fn a_lua_block_never_closed_fails_at_its_opener_and_is_not_compiled() {
    // The rest of the file is its code: the headings below are not sections,
    // and Lua's message about them would only repeat the cause.
    let text = prompt("# T\n\n## A\n\n```lua\nreturn 1\n\n## B\n\nProse.\n");
    assert_eq!(
        body_errors(&text),
        ["10:1: error[Structure]: the lua block opened at line 10 is never closed"]
    );
    let analysis = parse(&text);
    assert_eq!(analysis.document.sections.len(), 1);
    assert_eq!(analysis.document.lua_blocks.len(), 1);
    assert!(!analysis.document.lua_blocks[0].closed);
    let opener = text.find("```lua").expect("opener");
    assert_eq!(
        analysis.diagnostics[0].range,
        opener..opener + "```lua".len()
    );
    // A `lua shared` block too, and an opener that is the file's last line.
    for (body, line) in [
        ("# T\n```lua shared\nfunction f() end\n## A\n", 7),
        ("# T\n\n```lua", 8),
        ("# T\n\n```lua\n", 8),
        ("# T\n\n```lua\r\nreturn 1\r\n", 8),
        ("# T\n\n```lua\rreturn 1\r", 8),
    ] {
        let text = prompt(body);
        assert_eq!(
            body_errors(&text),
            [format!(
                "{line}:1: error[Structure]: the lua block opened at line {line} is never closed"
            )],
            "{body:?}"
        );
    }
}

#[test]
fn blanks_after_the_opener_or_the_closing_backticks_and_longer_closers_are_accepted() {
    for body in [
        "# T\n```lua  \t\nreturn 1\n```\n",
        "# T\n```lua shared \nx = 1\n```\n",
        "# T\n```lua\nreturn 1\n``` \t\n",
        "# T\n```lua\nreturn 1\n`````\n",
        "# T\n```lua\nreturn 1\n````  \n## A\n",
        "# T\n```lua\nreturn 1\n```",
    ] {
        let text = prompt(body);
        let analysis = parse(&text);
        assert_eq!(analysis.diagnostics, vec![], "{body:?}");
        assert_eq!(analysis.document.lua_blocks.len(), 1, "{body:?}");
        assert!(analysis.document.lua_blocks[0].closed, "{body:?}");
    }
    // With blanks after it, an opener left open is still an executable block's.
    let text = prompt("# T\n```lua \t\nreturn 1\n");
    assert_eq!(
        body_errors(&text),
        ["7:1: error[Structure]: the lua block opened at line 7 is never closed"]
    );
}

#[test]
fn other_fences_never_closed_stay_prose() {
    for opener in [
        "```",
        "```python",
        "~~~lua",
        "````lua",
        " ```lua",
        "```lua extra",
        "```Lua",
    ] {
        let text = prompt(&format!("# T\n## A\n{opener}\nx = = 1\n## B\n"));
        let analysis = parse(&text);
        assert_eq!(analysis.diagnostics, vec![], "{opener:?}");
        assert!(analysis.document.lua_blocks.is_empty(), "{opener:?}");
    }
}

#[test]
fn a_lua_block_never_closed_under_a_comment_fails_too() {
    // It does not run, but the headings it swallowed are lost all the same.
    let text = prompt("# T\n## A\ntext\n---\n```lua\nreturn 1\n## B\n");
    assert_eq!(
        body_errors(&text),
        ["10:1: error[Structure]: the lua block opened at line 10 is never closed"]
    );
    assert!(parse(&text).document.lua_blocks.is_empty());
}

#[test]
fn a_lua_shared_block_never_closed_in_a_section_breaks_both_rules() {
    let text = prompt("# T\n## A\n```lua shared\nx = 1\n");
    assert_eq!(
        body_errors(&text),
        [
            "8:1: error[Structure]: the lua block opened at line 8 is never closed",
            "8:1: error[Structure]: lua shared blocks belong to the H1 body",
        ]
    );
}

#[test]
fn a_heading_needs_a_title() {
    let text = prompt("# T\n\n##\n\n###   \n\n##\t\n\n## ##\n\n## B\n");
    assert_eq!(
        body_errors(&text),
        [
            "8:1: error[Structure]: a heading needs a title",
            "10:1: error[Structure]: a heading needs a title",
            "12:1: error[Structure]: a heading needs a title",
            "14:1: error[Structure]: a heading needs a title",
        ]
    );
    // Each still opens its section; untitled siblings are not duplicates.
    let analysis = parse(&text);
    let sections = &analysis.document.sections;
    assert_eq!(sections.len(), 4);
    assert_eq!(sections[0].children.len(), 1);
    assert_eq!(&*sections[3].heading.text, "B");
    let line = text.find("###   ").expect("the H3");
    let untitled = &analysis.diagnostics[1];
    assert_eq!(untitled.range, line..line + "###   ".len());
}

#[test]
fn an_untitled_h1_is_still_the_title() {
    let text = prompt("\n#\n\n## A\n");
    assert_eq!(
        body_errors(&text),
        ["7:1: error[Structure]: a heading needs a title"]
    );
    let analysis = parse(&text);
    assert_eq!(analysis.document.title.as_ref().map(|h| h.level), Some(1));
    assert_eq!(analysis.document.sections.len(), 1);
    // A second one breaks the one-H1 rule first.
    let text = prompt("# T\n#  \n");
    assert_eq!(
        body_errors(&text),
        [
            "7:1: error[Structure]: a prompt has exactly one H1 title",
            "7:1: error[Structure]: a heading needs a title",
        ]
    );
}

#[test]
fn an_untitled_heading_is_checked_for_its_level_first() {
    let text = prompt("# T\n## A\n####\n");
    assert_eq!(
        body_errors(&text),
        [
            "8:1: error[Structure]: heading level skipped: \"\" is an H4 under an H2",
            "8:1: error[Structure]: a heading needs a title",
        ]
    );
    // Hash lines that are not headings, or inside a fence, need nothing.
    let text = prompt("# T\n#hashtag\n####### seven\n```text\n#\n```\n");
    assert_eq!(parse(&text).diagnostics, vec![]);
}
