//! Where prompt test files are, from URIs alone: whether a URI names one
//! (`*.test.yaml`), a document's path, and the test file beside a prompt. No
//! document is read here.

use std::path::PathBuf;

use promptforge_syntax::test_file::{self, TEST_FILE_SUFFIX};
use tower_lsp::lsp_types::Url;

/// True when `uri` names a prompt test file (`*.test.yaml`).
pub fn is_test_uri(uri: &Url) -> bool {
    test_file::is_test_file(&path_of(uri))
}

/// The path of a document: its file path, else the URI's path (an unsaved
/// document's `untitled:` name).
pub fn path_of(uri: &Url) -> PathBuf {
    uri.to_file_path()
        .unwrap_or_else(|()| PathBuf::from(uri.path()))
}

/// The test file beside the prompt at `uri`: `summarize.md` -> `summarize.test.yaml`
/// (None for a URI that names no file).
pub fn beside(uri: &Url) -> Option<Url> {
    let path = uri.to_file_path().ok()?;
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".md").unwrap_or(name);
    Url::from_file_path(path.with_file_name(format!("{stem}{TEST_FILE_SUFFIX}"))).ok()
}
