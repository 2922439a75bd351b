//! `promptforge/tests`: the prompt test files of the workspace (or one of them)
//! and their cases with their ranges, for an editor's test explorer. The walk of
//! the workspace folders is bounded (hidden folders, `target` and `node_modules`
//! are skipped; at most [`MAX_TEST_FILES`] files and [`MAX_VISITED`] entries are
//! looked at), and so is what it reads, as the analysis's read budget bounds the
//! Lua it reads: a file's cases are read only when it holds at most
//! [`MAX_LISTED_FILE_BYTES`] and reading it keeps the listing within
//! [`MAX_LISTED_BYTES`], and one answer lists at most
//! [`MAX_LISTED_CASES`] cases. A file past a bound is listed without its cases
//! (or with the first ones) and says `truncated`, and so does the answer.
//!
//! Reading a test file builds its whole YAML tree and model, some 35 times the
//! file's size: a workspace holding one 63 MiB test file (617,899 cases) made
//! the server's listing peak at 2 GiB, and its answer alone was 90 MB.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use promptforge_syntax::test_file::{self, TestFile};
use promptforge_syntax::LineIndex;
use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{InitializeParams, Range, Url};

use crate::documents::Documents;

use crate::convert::Positions;
use crate::encoding::PositionEncoding;
use crate::test_uris::path_of;

/// The request's method name.
pub const TESTS: &str = "promptforge/tests";

/// The most test files one answer lists; past it the answer is `truncated`.
pub const MAX_TEST_FILES: usize = 2000;

/// The most folder entries one walk looks at; past it the answer is `truncated`.
pub const MAX_VISITED: usize = 50_000;

/// The largest test file whose cases a listing reads: 1 MiB (a case is a few
/// hundred bytes; one that records a fetched page may be far more). Past it the
/// file is listed without its cases, `truncated`.
pub const MAX_LISTED_FILE_BYTES: usize = 1024 * 1024;

/// The most bytes of test files one listing reads; a file that would take it
/// past them is listed without its cases, `truncated`.
pub const MAX_LISTED_BYTES: usize = 16 * 1024 * 1024;

/// The most cases one answer lists; the cases after it are left out, and their
/// files say `truncated`.
pub const MAX_LISTED_CASES: usize = 10_000;

/// Folders the walk never enters (besides hidden ones).
const SKIPPED_FOLDERS: [&str; 2] = ["target", "node_modules"];

/// The params of `promptforge/tests`: one test file, or (none) the workspace's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestsParams {
    /// The test file to list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<Url>,
}

/// The answer of `promptforge/tests`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestsAnswer {
    /// The test files, in path order.
    pub files: Vec<ListedFile>,
    /// True when a bound was reached: the walk's (test files or folder entries
    /// looked at: files are left out), or the reading's (a file's cases are
    /// left out; that file says `truncated` too).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One test file and its cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedFile {
    /// The test file.
    pub uri: Url,
    /// The prompt it tests (`prompt:` or the file beside it).
    pub prompt_uri: Option<Url>,
    /// Its cases that have a name, in file order.
    pub cases: Vec<ListedCase>,
    /// True when its cases are not all listed: the file is larger than
    /// [`MAX_LISTED_FILE_BYTES`] or reading it would take the listing past
    /// [`MAX_LISTED_BYTES`] (none is, and its prompt is not known), or the
    /// answer reached [`MAX_LISTED_CASES`] (the first ones are).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One case of a test file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListedCase {
    /// Its `name:`.
    pub name: String,
    /// Its map in the test file (its first line is the `- name:` line).
    pub range: Range,
    /// True for a `live: true` case (which a whole-file run skips).
    pub live: bool,
}

/// Lists the test file at `uri` whose text is `text` (a file that does not
/// parse gives the named cases it has).
pub fn list_file(uri: &Url, text: &str, encoding: PositionEncoding) -> ListedFile {
    let (file, _problems) = test_file::parse(text);
    let index = LineIndex::new(text);
    let positions = Positions {
        text,
        index: &index,
        encoding,
    };
    ListedFile {
        uri: uri.clone(),
        prompt_uri: Url::from_file_path(test_file::prompt_path(&path_of(uri), &file)).ok(),
        cases: cases(&file, &positions),
        truncated: false,
    }
}

/// A file whose cases were not read.
fn unread(uri: &Url) -> ListedFile {
    ListedFile {
        uri: uri.clone(),
        prompt_uri: None,
        cases: Vec::new(),
        truncated: true,
    }
}

/// Where a test file's text comes from.
pub enum Source<'a> {
    /// The open document's text.
    Open(Arc<String>),
    /// The file at this path.
    File(&'a Path),
}

/// What one listing may still read and list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Bytes of test files left to read.
    pub bytes: usize,
    /// Cases left to list.
    pub cases: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            bytes: MAX_LISTED_BYTES,
            cases: MAX_LISTED_CASES,
        }
    }
}

impl Budget {
    /// Lists the test file at `uri` from `source` within the budget, and
    /// spends what it read and listed; None when the file cannot be read.
    pub fn list(
        &mut self,
        uri: &Url,
        source: Source<'_>,
        encoding: PositionEncoding,
    ) -> Option<ListedFile> {
        let limit = MAX_LISTED_FILE_BYTES.min(self.bytes);
        if self.cases == 0 {
            return Some(unread(uri));
        }
        let text = match source {
            Source::Open(text) if text.len() > limit => return Some(unread(uri)),
            Source::Open(text) => text,
            Source::File(path) => {
                match promptforge_engine::user_file::read_to_string_at_most(path, limit as u64) {
                    Ok(text) => Arc::new(text),
                    Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                        return Some(unread(uri))
                    }
                    Err(_) => return None,
                }
            }
        };
        self.bytes -= text.len();
        let mut listed = list_file(uri, &text, encoding);
        if listed.cases.len() > self.cases {
            listed.cases.truncate(self.cases);
            listed.truncated = true;
        }
        self.cases -= listed.cases.len();
        Some(listed)
    }
}

fn cases(file: &TestFile, positions: &Positions<'_>) -> Vec<ListedCase> {
    file.cases
        .iter()
        .filter_map(|case| {
            Some(ListedCase {
                name: case.name.as_ref()?.value.clone(),
                range: positions.range(&case.range),
                live: case.live,
            })
        })
        .collect()
}

/// The test files under `roots`, in path order, and whether the walk stopped
/// at its bounds.
pub fn find_test_files(roots: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    let mut found = Vec::new();
    let mut visited = 0usize;
    let mut pending: Vec<PathBuf> = roots.iter().rev().cloned().collect();
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let mut folders = Vec::new();
        for entry in entries {
            visited += 1;
            if visited > MAX_VISITED || found.len() >= MAX_TEST_FILES {
                found.sort();
                return (found, true);
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() && walks_into(&path) {
                folders.push(path);
            } else if kind.is_file() && test_file::is_test_file(&path) {
                found.push(path);
            }
        }
        pending.extend(folders.into_iter().rev());
    }
    found.sort();
    (found, false)
}

/// False for the folders the walk skips: hidden ones, `target`, `node_modules`.
fn walks_into(folder: &Path) -> bool {
    let name = folder.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !name.starts_with('.') && !SKIPPED_FOLDERS.contains(&name)
}

/// Lists every test file under `roots` within a [`Budget`] (`open` gives an
/// open document's text, which wins over the file's); a file that cannot be
/// read is left out.
pub fn list_workspace(
    roots: &[PathBuf],
    open: impl Fn(&Url) -> Option<Arc<String>>,
    encoding: PositionEncoding,
) -> TestsAnswer {
    let (paths, walk_truncated) = find_test_files(roots);
    let mut budget = Budget::default();
    let files: Vec<ListedFile> = paths
        .iter()
        .filter_map(|path| {
            let uri = Url::from_file_path(path).ok()?;
            let source = match open(&uri) {
                Some(text) => Source::Open(text),
                None => Source::File(path),
            };
            budget.list(&uri, source, encoding)
        })
        .collect();
    let truncated = walk_truncated || files.iter().any(|f| f.truncated);
    TestsAnswer { files, truncated }
}

/// The answer to `params`: the one file asked for (its open text, else the
/// file's; none when neither can be read), or the walk of `roots` on a blocking
/// thread (None when that thread failed).
pub async fn answer(
    documents: &Documents,
    roots: Vec<PathBuf>,
    params: TestsParams,
    encoding: PositionEncoding,
) -> Option<TestsAnswer> {
    if let Some(uri) = params.uri {
        let open = documents.text(&uri);
        let listed = tokio::task::spawn_blocking(move || {
            let path = uri.to_file_path().ok();
            let source = match (open, &path) {
                (Some(text), _) => Source::Open(text),
                (None, Some(path)) => Source::File(path),
                (None, None) => return None,
            };
            Budget::default().list(&uri, source, encoding)
        });
        let files: Vec<ListedFile> = listed.await.ok()?.into_iter().collect();
        let truncated = files.iter().any(|f| f.truncated);
        return Some(TestsAnswer { files, truncated });
    }
    let open_texts = documents.texts_where(crate::test_uris::is_test_uri);
    let walk = tokio::task::spawn_blocking(move || {
        let open = |uri: &Url| {
            open_texts
                .iter()
                .find(|(open, _)| open == uri)
                .map(|(_, text)| Arc::clone(text))
        };
        list_workspace(&roots, open, encoding)
    });
    walk.await.ok()
}

/// The folders of the workspace: `workspaceFolders`, else `rootUri`, as paths.
#[allow(deprecated)] // rootUri is the fallback of clients without folders
pub fn workspace_roots(params: &InitializeParams) -> Vec<PathBuf> {
    let uris: Vec<&Url> = match params.workspace_folders.as_ref() {
        Some(list) if !list.is_empty() => list.iter().map(|f| &f.uri).collect(),
        _ => params.root_uri.iter().collect(),
    };
    uris.into_iter()
        .filter_map(|uri| uri.to_file_path().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_lists_its_named_cases_with_their_ranges() {
        let text = "prompt: p.md\ncases:\n  - name: one\n    args: x\n  - name: two\n    live: true\n  - args: y\n";
        let uri = Url::parse("file:///w/p.test.yaml").unwrap();
        let listed = list_file(&uri, text, PositionEncoding::Utf16);
        let names: Vec<_> = listed
            .cases
            .iter()
            .map(|c| (c.name.as_str(), c.range.start.line, c.live))
            .collect();
        assert_eq!(names, [("one", 2, false), ("two", 4, true)]);
        assert_eq!(
            listed.prompt_uri.map(String::from).as_deref(),
            Some("file:///w/p.md")
        );
    }

    /// A test file of `n` named cases.
    fn cases_text(n: usize) -> String {
        let mut text = String::from("cases:\n");
        for i in 0..n {
            text.push_str(&format!("  - name: c{i}\n"));
        }
        text
    }

    fn open(text: &str) -> Source<'static> {
        Source::Open(Arc::new(text.to_owned()))
    }

    #[test]
    fn a_file_past_the_files_bound_is_listed_unread_and_truncated() {
        let uri = Url::parse("file:///w/p.test.yaml").unwrap();
        let mut budget = Budget::default();
        let mut big = cases_text(3);
        big.push_str(&"#".repeat(MAX_LISTED_FILE_BYTES - big.len()));
        let listed = budget
            .list(&uri, open(&big), PositionEncoding::Utf16)
            .unwrap();
        assert_eq!((listed.cases.len(), listed.truncated), (3, false));
        big.push('#');
        let listed = budget
            .list(&uri, open(&big), PositionEncoding::Utf16)
            .unwrap();
        assert_eq!(listed, unread(&uri));
        assert_eq!(budget.bytes, MAX_LISTED_BYTES - MAX_LISTED_FILE_BYTES);
        assert_eq!(budget.cases, MAX_LISTED_CASES - 3);
    }

    #[test]
    fn the_listings_bytes_and_cases_in_all_are_bounded() {
        let uri = Url::parse("file:///w/p.test.yaml").unwrap();
        let text = cases_text(4);
        let encoding = PositionEncoding::Utf16;
        let mut budget = Budget {
            bytes: 2 * text.len() + 1,
            cases: 10,
        };
        for _ in 0..2 {
            let listed = budget.list(&uri, open(&text), encoding).unwrap();
            assert_eq!((listed.cases.len(), listed.truncated), (4, false));
        }
        // The third would take the listing past its bytes; a smaller one fits.
        assert_eq!(budget.list(&uri, open(&text), encoding), Some(unread(&uri)));
        let listed = budget.list(&uri, open(""), encoding).unwrap();
        assert!(!listed.truncated && listed.cases.is_empty());
        // Cases: the first ones of a file past the bound, then none.
        let mut budget = Budget {
            bytes: MAX_LISTED_BYTES,
            cases: 6,
        };
        let listed = budget.list(&uri, open(&text), encoding).unwrap();
        assert_eq!((listed.cases.len(), listed.truncated), (4, false));
        let listed = budget.list(&uri, open(&text), encoding).unwrap();
        let names: Vec<&str> = listed.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!((names, listed.truncated), (vec!["c0", "c1"], true));
        assert_eq!(budget.list(&uri, open(&text), encoding), Some(unread(&uri)));
    }

    #[test]
    fn the_walk_skips_hidden_target_and_node_modules() {
        let root = std::env::temp_dir().join(format!("pf-listing-{}", std::process::id()));
        for folder in ["a", ".git", "target", "node_modules", "a/b"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        for file in [
            "a/x.test.yaml",
            ".git/h.test.yaml",
            "target/t.test.yaml",
            "node_modules/n.test.yaml",
            "a/b/y.test.yaml",
            "a/z.md",
        ] {
            std::fs::write(root.join(file), "cases: []\n").unwrap();
        }
        let (found, truncated) = find_test_files(std::slice::from_ref(&root));
        let relative: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            relative,
            [
                PathBuf::from("a/b/y.test.yaml"),
                PathBuf::from("a/x.test.yaml")
            ]
        );
        assert!(!truncated);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
