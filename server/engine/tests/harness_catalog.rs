//! The catalog admits a Plugin's tools under its id only; the Harness looks
//! Plugin ids up exactly.

use std::sync::Arc;

use promptforge_engine::harness::{Catalog, Harness};
use promptforge_engine::testing::tools::{FixedPlugin, TestTool};

#[test]
fn catalog_admits_only_tools_under_the_plugin_id() {
    let mut catalog = Catalog::default();
    let refused = catalog.admit(
        "acme/web",
        vec![
            TestTool::new("acme/web/fetch").shared(),
            TestTool::new("acme/web2/fetch").shared(),
            TestTool::new("acme/web/search").shared(),
        ],
    );
    assert_eq!(
        refused,
        ["Plugin acme/web contributed the tool acme/web2/fetch, which is not under its id; the tool is ignored"]
    );
    let paths: Vec<&str> = catalog
        .entries()
        .iter()
        .map(|e| e.tool.id().as_str())
        .collect();
    assert_eq!(paths, ["acme/web/fetch", "acme/web/search"]);
    assert!(catalog.find("acme/web/search").is_some());
    assert!(catalog.find("acme/web/sear").is_none());
    assert!(catalog.has_tools_of("acme/web"));
    assert!(!catalog.has_tools_of("acme/web2"));
}

#[test]
fn harness_looks_ids_up_exactly() {
    let mut harness = Harness::new();
    harness.register(Arc::new(FixedPlugin::new("acme/web-search", &[])));
    assert!(harness.get("acme/web-search").is_some());
    assert!(harness.get("acme/web_search").is_none());
    assert_eq!(harness.ids(), ["acme/web-search"]);
}
