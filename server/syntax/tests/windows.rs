//! A text analysed in windows (`check` of a large prompt) gives the analysis one
//! tree of the whole text gives, whatever the text and wherever it is cut.

use std::sync::Arc;

use promptforge_syntax::{Analysis, Indexed, ParsedFile, Sections};
use proptest::prelude::*;

/// Blocks that change the structure, hide headings in fences (or in a lua block
/// never closed), have no title, or fail to compile.
const BLOCKS: &[&str] = &[
    "# Title\n",
    "## A\n",
    "### B\n",
    "#### C\n",
    "## A\r\n",
    "#no heading\n",
    "Prose line.\n",
    "Prose\nover two lines.\n",
    "\n",
    "\n\n",
    "---\n",
    "***\n",
    "```lua\nreturn 1\n```\n",
    "```lua\nlocal = 1\n```\n",
    "```lua shared\nfunction f() end\n```\n",
    "```lua\nif x then\n",
    "```lua \t\n",
    "```lua shared\n",
    "```\n",
    "`````\n",
    "``` \t\n",
    "#\n",
    "## \n",
    "###\t\n",
    "```text\n# not a heading\n```\n",
    "~~~\n## hidden\n~~~\n",
    "````\n```\n# hidden\n```\n````\n",
    "  ## indented\n",
    "é😀\n",
    "# a\n## b\n### c\n##### skipped\n",
];

const FRONTMATTERS: &[&str] = &[
    "---\nname: w\npromptforge: 0\n---\n",
    "\u{feff}---\nname: w\n# comment\npromptforge: 0\n---\n\n",
    "---\nname: [\n---\n",
    "---\r\nname: w\r\npromptforge: 0\r\n---\r\n",
    "no frontmatter\n",
    "---\nname: w\n# comment\n## two\n",
];

fn text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(FRONTMATTERS),
        prop::collection::vec(prop::sample::select(BLOCKS), 0..60),
    )
        .prop_map(|(head, blocks)| format!("{head}{}", blocks.concat()))
}

fn in_one_tree(text: &str) -> Analysis {
    promptforge_luacheck::parsed(text.to_owned()).into_analysis()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn an_analysis_in_windows_equals_one_in_one_tree(text in text(), window in prop::sample::select(&[8usize, 30, 64, 200][..])) {
        let (windowed, back) = ParsedFile::analyse_once_in_windows(
            text.clone(),
            Arc::clone(&promptforge_luacheck::compiler()),
            window,
        );
        prop_assert_eq!(&back, &text);
        prop_assert_eq!(windowed, in_one_tree(&text), "text: {:?}", text);
    }
}

/// What indexing once keeps of the analysis of one tree, with the index built
/// from its section tree.
fn indexed_from_one_tree(text: &str) -> Indexed {
    let analysis = in_one_tree(text);
    let sections = Sections::new(&analysis.document);
    Indexed {
        diagnostics: analysis.diagnostics,
        frontmatter: analysis.document.frontmatter,
        lua_blocks: analysis.document.lua_blocks,
        line_index: analysis.line_index,
        sections,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// The index built as the body is read, with no tree, is the tree's.
    #[test]
    fn an_index_built_while_reading_equals_the_trees(text in text(), window in prop::sample::select(&[8usize, 30, 64, 200, 1 << 20][..])) {
        let (indexed, back) = ParsedFile::index_once_in_windows(
            text.clone(),
            Arc::clone(&promptforge_luacheck::compiler()),
            window,
        );
        prop_assert_eq!(&back, &text);
        prop_assert_eq!(indexed, indexed_from_one_tree(&text), "text: {:?}", text);
    }
}

#[test]
fn a_large_prompt_analysed_once_equals_one_tree() {
    let mut text = String::from("---\nname: w\npromptforge: 0\n---\n\n# T\n\n");
    for i in 0..8000 {
        text.push_str(&format!(
            "## S{i}\n\nProse.\n\n```lua\nreturn tools.call('x', {{ n = {i} }})\n```\n\n"
        ));
        if i % 500 == 0 {
            text.push_str("```lua\nlocal = 1\n```\n\n");
        }
    }
    assert!(text.len() > 2 * 256 * 1024);
    let (once, _) = ParsedFile::analyse_once(text.clone(), promptforge_luacheck::compiler());
    assert_eq!(once, in_one_tree(&text));
    let lua_errors = once
        .diagnostics
        .iter()
        .filter(|d| matches!(d.code, promptforge_syntax::Code::LuaSyntax { .. }))
        .count();
    assert_eq!(lua_errors, 16);
    let (indexed, _) = ParsedFile::index_once(text.clone(), promptforge_luacheck::compiler());
    assert_eq!(indexed, indexed_from_one_tree(&text));
    assert_eq!(indexed.sections.all().len(), 8000);
}
