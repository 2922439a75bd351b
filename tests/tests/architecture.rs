//! The invariants of the crate layout (the book's "How PromptForge is built"),
//! checked on the repository's own files:
//!
//! - the code runs one way: each crate under `server/` depends only on the
//!   PromptForge crates [`LAYERS`] allows it, so the order is
//!   `syntax → analysis → engine → {lsp, cli}` with no way back;
//! - no I/O below the front ends: the syntax and analysis crates neither depend
//!   on an async runtime, an HTTP client or an MCP client nor name the file
//!   system, the network or processes in their sources;
//! - no protocol types below the language server: only `server/lsp` names
//!   `tower-lsp` or `lsp-types`;
//! - the engine holds no extension: no HTTP or MCP client, no HTML parser;
//! - a module with submodules is a folder with its `mod.rs`, never `x.rs`
//!   beside `x/`;
//! - every crate is described in the book's table of who owns what.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use promptforge_tests::workspace_root;

/// Each crate of `server/` and the PromptForge crates it may depend on. A new
/// crate must be added here (and to the book's table) with its place in the order.
const LAYERS: &[(&str, &[&str])] = &[
    ("promptforge-transport", &[]),
    ("promptforge-tokens", &[]),
    ("promptforge-syntax", &[]),
    // Lua's own syntax check, behind the syntax crate's `LuaCompiler` seam.
    ("promptforge-luacheck", &["promptforge-syntax"]),
    ("promptforge-analysis", &["promptforge-syntax"]),
    (
        "promptforge-engine",
        &[
            "promptforge-syntax",
            "promptforge-luacheck",
            "promptforge-analysis",
            "promptforge-tokens",
        ],
    ),
    // The shipped extensions know the engine's public traits only.
    ("promptforge-providers", &["promptforge-engine"]),
    ("promptforge-web", &["promptforge-engine"]),
    // The syntax crate for the one rule of a tool name's segment.
    (
        "promptforge-mcp",
        &["promptforge-engine", "promptforge-syntax"],
    ),
    (
        "promptforge-shipped",
        &[
            "promptforge-engine",
            "promptforge-providers",
            "promptforge-web",
            "promptforge-mcp",
        ],
    ),
    (
        "promptforge-lsp",
        &[
            "promptforge-syntax",
            "promptforge-luacheck",
            "promptforge-analysis",
            "promptforge-engine",
            "promptforge-shipped",
            "promptforge-transport",
            "promptforge-tokens",
        ],
    ),
    // A trace as OpenTelemetry: it knows the engine's trace only.
    ("promptforge-otlp", &["promptforge-engine"]),
    (
        "promptforge",
        &[
            "promptforge-syntax",
            "promptforge-luacheck",
            "promptforge-analysis",
            "promptforge-engine",
            "promptforge-lsp",
            "promptforge-shipped",
            "promptforge-transport",
            "promptforge-otlp",
        ],
    ),
];

/// The crates that must do no I/O: the language's rules, on text.
const PURE: &[&str] = &["promptforge-syntax", "promptforge-analysis"];

/// Dependencies a pure crate may not have.
const IO_DEPENDENCIES: &[&str] = &["tokio", "tokio-util", "reqwest", "rmcp", "cap-std", "mlua"];

/// What a pure crate's source may not name.
const IO_WORDS: &[&str] = &[
    "std::fs",
    "fs::read",
    "fs::write",
    "File::open",
    "File::create",
    "std::net",
    "std::process",
    "Command::new",
    "tokio",
    "canonicalize",
];

/// The engine is the run: the network clients and parsers of the shipped
/// extensions (model providers, web, MCP) live in their own crates.
const NOT_IN_THE_ENGINE: &[&str] = &["reqwest", "rmcp", "html5ever", "htmd", "url"];

/// The only crate that speaks the Language Server Protocol's types.
const PROTOCOL_CRATE: &str = "promptforge-lsp";

/// One crate of `server/`: its name, folder and direct dependencies.
struct Crate {
    name: String,
    dir: PathBuf,
    dependencies: Vec<String>,
}

/// The `[dependencies]` names of a `Cargo.toml` (not dev or build ones).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if !inside || line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((key, _)) = line.split_once('=') {
            let key = key.trim();
            out.push(key.strip_suffix(".workspace").unwrap_or(key).to_owned());
        }
    }
    out
}

/// The `name = "..."` of a manifest's `[package]`.
fn package_name(manifest: &str) -> String {
    manifest
        .lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("name")?.trim().strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_owned())
        })
        .expect("a [package] name")
}

fn crates() -> Vec<Crate> {
    let server = workspace_root().join("server");
    let mut out: Vec<Crate> = fs::read_dir(&server)
        .expect("server/")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| dir.join("Cargo.toml").is_file())
        .map(|dir| {
            let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
            Crate {
                name: package_name(&manifest),
                dependencies: dependencies(&manifest),
                dir,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code of a Rust file without its comments (line comments and doc comments),
/// so a sentence about files is not a use of them.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_crate_depends_only_on_the_crates_below_it() {
    let layers: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut problems = Vec::new();
    for krate in crates() {
        let Some(allowed) = layers.get(krate.name.as_str()) else {
            problems.push(format!(
                "{} ({}) has no place in LAYERS",
                krate.name,
                krate.dir.display()
            ));
            continue;
        };
        for dependency in &krate.dependencies {
            let ours = dependency.starts_with("promptforge");
            if ours && !allowed.contains(&dependency.as_str()) {
                problems.push(format!("{} depends on {dependency}", krate.name));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_crates_of_the_language_rules_do_no_io() {
    let mut problems = Vec::new();
    for krate in crates().iter().filter(|c| PURE.contains(&c.name.as_str())) {
        for dependency in &krate.dependencies {
            if IO_DEPENDENCIES.contains(&dependency.as_str()) {
                problems.push(format!("{} depends on {dependency}", krate.name));
            }
        }
        for file in sources(&krate.dir.join("src")) {
            let code = code_of(&fs::read_to_string(&file).expect("a source file"));
            for word in IO_WORDS {
                if code.contains(word) {
                    problems.push(format!("{} names {word}", file.display()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_engine_holds_no_extension_of_its_own() {
    let engine = crates()
        .into_iter()
        .find(|c| c.name == "promptforge-engine")
        .expect("the engine crate");
    let held: Vec<&String> = engine
        .dependencies
        .iter()
        .filter(|d| NOT_IN_THE_ENGINE.contains(&d.as_str()))
        .collect();
    assert!(held.is_empty(), "the engine depends on {held:?}");
}

#[test]
fn only_the_language_server_speaks_protocol_types() {
    let mut problems = Vec::new();
    for krate in crates().iter().filter(|c| c.name != PROTOCOL_CRATE) {
        for dependency in &krate.dependencies {
            if dependency == "tower-lsp" || dependency == "lsp-types" {
                problems.push(format!("{} depends on {dependency}", krate.name));
            }
        }
        for file in sources(&krate.dir.join("src")) {
            let code = code_of(&fs::read_to_string(&file).expect("a source file"));
            if code.contains("tower_lsp") || code.contains("lsp_types") {
                problems.push(format!("{} names the protocol's types", file.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn a_module_with_submodules_is_a_folder_with_its_mod_rs() {
    let mut problems = Vec::new();
    for krate in crates() {
        for file in sources(&krate.dir.join("src")) {
            let beside = file.with_extension("");
            let is_mod = file.file_name().is_some_and(|n| n == "mod.rs");
            if !is_mod && beside.is_dir() {
                problems.push(format!(
                    "{} sits beside {}/: move it to {}/mod.rs",
                    file.display(),
                    beside.display(),
                    beside.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_book_describes_every_crate() {
    let page = workspace_root().join("docs/src/internals.md");
    let internals = fs::read_to_string(&page).expect("docs/src/internals.md");
    let missing: Vec<String> = crates()
        .into_iter()
        .filter(|krate| !internals.contains(&format!("| `{}` |", krate.name)))
        .map(|krate| krate.name)
        .collect();
    assert!(
        missing.is_empty(),
        "crates missing from the table in {}: {missing:?}",
        page.display()
    );
}

#[test]
fn the_checks_read_manifests_and_code_as_written() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\na.workspace = true\nb = \"1\"\n# c = 1\n[dev-dependencies]\nd = \"1\"\n";
    assert_eq!(dependencies(manifest), ["a", "b"]);
    assert_eq!(package_name(manifest), "x");
    assert_eq!(
        code_of("let a = 1; // std::fs\n/// tokio\nb"),
        "let a = 1; \n\nb"
    );
}
