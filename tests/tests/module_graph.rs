//! No crate's modules import each other in a circle. For each crate under
//! `server/`, the graph of its file modules (`promptforge_tests::module_graph`)
//! is read from its sources and looked at one level at a time
//! (`between_siblings`): a module and its own submodules may name each other (a
//! parent declares and re-exports its children, a child uses its parent's
//! items), but sibling modules, with everything inside them, form no circle;
//! one fails with the imports that close it.

use std::fmt::Write as _;
use std::fs;

use promptforge_tests::module_graph::{between_siblings, circles, graph, Edge};
use promptforge_tests::workspace_root;

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
    let mut seen = 0;
    for dir in &crates {
        let (modules, edges) = graph(&dir.join("src"));
        // A crate that is only its root file has no graph.
        seen += modules.len();
        let found = report(&between_siblings(&edges));
        if !found.is_empty() {
            let _ = writeln!(problems, "{}:\n{found}", dir.display());
        }
    }
    assert!(seen > 100, "only {seen} modules found under server/");
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
    let found = report(&between_siblings(&edges));
    assert!(
        found.contains("a circle of 3: documents, snapshot, test_files"),
        "{found}"
    );
    assert!(!found.contains("features"), "{found}");
}

#[test]
fn a_circle_through_the_insides_of_siblings_is_found() {
    let edge = |from: &str, to: &str, at: &str| Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        at: at.to_owned(),
    };
    // No two files name each other, but `features` and `run` do.
    let edges = [
        edge("features::execute_command", "run::prompt", "a.rs:1"),
        edge("run::prompt", "publisher", "b.rs:2"),
        edge("publisher", "features::diagnostics", "c.rs:3"),
        edge("features::hover", "features::lua_context", "d.rs:4"),
    ];
    let found = report(&between_siblings(&edges));
    assert!(
        found.contains("a circle of 3: features, publisher, run"),
        "{found}"
    );
    assert!(found.contains("    features -> run at a.rs:1"), "{found}");
    assert!(
        found.contains("    publisher -> features at c.rs:3"),
        "{found}"
    );
    assert!(!found.contains("lua_context"), "{found}");
}
