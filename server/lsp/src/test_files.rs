//! Prompt test files (`*.test.yaml`, `testing.md`) as the server sees them: where
//! a test file is, the prompt it tests (the open document's text when that prompt
//! is open, else the file's), the test file beside a prompt, and a test file's own
//! problems.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use promptforge_syntax::diagnostic::sort_in_document_order;
use promptforge_syntax::test_file::{self, TestFile};
use promptforge_syntax::Diagnostic;
use tower_lsp::lsp_types::Url;

use crate::documents::{Documents, TestedPrompt};
use crate::snapshot::Snapshot;
use crate::test_uris::{is_test_uri, path_of};

/// The open test files that test the prompt at `prompt`: their diagnostics read
/// its text, so they are published again when it changes, opens or closes.
/// A test file's text is read (its YAML parsed, the prompt's path
/// canonicalised) once per text, not on each of its prompt's keystrokes; a
/// path that could not be canonicalised is tried again.
pub fn tests_of(documents: &Documents, prompt: &Url) -> Vec<Arc<Snapshot>> {
    let open = documents.open_tests(is_test_uri);
    if open.is_empty() {
        return Vec::new();
    }
    let prompt_path = path_of(prompt);
    let mut prompt_canonical: Option<Option<PathBuf>> = None;
    open.into_iter()
        .filter(|test| {
            let tested = test.tested.clone().unwrap_or_else(|| {
                let tested = Arc::new(tested_prompt(&test.uri, &test.text));
                documents.remember_tested(&test.uri, &test.text, Arc::clone(&tested));
                tested
            });
            if tested.path == prompt_path {
                return true;
            }
            // A prompt that did not exist when the test was read may exist now.
            let canonical = tested
                .canonical
                .clone()
                .or_else(|| tested.path.canonicalize().ok());
            canonical.is_some()
                && canonical
                    == *prompt_canonical.get_or_insert_with(|| prompt_path.canonicalize().ok())
        })
        .filter_map(|test| documents.snapshot(&test.uri))
        .collect()
}

/// The prompt the test file at `uri` with `text` names.
fn tested_prompt(uri: &Url, text: &str) -> TestedPrompt {
    let (file, _) = test_file::parse(text);
    let path = test_file::prompt_path(&path_of(uri), &file);
    let canonical = path.canonicalize().ok();
    TestedPrompt { path, canonical }
}

/// True when the document at `uri` is open or its file exists.
pub fn exists(documents: &Documents, uri: &Url) -> bool {
    documents.is_open(uri) || uri.to_file_path().is_ok_and(|p| p.is_file())
}

/// The prompt `file` (the test file at `test_path`) tests: its path and text, the
/// open document's text when it is open. A prompt that cannot be read is the test
/// file's own error ([`promptforge_analysis::test_file::prompt_of`]).
pub fn prompt_of(
    documents: &Documents,
    test_path: &Path,
    file: &TestFile,
) -> Result<(PathBuf, String), Box<Diagnostic>> {
    let path = test_file::prompt_path(test_path, file);
    let open = Url::from_file_path(&path)
        .ok()
        .and_then(|uri| documents.text(&uri));
    match open {
        Some(text) => Ok((path, text.as_str().to_owned())),
        None => promptforge_analysis::test_file::prompt_of(
            &promptforge_engine::user_file::UserFiles,
            test_path,
            file,
        ),
    }
}

/// A test file's text read: what it holds, its prompt (when it could be read) and
/// its own problems in document order, as `promptforge test` reports them.
pub struct Loaded {
    /// What the file holds.
    pub file: TestFile,
    /// The prompt's path and text.
    pub prompt: Option<(PathBuf, String)>,
    /// The file's problems.
    pub problems: Vec<Diagnostic>,
}

/// Reads the test file at `uri` whose text is `text`.
pub fn load(documents: &Documents, uri: &Url, text: &str) -> Loaded {
    let (file, mut problems) = test_file::parse(text);
    let test_path = path_of(uri);
    // An open prompt gives its text and its snapshot's analysis; a closed one
    // is read and parsed here.
    let path = test_file::prompt_path(&test_path, &file);
    let open = Url::from_file_path(&path)
        .ok()
        .and_then(|prompt| documents.snapshot(&prompt));
    let read = match open {
        Some(snapshot) => Ok((
            path,
            snapshot.text.as_str().to_owned(),
            Arc::clone(&snapshot.analysis),
        )),
        None => prompt_of(documents, &test_path, &file).map(|(path, prompt_text)| {
            let analysis = Arc::new(promptforge_luacheck::parse(&prompt_text));
            (path, prompt_text, analysis)
        }),
    };
    let prompt = match read {
        Ok((path, prompt_text, analysis)) => {
            problems.extend(promptforge_analysis::test_file::diagnostics(
                &file,
                Some((&prompt_text, &analysis)),
            ));
            Some((path, prompt_text))
        }
        Err(diagnostic) => {
            problems.push(*diagnostic);
            None
        }
    };
    sort_in_document_order(&mut problems);
    Loaded {
        file,
        prompt,
        problems,
    }
}
