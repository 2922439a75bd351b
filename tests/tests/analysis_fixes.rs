//! The fixes the semantic layer attaches to diagnostics, chosen by code, and a
//! check that nothing reacting to a diagnostic reads the text of a message.

use std::fs;
use std::path::PathBuf;

use promptforge_analysis::requirements::{CatalogView, PluginState, PluginView, ToolInfo};
use promptforge_analysis::{diagnostics, FactsCache, Model};
use promptforge_syntax::{Code, Diagnostic};

fn found(text: &str, view: &CatalogView) -> Vec<Diagnostic> {
    let analysis = promptforge_luacheck::parse(text);
    let model = Model::build(text, &analysis.document, &FactsCache::default());
    diagnostics(text, &analysis, &model, view)
}

fn apply(text: &str, diagnostic: &Diagnostic) -> String {
    let fix = diagnostic.fixes.first().expect("a fix");
    let mut out = text.to_owned();
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    for edit in edits {
        out.replace_range(edit.range, &edit.new_text);
    }
    out
}

fn prompt(frontmatter: &str) -> String {
    format!("---\nname: p\ndescription: d\npromptforge: 0\n{frontmatter}---\n\n# T\n")
}

fn web(paths: &[&str]) -> CatalogView {
    let tools = paths
        .iter()
        .map(|path| ToolInfo {
            path: (*path).to_owned(),
            wire_name: path.rsplit('/').next().unwrap_or_default().to_owned(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
            untrusted: true,
            structured: false,
        })
        .collect();
    CatalogView {
        plugins: vec![PluginView {
            id: "promptforge/web".to_owned(),
            state: PluginState::Ready(std::sync::Arc::new(tools)),
            conflicts: Vec::new(),
        }],
        ..CatalogView::default()
    }
}

#[test]
fn an_undeclared_plugin_of_a_slot_is_added_to_plugins() {
    let text = prompt("tools:\n  get: acme/gone/x\n");
    let all = found(&text, &CatalogView::default());
    let missing = all
        .iter()
        .find(|d| matches!(&d.code, Code::UndeclaredPlugin { id, .. } if id == "acme/gone"))
        .expect("the slot's Plugin is missing");
    assert!(apply(&text, missing).contains("plugins:\n  - acme/gone\ntools:"));
}

#[test]
fn an_unknown_path_is_replaced_with_the_nearest() {
    let text = prompt("plugins: [promptforge/web]\ntools:\n  get: \"promptforge/web/fecth\"\n");
    let all = found(&text, &web(&["promptforge/web/fetch"]));
    let unknown = all
        .iter()
        .find(|d| matches!(d.code, Code::UnknownToolPath { .. }))
        .expect("an unknown path");
    assert!(apply(&text, unknown).contains("get: \"promptforge/web/fetch\"\n"));
}

#[test]
fn a_duplicate_plugin_is_removed_and_a_capitalised_name_lowercased() {
    let text = prompt("plugins: [promptforge/web, promptforge/web]\n");
    let all = found(&text, &web(&[]));
    let twice = all
        .iter()
        .find(|d| matches!(d.code, Code::PluginDeclaredTwice { .. }))
        .expect("a duplicate");
    assert!(apply(&text, twice).contains("plugins: [promptforge/web]\n"));
    let text = prompt("").replace("name: p", "name: Pager");
    let all = found(&text, &CatalogView::default());
    let name = all
        .iter()
        .find(|d| matches!(d.code, Code::InvalidPromptName { .. }))
        .expect("a capitalised name");
    assert!(apply(&text, name).contains("name: pager\n"));
}

#[test]
fn an_optional_plugin_backing_a_slot_loses_its_optional() {
    let text = prompt("plugins:\n  - ref: acme/x\n    optional: true\ntools:\n  a: acme/x/t\n");
    let all = found(&text, &CatalogView::default());
    let optional = all
        .iter()
        .find(|d| matches!(d.code, Code::SlotNeedsRequiredPlugin { .. }))
        .expect("the optional rule");
    assert!(!apply(&text, optional).contains("optional"));
}

#[test]
fn a_lua_block_never_closed_is_closed_before_the_heading_it_swallowed() {
    let text = format!("{}\n## A\n\n```lua\nreturn 1\n\n## B\n", prompt(""));
    let all = found(&text, &CatalogView::default());
    let unclosed = all
        .iter()
        .find(|d| matches!(d.code, Code::UnclosedLuaBlock { line: 11 }))
        .expect("the block is never closed");
    assert_eq!(
        unclosed.fixes[0].title,
        "Close the block with ``` at line 13"
    );
    let fixed = apply(&text, unclosed);
    assert!(
        fixed.ends_with("```lua\nreturn 1\n```\n\n## B\n"),
        "{fixed}"
    );
    assert_eq!(found(&fixed, &CatalogView::default()), vec![]);
}

fn workspace() -> PathBuf {
    promptforge_tests::workspace_root()
}

/// The fixed texts of the message functions: each string literal, cut at its
/// `{placeholders}`, the pieces long enough to be recognisable.
fn message_fragments() -> Vec<String> {
    let mut fragments = Vec::new();
    for file in [
        "server/syntax/src/messages.rs",
        "server/syntax/src/frontmatter/messages.rs",
    ] {
        let source = fs::read_to_string(workspace().join(file)).expect("the messages are readable");
        let code: String = source
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for literal in code.split('"').skip(1).step_by(2) {
            for piece in literal.split(['{', '}']) {
                let piece = piece.trim();
                if piece.len() >= 16 && piece.contains(' ') {
                    fragments.push(piece.to_owned());
                }
            }
        }
    }
    fragments
}

#[test]
fn code_actions_and_the_tests_of_fixes_name_codes_not_message_text() {
    let fragments = message_fragments();
    assert!(fragments.len() > 50, "{} fragments", fragments.len());
    assert!(fragments
        .iter()
        .any(|f| f.contains("is declared more than once under plugins")));
    for file in [
        "server/analysis/src/fixes.rs",
        "server/lsp/src/features/code_actions.rs",
        "tests/tests/analysis_fixes.rs",
    ] {
        let source = fs::read_to_string(workspace().join(file)).expect("readable");
        for fragment in &fragments {
            // This test names one fragment itself, to prove the scan finds it.
            let own = file.ends_with("analysis_fixes.rs")
                && fragment == "is declared more than once under plugins";
            assert!(
                own || !source.contains(fragment.as_str()),
                "{file} contains message text: {fragment:?}"
            );
        }
    }
}

#[test]
fn a_name_with_a_space_is_renamed_to_a_valid_one_or_not_at_all() {
    // Issue 23, trap 6: "Lowercase to three errors" was still invalid.
    let text = prompt("").replace("name: p", "name: Three Errors");
    let all = found(&text, &CatalogView::default());
    let name = all
        .iter()
        .find(|d| matches!(d.code, Code::InvalidPromptName { .. }))
        .expect("an invalid name");
    assert_eq!(name.fixes[0].title, "Rename to three-errors");
    assert!(apply(&text, name).contains("name: three-errors\n"));
    let text = prompt("").replace("name: p", "name: \"!!\"");
    let all = found(&text, &CatalogView::default());
    let name = all
        .iter()
        .find(|d| matches!(d.code, Code::InvalidPromptName { .. }))
        .expect("an invalid name");
    assert!(
        name.fixes.is_empty(),
        "no valid name to offer: {:?}",
        name.fixes
    );
}

#[test]
fn a_mistyped_key_or_label_is_replaced_with_the_one_near_it() {
    // Issue 23, item 8: "did you mean" where one is near, as a fix; the spec's
    // messages, which list every valid choice, stay as they are.
    let text = prompt("descriptoin: x\n");
    let all = found(&text, &CatalogView::default());
    let unknown = all
        .iter()
        .find(|d| matches!(d.code, Code::UnknownField { .. }))
        .expect("an unknown key");
    assert_eq!(unknown.fixes[0].title, "Replace with description");
    assert!(apply(&text, unknown).contains("\ndescription: x\n"));

    let text = format!(
        "{}\n```lua\nreturn models.get('writr')\n```\n",
        prompt("models:\n  writer: {}\n  reader: {}\n")
    );
    let all = found(&text, &CatalogView::default());
    let label = all
        .iter()
        .find(|d| matches!(d.code, Code::UndeclaredModelLabel { .. }))
        .expect("an undeclared label");
    assert_eq!(label.fixes[0].title, "Replace with writer");
    assert!(apply(&text, label).contains("models.get('writer')"));

    // Nothing near: no fix.
    let text = prompt("zzz: 1\n");
    let all = found(&text, &CatalogView::default());
    let unknown = all
        .iter()
        .find(|d| matches!(d.code, Code::UnknownField { .. }))
        .expect("an unknown key");
    assert!(unknown.fixes.is_empty(), "{:?}", unknown.fixes);
}
