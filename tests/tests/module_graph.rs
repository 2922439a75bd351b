//! No crate's modules import each other in a circle. For each crate under
//! `server/`, the graph of its file modules (`promptforge_tests::module_graph`)
//! is read from its sources; a module and its own submodules may name each
//! other (a parent declares and re-exports its children, a child uses its
//! parent's items), any other circle fails with the imports that close it.

use std::fmt::Write as _;
use std::fs;

use promptforge_tests::module_graph::{circles, graph, Edge};
use promptforge_tests::workspace_root;

/// True when one of the two modules is the other or lies inside it.
fn nested(a: &str, b: &str) -> bool {
    let inside = |inner: &str, outer: &str| inner.starts_with(&format!("{outer}::"));
    a == b || inside(a, b) || inside(b, a)
}

/// The circles of one crate's graph, described with the imports that make them.
fn report(edges: &[Edge]) -> String {
    let mut out = String::new();
    for (members, cycle) in circles(edges) {
        let _ = writeln!(
            out,
            "  a circle of {}: {}",
            members.len(),
            members.join(", ")
        );
        for pair in cycle.windows(2) {
            if let Some(edge) = edges.iter().find(|e| e.from == pair[0] && e.to == pair[1]) {
                let _ = writeln!(out, "    {} -> {} at {}", edge.from, edge.to, edge.at);
            }
        }
    }
    out
}

#[test]
fn no_crate_has_an_import_cycle_between_its_modules() {
    let server = workspace_root().join("server");
    let mut crates: Vec<_> = fs::read_dir(&server)
        .expect("server/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|dir| dir.join("src").is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() >= 5, "only {} crates found", crates.len());
    let mut problems = String::new();
    let mut all_modules = 0;
    for dir in &crates {
        // A crate of one file (`lib.rs` alone) has no module to circle.
        let (modules, edges) = graph(&dir.join("src"));
        all_modules += modules.len();
        let across: Vec<Edge> = edges
            .into_iter()
            .filter(|e| !nested(&e.from, &e.to))
            .collect();
        let found = report(&across);
        if !found.is_empty() {
            let _ = writeln!(problems, "{}:\n{found}", dir.display());
        }
    }
    assert!(all_modules > 100, "only {all_modules} modules found");
    assert!(problems.is_empty(), "import cycles:\n{problems}");
}

#[test]
fn a_circle_through_siblings_is_found_and_one_through_a_parent_is_not() {
    let edge = |from: &str, to: &str| Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        at: "x.rs:1".to_owned(),
    };
    let edges = [
        edge("documents", "snapshot"),
        edge("snapshot", "test_files"),
        edge("test_files", "documents"),
        edge("features", "features::hover"),
        edge("features::hover", "features"),
    ];
    let across: Vec<Edge> = edges
        .iter()
        .filter(|e| !nested(&e.from, &e.to))
        .cloned()
        .collect();
    let found = report(&across);
    assert!(
        found.contains("a circle of 3: documents, snapshot, test_files"),
        "{found}"
    );
    assert!(!found.contains("features"), "{found}");
}
