//! Requirement evaluation against a catalog view (Tools chapter, "Declaring
//! Plugins" to "Tool slots"): what the editor places on ranges, and the notice
//! `prepare` refuses with, from the same diagnostics.

use std::ops::Range;
use std::sync::Arc;

use promptforge_engine::requirements::{
    evaluate, nearest, refusal, CatalogView, PluginState, PluginView, ToolInfo,
};
use promptforge_syntax::{messages, Code, Frontmatter, Severity};

fn frontmatter(yaml: &str) -> (String, Frontmatter, promptforge_syntax::Document) {
    let text = format!("---\nname: p\ndescription: d\npromptforge: 0\n{yaml}---\n\n# T\n");
    let analysis = promptforge_luacheck::parse(&text);
    let frontmatter = analysis.document.frontmatter.clone().unwrap_or_default();
    (text, frontmatter, analysis.document)
}

fn view(id: &str, state: PluginState) -> PluginView {
    PluginView {
        id: id.to_owned(),
        state,
        conflicts: Vec::new(),
    }
}

fn tool(path: &str) -> ToolInfo {
    ToolInfo {
        path: path.to_owned(),
        wire_name: path.rsplit('/').next().unwrap_or_default().to_owned(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object"}),
        untrusted: false,
        structured: false,
    }
}

fn at<'a>(text: &'a str, range: &Range<usize>) -> &'a str {
    text.get(range.clone()).unwrap_or_default()
}

#[test]
fn a_slot_whose_plugin_contributed_no_tools_is_refused_at_its_value() {
    let (text, fm, document) = frontmatter("plugins: [acme/empty]\ntools:\n  a: acme/empty/x\n");
    let catalog = CatalogView {
        plugins: vec![view("acme/empty", PluginState::Ready(Arc::new(Vec::new())))],
        ..CatalogView::default()
    };
    let found = evaluate(&fm, &catalog);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].code,
        Code::MissingPlugin {
            id: "acme/empty".into()
        }
    );
    assert_eq!(found[0].message, "missing required Plugin: acme/empty");
    assert_eq!(found[0].severity, Severity::Error);
    assert_eq!(at(&text, &found[0].range), "acme/empty/x");
    assert_eq!(at(&text, &found[0].related[0].range), "acme/empty");
    assert_eq!(found[0].related[0].message, messages::RELATED_NO_TOOLS);
    let notice = refusal(document.frontmatter.as_ref(), &found).expect("refused");
    assert_eq!(
        notice.message,
        "the environment cannot satisfy this prompt:\n- missing required Plugin: acme/empty"
    );
}

#[test]
fn pending_plugins_give_nothing_and_failures_give_their_reason() {
    let (text, fm, _) = frontmatter(
        "plugins:\n  - acme/slow\n  - ref: acme/opt\n    optional: true\n  - acme/bad\ntools:\n  a: acme/slow/x\n",
    );
    let catalog = CatalogView {
        plugins: vec![
            view("acme/slow", PluginState::Pending),
            view("acme/opt", PluginState::Failed("no answer".into())),
            view("acme/bad", PluginState::Failed("it exited".into())),
        ],
        ..CatalogView::default()
    };
    let found = evaluate(&fm, &catalog);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(
        found[0].message,
        "skipped optional Plugin acme/opt: no answer"
    );
    assert_eq!(found[0].severity, Severity::Warning);
    assert_eq!(at(&text, &found[0].range), "acme/opt");
    assert_eq!(found[1].message, "missing required Plugin: acme/bad");
    assert_eq!(found[1].related[0].message, "it exited");
}

#[test]
fn with_a_conflict_only_unregistered_plugins_and_the_conflict_are_reported() {
    let (text, fm, document) =
        frontmatter("plugins: [acme/a, acme/bad, acme/none, acme/b]\ntools:\n  x: acme/a/nope\n");
    let mut a = view(
        "acme/a",
        PluginState::Ready(Arc::new(vec![tool("acme/a/r")])),
    );
    a.conflicts = vec!["acme/b".into()];
    let catalog = CatalogView {
        plugins: vec![
            a,
            view("acme/bad", PluginState::Failed("x".into())),
            view("acme/none", PluginState::Unregistered),
            view("acme/b", PluginState::Pending),
        ],
        ..CatalogView::default()
    };
    let found = evaluate(&fm, &catalog);
    let codes: Vec<&Code> = found.iter().map(|p| &p.code).collect();
    assert_eq!(
        codes,
        [
            &Code::ConflictingPlugins {
                first: "acme/a".into(),
                second: "acme/b".into()
            },
            &Code::MissingPlugin {
                id: "acme/none".into()
            }
        ]
    );
    assert_eq!(at(&text, &found[0].range), "acme/b");
    // The notice: missing Plugins first, then the conflicts.
    assert_eq!(
        refusal(document.frontmatter.as_ref(), &found).expect("refused").message,
        "the environment cannot satisfy this prompt:\n- missing required Plugin: acme/none\n- conflicting Plugins: acme/a and acme/b cannot be activated together; declare one or the other"
    );
}

#[test]
fn a_configuration_error_is_one_warning_on_the_opening_line() {
    let (text, fm, _) = frontmatter("plugins: [acme/a]\n");
    let catalog = CatalogView {
        error: Some("promptforge.toml:2: unknown field `x`".into()),
        ..CatalogView::default()
    };
    let found = evaluate(&fm, &catalog);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].code.name(), "Configuration");
    assert_eq!(found[0].severity, Severity::Warning);
    assert_eq!(
        found[0].message,
        "the Host configuration cannot be used: promptforge.toml:2: unknown field `x`"
    );
    assert_eq!(at(&text, &found[0].range), "---");
}

#[test]
fn the_nearest_path_is_the_one_fewest_edits_away() {
    assert_eq!(
        nearest(
            "promptforge/web/fecth",
            ["promptforge/web/search", "promptforge/web/fetch"].into_iter()
        ),
        Some("promptforge/web/fetch")
    );
}

#[test]
fn a_slot_whose_plugin_is_not_declared_says_so_at_the_slot_and_the_notice_lists_it() {
    // Issue 23, trap 2: `tools: {fetch: promptforge/web/fetch}` without `plugins:`.
    let (text, fm, document) =
        frontmatter("tools:\n  fetch: promptforge/web/fetch\n  read: acme/other/read\n");
    let catalog = CatalogView {
        registered: vec!["promptforge/web".into()],
        ..CatalogView::default()
    };
    let found = evaluate(&fm, &catalog);
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "tool alias 'fetch' names promptforge/web/fetch, but this prompt does not declare its Plugin promptforge/web: add `- promptforge/web` under plugins:",
            "tool alias 'read' names acme/other/read, but this prompt does not declare its Plugin acme/other: declare it under plugins: (the Host registers no Plugin acme/other yet)",
        ]
    );
    assert_eq!(at(&text, &found[0].range), "promptforge/web/fetch");
    assert_eq!(found[0].code.name(), "RequirementsUnmet");
    assert_eq!(found[0].severity, Severity::Error);
    // The run's notice is the Tools chapter's, byte for byte.
    assert_eq!(
        refusal(document.frontmatter.as_ref(), &found).expect("refused").message,
        "the environment cannot satisfy this prompt:\n- missing required Plugin: promptforge/web\n- missing required Plugin: acme/other"
    );
}
