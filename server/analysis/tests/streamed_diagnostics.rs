//! The diagnostics `check` makes with the Lua facts read in batches equal the
//! editor's, made from the whole model, whatever the prompt and the catalog.

use std::sync::Arc;

use promptforge_analysis::requirements::{CatalogView, PluginState, PluginView, ToolInfo};
use promptforge_analysis::{diagnostics, streamed_diagnostics, FactsCache, Model, Parsed};
use promptforge_syntax::lua::{LuaCompiler, LuaSyntaxError};
use promptforge_syntax::{Code, Diagnostic, ParsedFile, Sections};
use proptest::prelude::*;

/// Every block compiles: the checks read facts, not Lua's syntax errors.
struct AllCompiles;

impl LuaCompiler for AllCompiles {
    fn check(&self, _code: &str) -> Result<(), LuaSyntaxError> {
        Ok(())
    }
}

const HEAD: &str = "---\nname: streamed\ndescription: d\npromptforge: 0\nplugins:\n  - acme/kit\ntools:\n  fetch: acme/kit/fetch\n  gone: acme/kit/gone\nmodels:\n  writer: {}\n---\n\n# Streamed\n\n";

/// The pieces a block is made of: calls every check and the unbound slots
/// read, local tools registered under literal and computed aliases, targets.
const CALLS: [&str; 14] = [
    "tools.call('fetch', {})",
    "tools.call('gone', {})",
    "tools.call('nope', {})",
    "tools.call('t1', {})",
    "tools.add('gone')",
    "tools.always('fetch')",
    "tools.add_local('t1', 'd', {}, function() end)",
    "tools.add_local(name, 'd', {}, function() end)",
    "jump('## S0')",
    "jump('## Nope')",
    "call('### C1', '')",
    "models.use('writer')",
    "models.use('nope')",
    "return tools.calls.t1",
];

/// Builds a prompt: each section a heading (H2 or H3) and a block of calls.
fn prompt(sections: &[(bool, Vec<usize>)], shared: &[usize]) -> String {
    let mut text = HEAD.to_owned();
    let code =
        |calls: &[usize]| -> String { calls.iter().map(|&c| format!("{}\n", CALLS[c])).collect() };
    if !shared.is_empty() {
        text.push_str(&format!("```lua shared\n{}```\n\n", code(shared)));
    }
    for (i, (child, calls)) in sections.iter().enumerate() {
        let level = if *child && i > 0 { "###" } else { "##" };
        let name = if *child && i > 0 { "C" } else { "S" };
        text.push_str(&format!(
            "{level} {name}{i}\n\n```lua\n{}```\n\n",
            code(calls)
        ));
    }
    text
}

fn tool(path: &str) -> ToolInfo {
    ToolInfo {
        path: path.to_owned(),
        wire_name: path.replace('/', "_"),
        description: String::new(),
        parameters: serde_json::json!({}),
        untrusted: false,
        structured: false,
    }
}

/// No catalog; the Plugin ready without the `gone` tool; the Plugin pending.
fn views() -> [CatalogView; 3] {
    let with = |state: PluginState| CatalogView {
        registered: vec!["acme/kit".to_owned()],
        plugins: vec![PluginView {
            id: "acme/kit".to_owned(),
            state,
            conflicts: Vec::new(),
        }],
        ..CatalogView::default()
    };
    [
        CatalogView::default(),
        with(PluginState::Ready(Arc::new(vec![tool("acme/kit/fetch")]))),
        with(PluginState::Pending),
    ]
}

/// Both ways, against every view; the list against the last.
fn assert_same(text: &str) -> Vec<Diagnostic> {
    let file = ParsedFile::new(text.to_owned(), Arc::new(AllCompiles));
    let analysis = file.analysis();
    let model = Model::build(text, &analysis.document, &FactsCache::default());
    let sections = Sections::new(&analysis.document);
    let mut last = Vec::new();
    for view in views() {
        let whole = diagnostics(text, analysis, &model, &view);
        let streamed =
            streamed_diagnostics::diagnostics(text, Parsed::of(analysis), &sections, &view);
        assert_eq!(streamed, whole, "view: {view:?}");
        last = whole;
    }
    last
}

proptest! {
    #[test]
    fn streamed_equals_the_models(
        sections in prop::collection::vec(
            (any::<bool>(), prop::collection::vec(0..CALLS.len(), 0..5)),
            1..8,
        ),
        shared in prop::collection::vec(0..CALLS.len(), 0..3),
    ) {
        assert_same(&prompt(&sections, &shared));
    }
}

#[test]
fn streamed_equals_the_models_across_batches_and_past_the_read_budget() {
    // More blocks than one batch reads, then blocks past the document's read
    // budget (whose callers may register any local tool), then one past the
    // block limit.
    let mut sections: Vec<(bool, Vec<usize>)> = (0..2_500)
        .map(|i| (i % 3 == 1, vec![i % CALLS.len(), (i * 7) % CALLS.len()]))
        .collect();
    sections.push((false, vec![6]));
    let mut text = prompt(&sections, &[3]);
    let filler = format!("local x = '{}'\n", "y".repeat(200));
    for i in 0..6 {
        text.push_str(&format!(
            "## Big{i}\n\n```lua\n{}tools.call('t9', {{}})\n```\n\n",
            filler.repeat(if i == 5 { 1_300 } else { 1_000 })
        ));
    }
    assert!(text.len() > 1024 * 1024 + 256 * 1024);
    let found = assert_same(&text);
    let not_read = |whole: bool| {
        found.iter().any(|d| {
            matches!(d.code, Code::LuaBlockNotRead { whole_document, .. } if whole_document == whole)
        })
    };
    assert!(not_read(true) && not_read(false));
    assert!(found
        .iter()
        .any(|d| matches!(d.code, Code::UnboundTool { .. })));
    assert!(found
        .iter()
        .any(|d| matches!(d.code, Code::InvisibleTarget { .. })));
}
