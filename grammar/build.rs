//! Compiles the generated parser (`src/parser.c`) and the external scanner
//! (`src/scanner.c`) into a static library linked into this crate.

fn main() {
    let src_dir = std::path::Path::new("src");

    let mut build = cc::Build::new();
    build
        .std("c11")
        .include(src_dir)
        // The generated parser triggers harmless warnings on some compilers.
        .warnings(false)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-but-set-variable")
        .flag_if_supported("-Wno-trigraphs");

    #[cfg(target_env = "msvc")]
    build.flag("-utf-8");

    for file in ["parser.c", "scanner.c"] {
        let path = src_dir.join(file);
        build.file(&path);
        println!("cargo:rerun-if-changed={}", path.display());
    }
    for header in ["alloc.h", "array.h", "parser.h"] {
        println!("cargo:rerun-if-changed=src/tree_sitter/{header}");
    }

    build.compile("tree-sitter-promptforge");
}
