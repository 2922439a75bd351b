//! Any text parses without a panic, every diagnostic range fits the text, and
//! the text read in small windows (as `check` reads a large prompt) gives the
//! same analysis as one tree of the whole text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptforge_syntax::ParsedFile;

fuzz_target!(|text: &str| {
    let analysis = promptforge_luacheck::parse(text);
    for diagnostic in &analysis.diagnostics {
        assert!(diagnostic.range.start <= diagnostic.range.end);
        assert!(diagnostic.range.end <= text.len());
        assert!(text.is_char_boundary(diagnostic.range.start));
        let _ = analysis.line_index.position(text, diagnostic.range.start);
    }
    let in_one_tree = promptforge_luacheck::parsed(text.to_owned()).into_analysis();
    let (in_windows, _) =
        ParsedFile::analyse_once_in_windows(text.to_owned(), promptforge_luacheck::compiler(), 16);
    assert_eq!(in_windows, in_one_tree);
});
