//! Edits applied incrementally give the same analysis as a fresh parse.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptforge_luacheck::{parse, parsed};

fuzz_target!(|input: (&str, Vec<(u16, u8, &str)>)| {
    let (text, edits) = input;
    let mut file = parsed(text.to_owned());
    for (at, delete, insert) in edits.into_iter().take(8) {
        let len = file.text().len();
        let start = usize::from(at) % (len + 1);
        let end = (start + usize::from(delete)).min(len);
        if file.edit(start..end, insert).is_err() {
            continue;
        }
        assert_eq!(file.analysis(), &parse(file.text()));
    }
});
