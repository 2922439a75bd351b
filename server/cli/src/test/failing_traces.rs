//! `promptforge test --trace DIR`: the trace of each failing case's run, as
//! OTLP/JSON (what `run --trace` writes), one file per case named after its test
//! file and case (`notes.test.yaml` + `a page` ->
//! `notes.test.yaml--a_page--1a2b3c4d.json`, the hash telling apart names that
//! read the same once cleaned; with `--models`, the case's name has its model).

use std::path::Path;

use promptforge_engine::atomic_file;
use promptforge_engine::prompt_tests::fnv1a;

use crate::test::results::FileResult;

/// The file name of the trace of `case` in the test file `file`.
pub fn file_name(file: &str, case: &str) -> String {
    let clean = |text: &str| -> String {
        let kept: String = text
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        kept.chars().take(60).collect()
    };
    let base = Path::new(file)
        .file_name()
        .map_or(file.into(), |n| n.to_string_lossy());
    let hash = fnv1a(format!("{file}\n{case}").as_bytes()) as u32;
    format!("{}--{}--{hash:08x}.json", clean(&base), clean(case))
}

/// Writes the traces of the failed cases of `results` into `dir` (created when
/// missing); says on stderr where they are, or what failed. True when a trace
/// could not be written (the command then exits 2).
pub fn write(dir: &Path, results: &[FileResult]) -> bool {
    let failed: Vec<_> = results
        .iter()
        .flat_map(|file| file.cases.iter().map(move |case| (file, case)))
        .filter_map(|(file, case)| Some((file, case, case.trace.as_deref()?)))
        .collect();
    if failed.is_empty() {
        return false;
    }
    if let Err(error) = std::fs::create_dir_all(dir) {
        let reason = crate::files::describe_io_error(&error);
        eprintln!(
            "promptforge: {}: cannot write the traces: {reason}",
            dir.display()
        );
        return true;
    }
    let mut broken = false;
    for (file, case, trace) in &failed {
        let request = promptforge_otlp::export_request(trace, &file.file);
        let text = promptforge_otlp::to_json(&request) + "\n";
        let path = dir.join(file_name(&file.file, &case.label()));
        if let Err(error) = atomic_file::replace_at(&path, text.as_bytes()) {
            let reason = crate::files::describe_io_error(&error);
            eprintln!(
                "promptforge: {}: cannot write the trace: {reason}",
                path.display()
            );
            broken = true;
        }
    }
    eprintln!(
        "promptforge: the traces of {} failing cases are in {}",
        failed.len(),
        dir.display()
    );
    broken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_clean_and_tell_cases_apart() {
        let name = file_name("tests/notes.test.yaml", "a page / read");
        assert!(
            name.starts_with("notes.test.yaml--a_page___read--"),
            "{name}"
        );
        assert!(name.ends_with(".json"));
        assert_ne!(name, file_name("tests/notes.test.yaml", "a page _ read"));
    }
}
