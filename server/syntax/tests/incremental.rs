//! Incremental analysis equals a parse from scratch, whatever the edits.

use promptforge_luacheck::parse;
use proptest::prelude::*;

const SEED: &str = "---\nname: page-fetcher\ndescription: Fetches a page\npromptforge: 0\nplugins:\n  - promptforge/web\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n---\n\n# Page fetcher\n\n```lua shared\nfunction label(t) return t.name end\n```\n\n```lua\nmodels.default('writer')\n```\n\n## Fetch\n\nProse about fetching.\n\n```lua\nreturn tools.call('fetch', { url = args })\n```\n\n### Helper\n---\n```lua\nreturn 1\n```\n\n## Other\n\n~~~\n# not a heading\n~~~\n";

/// Fragments that change the block structure, the YAML and the Lua.
const FRAGMENTS: &[&str] = &[
    "---\n",
    "```lua\n",
    "```lua shared\n",
    "```\n",
    "~~~\n",
    "# h\n",
    "## A\n",
    "### B\n",
    "\r\n",
    "\r",
    "\n",
    "é",
    "😀",
    "x",
    "=",
    " ",
    "end",
    "tools:\n  a: b/c/d\n",
    "name: X\n",
    "- acme/x\n",
    "```",
    "#",
    "#\n",
    "## \n",
    "```lua \n",
    "\u{feff}",
    "local = 1\n",
    "\t",
];

#[derive(Debug, Clone)]
struct RandomEdit {
    at: f64,
    delete: usize,
    insert: String,
}

fn random_edit() -> impl Strategy<Value = RandomEdit> {
    (
        0.0..=1.0f64,
        prop_oneof![Just(0usize), 0usize..4, 0usize..40],
        prop::collection::vec(prop::sample::select(FRAGMENTS), 0..3),
    )
        .prop_map(|(at, delete, parts)| RandomEdit {
            at,
            delete,
            insert: parts.concat(),
        })
}

fn floor_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn incremental_analysis_equals_a_fresh_parse(edits in prop::collection::vec(random_edit(), 1..12)) {
        let mut file = promptforge_luacheck::parsed(SEED.to_owned());
        for edit in edits {
            let text = file.text();
            let start = floor_boundary(text, (edit.at * text.len() as f64) as usize);
            let end = floor_boundary(text, start + edit.delete);
            file.edit(start..end, &edit.insert).expect("edit within bounds");
            let fresh = parse(file.text());
            prop_assert_eq!(file.analysis(), &fresh, "text: {:?}", file.text());
            let fresh_tree = promptforge_luacheck::parsed(file.text().to_owned());
            let incremental_sexp = file.tree().map(|t| t.root_node().to_sexp());
            let fresh_sexp = fresh_tree.tree().map(|t| t.root_node().to_sexp());
            prop_assert_eq!(incremental_sexp, fresh_sexp);
        }
    }
}

/// A prompt long enough that an edit leaves most block items to be reused.
fn long_seed() -> String {
    let mut text = SEED.to_owned();
    for i in 0..30 {
        text.push_str(&format!(
            "## S{i}\n\nProse {i}.\nMore prose.\n\n```lua\nlocal v = {i}\n```\n\n### C{i}\n---\n```lua\nreturn {i}\n```\n***\n```text\n# not a heading\n```\n"
        ));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn incremental_reuse_in_a_long_prompt_equals_a_fresh_parse(edits in prop::collection::vec(random_edit(), 1..10)) {
        let mut file = promptforge_luacheck::parsed(long_seed());
        for edit in edits {
            let text = file.text();
            let start = floor_boundary(text, (edit.at * text.len() as f64) as usize);
            let end = floor_boundary(text, start + edit.delete);
            file.edit(start..end, &edit.insert).expect("edit within bounds");
            prop_assert_eq!(file.analysis(), &parse(file.text()), "text: {:?}", file.text());
        }
    }
}

#[test]
fn edits_outside_the_text_are_refused_and_change_nothing() {
    let mut file = promptforge_luacheck::parsed("ab".to_owned());
    assert!(file.edit(1..5, "x").is_err());
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 2..1;
    assert!(file.edit(backwards, "x").is_err());
    let mut multibyte = promptforge_luacheck::parsed("é".to_owned());
    assert!(multibyte.edit(1..1, "x").is_err());
    assert_eq!(file.text(), "ab");
    assert_eq!(multibyte.text(), "é");
}

#[test]
fn an_edit_recompiles_only_the_changed_block_and_keeps_the_frontmatter() {
    let mut file = promptforge_luacheck::parsed(SEED.to_owned());
    let first = file.last_work();
    assert!(first.frontmatter_validated);
    assert_eq!(first.lua_blocks_compiled, 4);

    let at = SEED.find("return 1").expect("block") + "return ".len();
    file.edit(at..at + 1, "2").expect("edit");
    let work = file.last_work();
    assert!(!work.frontmatter_validated);
    assert_eq!(work.lua_blocks_compiled, 1);

    let prose = file.text().find("Prose about").expect("prose");
    file.edit(prose..prose, "More. ").expect("edit");
    assert_eq!(file.last_work().lua_blocks_compiled, 0);
    assert!(!file.last_work().frontmatter_validated);

    let name = file.text().find("page-fetcher").expect("name");
    file.edit(name..name + 4, "site").expect("edit");
    let work = file.last_work();
    assert!(work.frontmatter_validated);
    assert_eq!(work.lua_blocks_compiled, 0);
    assert_eq!(file.analysis(), &parse(file.text()));
}

/// What a keystroke types inside a block's code: Lua, and what could close a
/// fence or open another.
const CODE_FRAGMENTS: &[&str] = &[
    "x",
    " ",
    "end",
    "(",
    "'",
    "```",
    "~~~",
    "``",
    "   ```",
    "#",
    "## A",
    "é",
    "local = 1",
    "",
    "\t",
    "-- ",
    "]]",
    "[[",
    "😀",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn keystrokes_inside_a_block_equal_a_fresh_parse(
        edits in prop::collection::vec(
            (0.0..=1.0f64, 0.0..=1.0f64, 0usize..6, prop::sample::select(CODE_FRAGMENTS)),
            1..16,
        )
    ) {
        let mut file = promptforge_luacheck::parsed(long_seed());
        for (which, at, delete, insert) in edits {
            let text = file.text();
            let blocks = &file.analysis().document.lua_blocks;
            let Some(block) = blocks.get((which * blocks.len() as f64) as usize % blocks.len().max(1)) else {
                break;
            };
            let code = block.code_range.clone();
            let start = floor_boundary(text, code.start + (at * code.len() as f64) as usize);
            let line_end = text[start..].find(['\n', '\r']).map_or(text.len(), |i| start + i);
            let end = floor_boundary(text, (start + delete).min(line_end));
            file.edit(start..end, insert).expect("edit within bounds");
            prop_assert_eq!(file.analysis(), &parse(file.text()), "text: {:?}", file.text());
        }
    }
}

#[test]
fn a_keystroke_in_a_block_shifts_the_analysis_and_compiles_that_block_alone() {
    let mut file = promptforge_luacheck::parsed(long_seed());
    let at = file.text().find("local v = 7").expect("block of S7") + "local v".len();
    let before = file.generation();
    file.edit(at..at, "x").expect("edit within bounds");
    let work = file.last_work();
    assert!(work.shifted);
    assert_eq!(work.lua_blocks_compiled, 1);
    let (from, edit) = file.last_block_edit().expect("a block edit");
    assert_eq!(from, before);
    assert_eq!(file.generation(), before + 1);
    let index = file
        .analysis()
        .document
        .lua_blocks
        .iter()
        .position(|b| b.code_range.contains(&at));
    assert_eq!(edit.block, index);
    assert_eq!(file.analysis(), &parse(file.text()));

    // A syntax error typed in a block is that block's, found without a rebuild.
    let at = file.text().find("return 12").expect("block of C12") + "return 12".len();
    file.edit(at..at, " +").expect("edit within bounds");
    assert!(file.last_work().shifted);
    assert_eq!(file.analysis(), &parse(file.text()));
    assert!(file
        .analysis()
        .diagnostics
        .iter()
        .any(|d| d.message.contains("unexpected symbol") || d.message.contains("near")));

    // In a fence that does not run, the edit shifts the analysis and compiles nothing.
    let at = file.text().find("```text\n# not").expect("a text fence") + "```text\n# n".len();
    file.edit(at..at, "x").expect("edit within bounds");
    let work = file.last_work();
    assert!(work.shifted);
    assert_eq!(work.lua_blocks_compiled, 0);
    assert_eq!(file.last_block_edit().map(|(_, e)| e.block), Some(None));
    assert_eq!(file.analysis(), &parse(file.text()));
}

#[test]
fn a_keystroke_that_closes_a_fence_or_breaks_a_line_is_analysed_whole() {
    let mut file = promptforge_luacheck::parsed(long_seed());
    let at = file.text().find("local v = 3").expect("block of S3");
    file.edit(at..at + "local v = 3".len(), "```")
        .expect("edit within bounds");
    assert!(!file.last_work().shifted);
    assert_eq!(file.last_block_edit(), None);
    assert_eq!(file.analysis(), &parse(file.text()));
    let at = file.text().find("local v = 5").expect("block of S5");
    file.edit(at..at, "a\n").expect("edit within bounds");
    assert!(!file.last_work().shifted);
    assert_eq!(file.analysis(), &parse(file.text()));
}

#[test]
fn keystrokes_in_a_lua_block_never_closed_are_analysed_afresh() {
    // Its code is the rest of the file and is not compiled: a keystroke in it
    // is no block edit (that would compile it), and gives what a fresh parse gives.
    let mut file = promptforge_luacheck::parsed(format!(
        "{}```lua\nreturn 1\n\n## Swallowed\n\nProse.\n",
        long_seed()
    ));
    for (needle, insert) in [("return 1", "x"), ("## Swallowed", " ("), ("Prose.", "``")] {
        let at = file.text().rfind(needle).expect("in the text") + 2;
        file.edit(at..at, insert).expect("edit within bounds");
        assert!(!file.last_work().shifted);
        assert_eq!(file.analysis(), &parse(file.text()));
        let unclosed = file
            .analysis()
            .diagnostics
            .iter()
            .filter(|d| matches!(d.code, promptforge_syntax::Code::UnclosedLuaBlock { .. }));
        assert_eq!(unclosed.count(), 1);
    }
    // Closing it with a keystroke compiles it.
    let end = file.text().len();
    file.edit(end..end, "```").expect("edit within bounds");
    assert_eq!(file.analysis(), &parse(file.text()));
    assert!(file
        .analysis()
        .diagnostics
        .iter()
        .all(|d| !matches!(d.code, promptforge_syntax::Code::UnclosedLuaBlock { .. })));
}
