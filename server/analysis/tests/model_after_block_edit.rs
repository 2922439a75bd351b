//! The model after a keystroke in a block, shifted from the previous model,
//! equals the model built from scratch, whatever the keystrokes.

use std::sync::Arc;

use promptforge_analysis::{FactsCache, Model};
use promptforge_syntax::lua::{LuaCompiler, LuaSyntaxError};
use promptforge_syntax::ParsedFile;
use proptest::prelude::*;

/// Every block compiles: the model reads facts, not Lua's syntax errors.
struct AllCompiles;

impl LuaCompiler for AllCompiles {
    fn check(&self, _code: &str) -> Result<(), LuaSyntaxError> {
        Ok(())
    }
}

const HEAD: &str = "---\nname: edits\ndescription: Keystrokes in blocks\npromptforge: 0\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n---\n\n# Edits\n\n```lua shared\nfunction helper() return 1 end\n```\n\n";

fn prompt() -> String {
    let mut text = HEAD.to_owned();
    for i in 0..12 {
        text.push_str(&format!(
            "## S{i}\n\nProse {i}.\n\n```lua\nlocal page = tools.call('fetch', {{ url = args }})\nmodels.use('writer')\njump('## S{i}')\n```\n\n### C{i}\n\n```lua\ntools.add_local('t{i}', 'd', {{}}, function() end)\nreturn tools.call('t{i}')\n```\n\n```text\nnot lua {i}\n```\n\n"
        ));
    }
    text
}

/// What a keystroke types in a block: names that resolve or not, and the
/// start of calls whose problems move.
const TYPED: &[&str] = &[
    "x",
    " ",
    "'",
    "(",
    ")",
    "s",
    "1",
    "## S",
    "writer",
    "fetch",
    "tools.call('nope')",
    "models.use('nope')",
    "jump('## Z')",
    "tools.add_local('n', 'd', {}, f)",
    "",
    "é",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_model_after_a_block_edit_equals_a_model_built_again(
        edits in prop::collection::vec(
            (0.0..=1.0f64, 0.0..=1.0f64, 0usize..5, prop::sample::select(TYPED)),
            1..12,
        )
    ) {
        let mut file = ParsedFile::new(prompt(), Arc::new(AllCompiles));
        let cache = FactsCache::default();
        let mut model = Model::build(file.text(), &file.analysis().document, &cache);
        for (which, at, delete, typed) in edits {
            let text = file.text();
            // Inside a fence's code (Lua or text), on one line.
            let fences: Vec<(usize, usize)> = text
                .match_indices("```")
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
                .chunks(2)
                .filter_map(|pair| match pair {
                    [open, close] => Some((text[*open..].find('\n')? + open + 1, *close)),
                    _ => None,
                })
                .collect();
            let (start, end) = fences[(which * fences.len() as f64) as usize % fences.len()];
            let mut offset = (start + (at * (end - start) as f64) as usize).min(end.saturating_sub(1));
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
            let mut to = (offset + delete).min(line_end);
            while !text.is_char_boundary(to) {
                to -= 1;
            }
            let generation = file.generation();
            file.edit(offset..to, typed).expect("edit within bounds");
            let document = &file.analysis().document;
            let fresh = Model::build(file.text(), document, &FactsCache::default());
            let shifted = file
                .last_block_edit()
                .filter(|(from, _)| *from == generation)
                .and_then(|(_, edit)| model.clone().after_block_edit(file.text(), document, &cache, &edit));
            if let Some(shifted) = &shifted {
                prop_assert_eq!(shifted, &fresh, "text: {:?}", file.text());
            }
            model = shifted.unwrap_or_else(|| Model::build(file.text(), document, &cache));
            prop_assert_eq!(&model, &fresh);
        }
    }
}

#[test]
fn a_keystroke_in_a_block_shifts_the_model_and_one_that_registers_a_tool_does_not() {
    let mut file = ParsedFile::new(prompt(), Arc::new(AllCompiles));
    let cache = FactsCache::default();
    let model = Model::build(file.text(), &file.analysis().document, &cache);
    // An unknown label typed in S3's block: one new problem, found by the shift.
    let at = file
        .text()
        .find("models.use('writer')\njump('## S3')")
        .expect("S3")
        + "models.use('writer".len();
    file.edit(at..at, "x").expect("edit within bounds");
    let (_, edit) = file.last_block_edit().expect("a block edit");
    let document = &file.analysis().document;
    let shifted = model
        .clone()
        .after_block_edit(file.text(), document, &cache, &edit)
        .expect("the model shifts");
    assert_eq!(
        shifted,
        Model::build(file.text(), document, &FactsCache::default())
    );
    assert_eq!(shifted.problems.len(), model.problems.len() + 1);

    // Renaming a registered local tool changes other blocks' problems: built again.
    let at = file.text().find("tools.add_local('t5'").expect("C5") + "tools.add_local('t".len();
    file.edit(at..at, "z").expect("edit within bounds");
    let (_, edit) = file.last_block_edit().expect("a block edit");
    let document = &file.analysis().document;
    assert_eq!(
        shifted.after_block_edit(file.text(), document, &cache, &edit),
        None
    );
}
