//! The module graph of the engine's `src/run/` has a direction (issue 10, item 4): the entry on
//! top, then the Lua API (`run::api`), then the mechanisms, then the Lua runtime,
//! then the context and plain data at the bottom. This test reads every source file
//! under `src/run/`, extracts the run modules each one names (`use` trees and paths
//! through `crate::run::`, `super::`, `self::` or a child module), and asserts that
//! the graph has no cycle and that no module names one of a higher layer.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use promptforge_tests::module_graph::{circles, edges_of, graph, Edge, Module};
use promptforge_tests::workspace_root;

/// The layers, by module path prefix (the longest prefix wins; `run` alone is the
/// root module only). A higher number is a higher layer; a module may name modules
/// of its own layer or lower ones, never higher ones.
const LAYERS: &[(&str, u8, &str)] = &[
    // 4: the entry (`run`, `run_text`): hands the Lua API to the walk.
    ("run", 4, "entry"),
    // 3: the Lua API: one module per global of §3.1.
    ("run::api", 3, "api"),
    // 2: the mechanisms the API drives.
    ("run::walk", 2, "mechanisms"),
    ("run::control", 2, "mechanisms"),
    ("run::conversation", 2, "mechanisms"),
    ("run::tools", 2, "mechanisms"),
    ("run::chain_var", 2, "mechanisms"),
    // 1: the sandboxed Lua VM and its pattern library.
    ("run::vm", 1, "runtime"),
    // 0: the context and plain data.
    ("run::context", 0, "context"),
    ("run::debugger", 0, "context"),
    ("run::vm::control", 0, "context"),
    ("run::identity", 0, "context"),
    ("run::location", 0, "context"),
    ("run::json", 0, "context"),
];

/// The layer of `module`: its number and name, when the table places it.
fn layer_of(module: &str) -> Option<(u8, &'static str)> {
    LAYERS
        .iter()
        .filter(|(prefix, _, _)| {
            module == *prefix || (*prefix != "run" && module.starts_with(&format!("{prefix}::")))
        })
        .max_by_key(|(prefix, _, _)| prefix.len())
        .map(|&(_, layer, name)| (layer, name))
}

/// Every import of a module of a higher layer, and every module the table does
/// not place.
fn layer_violations(modules: &[Module], edges: &[Edge]) -> Vec<String> {
    let mut problems = Vec::new();
    for module in modules {
        if layer_of(&module.path).is_none() {
            problems.push(format!("{} has no layer in LAYERS", module.path));
        }
    }
    for edge in edges {
        let (Some((from, from_name)), Some((to, to_name))) =
            (layer_of(&edge.from), layer_of(&edge.to))
        else {
            continue;
        };
        if to > from {
            problems.push(format!(
                "{} ({from_name}) imports {} ({to_name}), a higher layer, at {}",
                edge.from, edge.to, edge.at
            ));
        }
    }
    problems
}

/// The engine's modules under `run` and the imports between them.
fn run_graph() -> (Vec<Module>, Vec<Edge>) {
    let (modules, edges) = graph(&workspace_root().join("server/engine/src"));
    let in_run = |path: &str| path == "run" || path.starts_with("run::");
    (
        modules.into_iter().filter(|m| in_run(&m.path)).collect(),
        edges
            .into_iter()
            .filter(|e| in_run(&e.from) && in_run(&e.to))
            .collect(),
    )
}

#[test]
fn the_run_modules_have_no_import_cycle() {
    let (_, edges) = run_graph();
    let found = circles(&edges);
    let mut report = String::new();
    for (members, cycle) in &found {
        let _ = writeln!(
            report,
            "{} modules in one circle: {}\n  a shortest cycle: {}",
            members.len(),
            members.join(", "),
            cycle.join(" -> ")
        );
        for pair in cycle.windows(2) {
            for edge in edges
                .iter()
                .filter(|e| e.from == pair[0] && e.to == pair[1])
            {
                let _ = writeln!(report, "    {} -> {} at {}", edge.from, edge.to, edge.at);
            }
        }
    }
    assert!(
        found.is_empty(),
        "the run modules import each other in a circle:\n{report}"
    );
}

#[test]
fn no_run_module_imports_a_higher_layer() {
    let (modules, edges) = run_graph();
    let problems = layer_violations(&modules, &edges);
    assert!(
        problems.is_empty(),
        "the run modules break the layers:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_layer_of_the_table_names_a_module() {
    let (modules, _) = run_graph();
    for (prefix, _, _) in LAYERS {
        assert!(
            modules
                .iter()
                .any(|m| m.path == *prefix || m.path.starts_with(&format!("{prefix}::"))),
            "LAYERS names {prefix}, which is no module of src/run/"
        );
    }
}

#[test]
fn the_scanner_sees_the_imports() {
    // The real graph: a few imports every version of the walk has.
    let (modules, edges) = run_graph();
    assert!(modules.len() > 20, "only {} modules found", modules.len());
    let has = |from: &str, to: &str| edges.iter().any(|e| e.from == from && e.to == to);
    assert!(has("run::walk", "run::vm"), "walk -> vm not seen");
    assert!(has("run::api", "run::context"), "api -> context not seen");

    // A synthetic module: use trees, `self`, `super`, globs, child modules, paths in
    // code; strings, comments and inline test modules name nothing.
    let known: BTreeSet<String> = [
        "run",
        "run::a",
        "run::a::child",
        "run::b",
        "run::b::deep",
        "run::c",
        "run::d",
        "run::e",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let source = r##"
        mod child;
        use std::sync::Arc;
        use crate::run::{b::{self, deep::Thing}, c as see};
        use super::d::*;
        // use crate::run::e;
        /* crate::run::e::x() */
        const TEXT: &str = "crate::run::e::x";
        const RAW: &str = r#"crate::run::e"#;
        fn f<'a>(x: &'a str) -> char { child::go(); crate::run::b::deep::g(); 'x' }
        #[cfg(test)]
        mod tests {
            use super::*;
        }
    "##;
    let mut named: Vec<String> = edges_of("run::a", source, &known, "a.rs")
        .into_iter()
        .map(|e| e.to)
        .collect();
    named.sort();
    named.dedup();
    assert_eq!(
        named,
        [
            "run::a::child",
            "run::b",
            "run::b::deep",
            "run::c",
            "run::d"
        ]
    );
}

#[test]
fn a_cycle_and_an_upward_import_are_reported() {
    let edge = |from: &str, to: &str| Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        at: "x.rs:1".to_owned(),
    };
    let edges = [
        edge("run::walk", "run::api"),
        edge("run::api", "run::control"),
        edge("run::control", "run::walk"),
        edge("run::api", "run::context"),
    ];
    assert_eq!(
        circles(&edges),
        [(
            vec![
                "run::api".to_owned(),
                "run::control".to_owned(),
                "run::walk".to_owned()
            ],
            vec![
                "run::api".to_owned(),
                "run::control".to_owned(),
                "run::walk".to_owned(),
                "run::api".to_owned()
            ]
        )]
    );
    let modules: Vec<Module> = ["run::walk", "run::api", "run::control", "run::context"]
        .iter()
        .map(|p| Module {
            path: (*p).to_owned(),
            file: PathBuf::new(),
        })
        .collect();
    assert_eq!(
        layer_violations(&modules, &edges),
        ["run::walk (mechanisms) imports run::api (api), a higher layer, at x.rs:1"]
    );
}
