//! The analysis layer sits below the engine (`syntax → analysis → engine → {lsp,
//! cli}`): its dependency closure in the workspace's Cargo.lock holds no engine, no
//! async runtime, no HTTP client, no MCP client, no HTML parser and no Lua: the
//! parse's Lua syntax check reaches it through the `LuaCompiler` seam, implemented
//! with Lua itself by `promptforge-luacheck`, above it.

use std::collections::{BTreeMap, BTreeSet};

/// Crates the analysis layer must never reach.
const FORBIDDEN: &[&str] = &[
    "promptforge-engine",
    "promptforge-lsp",
    "tokio",
    "reqwest",
    "rmcp",
    "html5ever",
    "mlua",
    "promptforge-luacheck",
];

/// One `[[package]]` of a Cargo.lock: its name, version and dependency entries
/// (`name` or `name version`, perhaps with a source after).
struct Package {
    name: String,
    version: String,
    dependencies: Vec<String>,
}

/// The packages of a Cargo.lock text (the lock format is line oriented).
fn packages(lock: &str) -> Vec<Package> {
    let mut out: Vec<Package> = Vec::new();
    let mut in_dependencies = false;
    for line in lock.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            out.push(Package {
                name: String::new(),
                version: String::new(),
                dependencies: Vec::new(),
            });
            in_dependencies = false;
            continue;
        }
        let Some(package) = out.last_mut() else {
            continue;
        };
        if in_dependencies {
            if line == "]" {
                in_dependencies = false;
            } else {
                package
                    .dependencies
                    .push(line.trim_end_matches(',').trim_matches('"').to_owned());
            }
        } else if let Some(name) = line.strip_prefix("name = ") {
            package.name = name.trim_matches('"').to_owned();
        } else if let Some(version) = line.strip_prefix("version = ") {
            package.version = version.trim_matches('"').to_owned();
        } else if line == "dependencies = [" {
            in_dependencies = true;
        }
    }
    out
}

/// The lock's dependency graph: each `name version` to the `name version` of its
/// dependencies.
fn graph(packages: &[Package]) -> BTreeMap<String, Vec<String>> {
    let resolve = |entry: &str| -> String {
        let mut words = entry.split(' ');
        let name = words.next().unwrap_or_default();
        match words.next() {
            Some(version) => format!("{name} {version}"),
            None => {
                let only: Vec<&Package> = packages.iter().filter(|p| p.name == name).collect();
                assert_eq!(only.len(), 1, "`{entry}` names one package of the lock");
                format!("{} {}", only[0].name, only[0].version)
            }
        }
    };
    packages
        .iter()
        .map(|p| {
            let key = format!("{} {}", p.name, p.version);
            (key, p.dependencies.iter().map(|d| resolve(d)).collect())
        })
        .collect()
}

/// Every package reachable from `start` (itself included), without passing through `stop`.
fn closure(
    graph: &BTreeMap<String, Vec<String>>,
    start: &str,
    stop: Option<&str>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![start.to_owned()];
    while let Some(key) = todo.pop() {
        if stop.is_some_and(|s| name_of(&key) == s) || !seen.insert(key.clone()) {
            continue;
        }
        todo.extend(graph.get(&key).into_iter().flatten().cloned());
    }
    seen
}

/// The crate name of a `name version` key.
fn name_of(key: &str) -> &str {
    key.split(' ').next().unwrap_or_default()
}

/// The names a manifest lists under `[dependencies]` and `[build-dependencies]`
/// (not `[dev-dependencies]`: a crate's tests do not link into its dependents).
fn linked_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut linked = BTreeSet::new();
    let mut in_linked = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_linked = line == "[dependencies]" || line == "[build-dependencies]";
        } else if in_linked && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
            linked.insert(name.trim().to_owned());
        }
    }
    linked
}

/// Each workspace crate under `server/`, by name, with the dependencies it links.
fn workspace_crates() -> BTreeMap<String, BTreeSet<String>> {
    let server = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut crates = BTreeMap::new();
    for entry in std::fs::read_dir(server).expect("server/").flatten() {
        let Ok(manifest) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else {
            continue;
        };
        let name = manifest
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_owned());
        if let Some(name) = name {
            crates.insert(name, linked_dependencies(&manifest));
        }
    }
    crates
}

/// The lock and the analysis crate's key in it. The lock lists a workspace
/// crate's dev-dependencies with the others; they are dropped here, as a
/// dependent never links them.
fn lock_graph() -> (BTreeMap<String, Vec<String>>, String) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock");
    let lock = std::fs::read_to_string(path).expect("the workspace's Cargo.lock is readable");
    let mut packages = packages(&lock);
    let workspace = workspace_crates();
    assert!(
        workspace.contains_key("promptforge-syntax"),
        "the manifests under server/ are read"
    );
    for package in &mut packages {
        if let Some(linked) = workspace.get(&package.name) {
            package
                .dependencies
                .retain(|d| linked.contains(d.split(' ').next().unwrap_or_default()));
        }
    }
    let analysis = packages
        .iter()
        .find(|p| p.name == "promptforge-analysis")
        .map(|p| format!("{} {}", p.name, p.version))
        .expect("Cargo.lock lists promptforge-analysis");
    (graph(&packages), analysis)
}

#[test]
fn analysis_reaches_no_engine_runtime_or_network_crate() {
    let (graph, analysis) = lock_graph();
    let reached = closure(&graph, &analysis, None);
    assert!(
        reached.iter().any(|k| name_of(k) == "promptforge-syntax"),
        "the walk follows the lock's edges"
    );
    let bad: Vec<&String> = reached
        .iter()
        .filter(|k| FORBIDDEN.contains(&name_of(k)))
        .collect();
    assert!(
        bad.is_empty(),
        "promptforge-analysis must stay below the engine, but reaches {bad:?}"
    );
}

#[test]
fn analysis_reaches_lua_only_through_the_syntax_crate() {
    let (graph, analysis) = lock_graph();
    let without_syntax = closure(&graph, &analysis, Some("promptforge-syntax"));
    let lua: Vec<&String> = without_syntax
        .iter()
        .filter(|k| name_of(k).starts_with("mlua"))
        .collect();
    assert!(
        lua.is_empty(),
        "promptforge-analysis reaches Lua other than through the syntax crate: {lua:?}"
    );
}

#[test]
fn the_lock_reader_finds_a_forbidden_crate_where_there_is_one() {
    let (graph, _) = lock_graph();
    let engine = graph
        .keys()
        .find(|k| name_of(k) == "promptforge-engine")
        .expect("Cargo.lock lists promptforge-engine");
    let reached = closure(&graph, engine, None);
    assert!(reached.iter().any(|k| name_of(k) == "tokio"));
    assert!(reached.iter().any(|k| name_of(k) == "promptforge-analysis"));
}
