//! Failures shown in place (`editor.md` §2): a run that failed at a known place
//! and a test case that failed leave a diagnostic there, published with the
//! document's own diagnostics, until the document's next edit.
//!
//! Each failure is kept under its document, the version it describes (None for
//! a document that was not open) and its key: one per prompt run, one per test
//! case, so running one case again replaces only that case's failure.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tower_lsp::lsp_types::{Diagnostic, Url};

/// The `source` of a failed run's diagnostic.
pub const RUN_SOURCE: &str = "promptforge run";

/// The `source` of a failed test case's diagnostic.
pub const TEST_SOURCE: &str = "promptforge test";

/// The `code` of a failed test case's diagnostic.
pub const CASE_FAILED: &str = "CaseFailed";

/// What a failure is kept under within its document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FailureKey {
    /// The last run of the prompt.
    Run,
    /// The last run of the test case with this name.
    Case(String),
}

#[derive(Debug, Clone)]
struct Entry {
    key: FailureKey,
    version: Option<i32>,
    diagnostic: Diagnostic,
}

/// The failures shown in place, per document.
#[derive(Debug, Default)]
pub struct RunFailures {
    by_document: Mutex<HashMap<Url, Vec<Entry>>>,
}

impl RunFailures {
    fn lock(&self) -> MutexGuard<'_, HashMap<Url, Vec<Entry>>> {
        self.by_document
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces the failure kept under `key` for `uri` by `diagnostic` (None: the
    /// run or case passed, its failure goes).
    pub fn replace(
        &self,
        uri: &Url,
        key: FailureKey,
        version: Option<i32>,
        diagnostic: Option<Diagnostic>,
    ) {
        let mut all = self.lock();
        let entries = all.entry(uri.clone()).or_default();
        entries.retain(|e| e.key != key);
        if let Some(diagnostic) = diagnostic {
            entries.push(Entry {
                key,
                version,
                diagnostic,
            });
        }
        if entries.is_empty() {
            all.remove(uri);
        }
    }

    /// The failures of `uri` that describe `version` (or a version before the
    /// document was opened; None: the document is not open).
    pub fn shown(&self, uri: &Url, version: Option<i32>) -> Vec<Diagnostic> {
        self.lock()
            .get(uri)
            .map(|entries| {
                entries
                    .iter()
                    .filter(|e| e.version.is_none() || e.version == version)
                    .map(|e| e.diagnostic.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The document was edited or closed: its failures go.
    pub fn forget(&self, uri: &Url) {
        self.lock().remove(uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(message: &str) -> Diagnostic {
        Diagnostic {
            message: message.to_owned(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn a_key_is_replaced_and_other_versions_are_not_shown() {
        let failures = RunFailures::default();
        let Ok(uri) = Url::parse("file:///p.md") else {
            return;
        };
        failures.replace(&uri, FailureKey::Run, Some(2), Some(diagnostic("a")));
        failures.replace(
            &uri,
            FailureKey::Case("c".into()),
            None,
            Some(diagnostic("b")),
        );
        assert_eq!(failures.shown(&uri, Some(2)).len(), 2);
        assert_eq!(failures.shown(&uri, Some(3)).len(), 1);
        failures.replace(&uri, FailureKey::Case("c".into()), None, None);
        assert_eq!(failures.shown(&uri, Some(2)).len(), 1);
        failures.forget(&uri);
        assert!(failures.shown(&uri, Some(2)).is_empty());
    }
}
