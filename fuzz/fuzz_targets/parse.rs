//! Any text parses without a panic, and every diagnostic range fits the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let analysis = promptforge_luacheck::parse(text);
    for diagnostic in &analysis.diagnostics {
        assert!(diagnostic.range.start <= diagnostic.range.end);
        assert!(diagnostic.range.end <= text.len());
        assert!(text.is_char_boundary(diagnostic.range.start));
        let _ = analysis.line_index.position(text, diagnostic.range.start);
    }
});
