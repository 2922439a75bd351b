//! Reading one prompt test file (`testing.md`): its cases, its prompt and its own
//! problems (the parse's, a missing or unreadable prompt, the analysis' warnings),
//! as `promptforge test` and `promptforge check` both report them.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use promptforge_syntax::diagnostic::sort_in_document_order;
use promptforge_syntax::test_file::{self, TestFile};
use promptforge_syntax::{LineIndex, Severity};

use crate::problem::Problem;

/// One test file, read.
pub struct Loaded {
    /// The file's text.
    pub text: String,
    /// Positions in the text.
    pub index: LineIndex,
    /// What the file holds.
    pub file: TestFile,
    /// The file's own problems, in document order.
    pub problems: Vec<Problem>,
    /// The prompt's path and text, when it could be read.
    pub prompt: Option<(PathBuf, String)>,
}

impl Loaded {
    /// True when some problem is an error: none of the file's cases can run.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

/// Reads the test file at `path` (printed as `display`) whose text is `text`; None
/// when the parser panicked (a bug, reported as such instead of aborting the command).
pub fn load(path: &Path, display: &str, text: String) -> Option<Loaded> {
    panic::catch_unwind(AssertUnwindSafe(|| load_text(path, display, text))).ok()
}

fn load_text(path: &Path, display: &str, text: String) -> Loaded {
    let (file, mut found) = test_file::parse(&text);
    let prompt = match promptforge_analysis::test_file::prompt_of(
        &promptforge_engine::user_file::UserFiles,
        path,
        &file,
    ) {
        Ok((prompt_path, prompt_text)) => {
            let analysis = promptforge_luacheck::parse(&prompt_text);
            found.extend(promptforge_analysis::test_file::diagnostics(
                &file,
                Some((&prompt_text, &analysis)),
            ));
            Some((prompt_path, prompt_text))
        }
        Err(diagnostic) => {
            found.push(*diagnostic);
            found.extend(promptforge_analysis::test_file::diagnostics(&file, None));
            None
        }
    };
    sort_in_document_order(&mut found);
    let index = LineIndex::new(&text);
    let problems = found
        .iter()
        .map(|diag| Problem::from_diagnostic(display, &text, &index, diag))
        .collect();
    Loaded {
        text,
        index,
        file,
        problems,
        prompt,
    }
}
