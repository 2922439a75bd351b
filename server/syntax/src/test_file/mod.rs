//! Prompt test files (`*.test.yaml`, `testing.md`): the text to a [`TestFile`] whose
//! every value keeps its byte range, and every problem of the file as a
//! [`Diagnostic`] with its exact message and range.
//!
//! The YAML is read with the frontmatter's position-keeping reader (YAML 1.2,
//! saphyr). One module per concept: `cases` (the top level and each case),
//! `expect`, `rounds` (the model and tool scripts), `reader` (the value readers),
//! [`problem`] (the rules) and [`messages`] (every message text).

mod cases;
mod expect;
pub mod messages;
pub mod model;
pub mod problem;
mod reader;
mod rounds;

pub use model::*;
pub use problem::{Place, Problem};

use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::frontmatter::values::{resolve, Value};
use crate::frontmatter::yaml;
use reader::Cx;

/// What a test file's name ends with.
pub const TEST_FILE_SUFFIX: &str = ".test.yaml";

/// The most runs of one repeated live case (`repeat:` and `promptforge test
/// --repeat`): a rate over more runs says nothing more, and each run costs a
/// real model's request.
pub const MAX_REPEAT: u64 = 1000;

/// Reads a whole test file: the model with every value that reads well, and every
/// problem, sorted by range start (ties keep their order).
pub fn parse(text: &str) -> (TestFile, Vec<Diagnostic>) {
    let mut cx = Cx::new(text);
    let mut file = TestFile::default();
    match yaml::parse(text, 0..text.len()) {
        Err(error) => cx.yaml_error(error, |reason| Problem::InvalidYaml { reason }),
        Ok(root) => cases::read_file(&mut cx, root.as_ref(), &mut file),
    }
    (file, cx.finish())
}

/// Reads a whole YAML file that is a `model:` list (the `script` provider's turns
/// file, `host.md` §2) with the rules of a case's `model:`; an empty file has no
/// rounds.
pub fn parse_rounds(text: &str) -> (Vec<Round>, Vec<Diagnostic>) {
    let mut cx = Cx::new(text);
    let rounds = match yaml::parse(text, 0..text.len()) {
        Err(error) => {
            cx.yaml_error(error, |reason| Problem::InvalidScriptYaml { reason });
            Vec::new()
        }
        Ok(None) => Vec::new(),
        Ok(Some(root)) => match resolve(&root) {
            Value::Null => Vec::new(),
            _ => rounds::rounds(&mut cx, &root).unwrap_or_default(),
        },
    };
    (rounds, cx.finish())
}

/// The prompt a test file tests: `prompt:` relative to the test file's folder (an
/// absolute `prompt:` as it is), by default the file's name without `.test.yaml`
/// plus `.md`.
pub fn prompt_path(test_file: &Path, file: &TestFile) -> PathBuf {
    let folder = test_file.parent().unwrap_or_else(|| Path::new(""));
    match &file.prompt {
        Some(prompt) => folder.join(&prompt.value),
        None => {
            let name = test_file
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            let stem = name.strip_suffix(TEST_FILE_SUFFIX).unwrap_or(&name);
            folder.join(format!("{stem}.md"))
        }
    }
}

/// True when the file's name ends with `.test.yaml` after at least one character.
pub fn is_test_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(TEST_FILE_SUFFIX))
        .is_some_and(|stem| !stem.is_empty())
}
