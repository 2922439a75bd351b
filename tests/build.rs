//! Generates one `#[test]` per conformance case (`tests/conformance/<case>.md`),
//! so each case passes or fails on its own and can be run by name.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs, not when it was compiled: a build script
    // compiled for one checkout may run for another that shares the target dir.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest).join("conformance");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| {
                    let name = entry.file_name().into_string().ok()?;
                    name.strip_suffix(".md").map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut code = String::new();
    for name in &names {
        let ident: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let _ = writeln!(
            code,
            "#[test]\nfn case_{ident}() {{\n    check_case({name:?});\n}}\n"
        );
    }
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("conformance_cases.rs"), code)
        .expect("OUT_DIR is writable");
}
