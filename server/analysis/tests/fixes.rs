//! The fixes the semantic layer attaches to diagnostics, chosen by code, and a
//! check that nothing reacting to a diagnostic reads the text of a message.

use std::fs;
use std::path::{Path, PathBuf};

use promptforge_analysis::{diagnostics, FactsCache, Model};
use promptforge_engine::requirements::{CatalogView, PluginState, PluginView, ToolInfo};
use promptforge_syntax::{Code, Diagnostic};

fn found(text: &str, view: &CatalogView) -> Vec<Diagnostic> {
    let analysis = promptforge_syntax::parse(text);
    let model = Model::build(&analysis.document, &FactsCache::default());
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
        .find(|d| matches!(&d.code, Code::MissingPlugin { id } if id == "acme/gone"))
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

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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
        "server/analysis/tests/fixes.rs",
    ] {
        let source = fs::read_to_string(workspace().join(file)).expect("readable");
        for fragment in &fragments {
            // This test names one fragment itself, to prove the scan finds it.
            let own = file.ends_with("tests/fixes.rs")
                && fragment == "is declared more than once under plugins";
            assert!(
                own || !source.contains(fragment.as_str()),
                "{file} contains message text: {fragment:?}"
            );
        }
    }
}
