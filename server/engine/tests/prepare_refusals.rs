//! prepare's refusals and bindings: missing and conflicting Plugins, optional
//! ones skipped with a log line, parse errors, labels bound to Host models.

use std::sync::Arc;

use promptforge_engine::testing::runs::prepare_text;
use promptforge_engine::testing::tools::FixedPlugin;
use promptforge_engine::{Host, Position, RunErrorKind};

fn prompt(frontmatter: &str) -> String {
    format!("---\nname: p\ndescription: d\npromptforge: 0\n{frontmatter}---\n\n# T\n")
}

fn host_with(plugins: Vec<FixedPlugin>) -> Host {
    let mut host = Host::offline();
    for plugin in plugins {
        host.harness_mut().register(Arc::new(plugin));
    }
    host
}

#[tokio::test]
async fn a_missing_required_plugin_is_refused() {
    let text = prompt("plugins: [acme/absent]\ntools:\n  fetch: acme/absent/fetch\n");
    let error = prepare_text(&text, &Host::offline()).await.unwrap_err();
    assert_eq!(error.kind, RunErrorKind::RequirementsUnmet);
    assert_eq!(
        error.message,
        "the environment cannot satisfy this prompt:\n- missing required Plugin: acme/absent"
    );
    assert_eq!(error.position, None);
}

#[tokio::test]
async fn missing_first_then_conflicts_in_order() {
    let mut fs = FixedPlugin::new("acme/fs", &["acme/fs/read"]);
    fs.conflicts = vec!["acme/memfs".into()];
    let memfs = FixedPlugin::new("acme/memfs", &["acme/memfs/read"]);
    let host = host_with(vec![fs, memfs]);
    let text = prompt("plugins:\n  - acme/fs\n  - zzz/gone\n  - acme/memfs\n  - aaa/gone\n");
    let error = prepare_text(&text, &host).await.unwrap_err();
    assert_eq!(
        error.message,
        "the environment cannot satisfy this prompt:\n- missing required Plugin: zzz/gone\n- missing required Plugin: aaa/gone\n- conflicting Plugins: acme/fs and acme/memfs cannot be activated together; declare one or the other"
    );
}

#[tokio::test]
async fn optional_plugins_are_skipped_with_a_log_line() {
    let mut broken = FixedPlugin::new("acme/broken", &[]);
    broken.failure = Some("the server did not start".into());
    let host = host_with(vec![
        broken,
        FixedPlugin::new("acme/web", &["acme/web/fetch", "acme/web/search"]),
    ]);
    let text = prompt(
        "plugins:\n  - ref: acme/none\n    optional: true\n  - ref: acme/broken\n    optional: true\n  - acme/web\ntools:\n  get: acme/web/fetch\n  find: acme/web/find\n",
    );
    let prepared = prepare_text(&text, &host).await.unwrap();
    assert_eq!(
        prepared.log,
        [
            "skipped optional Plugin acme/none: the Host registers no Plugin with this id",
            "skipped optional Plugin acme/broken: the server did not start"
        ]
    );
    assert!(prepared.slot("get").unwrap().tool.is_some());
    assert!(
        prepared.slot("find").unwrap().tool.is_none(),
        "a path the Plugin lacks stays unbound"
    );
    assert_eq!(prepared.bound_aliases(), ["get"]);
    let paths: Vec<&str> = prepared
        .catalog
        .entries()
        .iter()
        .map(|e| e.tool.id().as_str())
        .collect();
    assert_eq!(paths, ["acme/web/fetch", "acme/web/search"]);
}

#[tokio::test]
async fn failed_activation_and_empty_plugins_are_missing() {
    let mut broken = FixedPlugin::new("acme/broken", &[]);
    broken.failure = Some("no".into());
    let host = host_with(vec![broken, FixedPlugin::new("acme/empty", &[])]);
    let text = prompt(
        "plugins: [acme/broken, acme/empty]\ntools:\n  a: acme/empty/x\n  b: acme/empty/y\n",
    );
    let error = prepare_text(&text, &host).await.unwrap_err();
    assert_eq!(
        error.message,
        "the environment cannot satisfy this prompt:\n- missing required Plugin: acme/broken\n- missing required Plugin: acme/empty"
    );
}

#[tokio::test]
async fn parse_errors_refuse_at_the_first() {
    let text = "---\nname: Bad Name\ndescription: d\npromptforge: 0\n---\n\n# T\n# Again\n";
    let error = prepare_text(text, &Host::offline()).await.unwrap_err();
    assert_eq!(error.kind.as_str(), "Frontmatter");
    assert_eq!(error.position, Some(Position { line: 2, column: 7 }));
}

#[tokio::test]
async fn labels_resolve_or_fail_binding_at_the_model_value() {
    let mut host = Host::offline();
    host.add_model(
        "real",
        Arc::new(promptforge_engine::models::echo::EchoProvider),
    );
    let text = prompt("models:\n  writer:\n    model: real\n  other:\n    model: nope\n");
    let error = prepare_text(&text, &host).await.unwrap_err();
    assert_eq!(error.kind, RunErrorKind::Binding);
    assert_eq!(
        error.position,
        Some(Position {
            line: 9,
            column: 12
        })
    );
    let ok = prompt("models:\n  writer:\n    model: real\n    temperature: 0.5\n");
    let prepared = prepare_text(&ok, &host).await.unwrap();
    assert_eq!(prepared.labels[0].model.name, "real");
    assert_eq!(prepared.labels[0].temperature, Some(0.5));
    assert_eq!(prepared.round_cap, 24);
}
