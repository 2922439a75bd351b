//! `promptforge run FILE --record CASE.test.yaml` (`testing.md`): the run goes on a
//! Host whose models, tools and operator are recorded, with a seed always, and the
//! case that replays it is appended to the test file (created when missing).
//!
//! The file is read, extended and replaced under a lock ([`lock`]), so recordings
//! into one file at once all land, and replaced atomically
//! ([`promptforge_engine::atomic_file`]), so a recording stopped at any point (or
//! failing on a full disk) leaves the file as it was or with the case added. A
//! test file that is a symbolic link stays one: the file it names is replaced.

mod lock;

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use promptforge_engine::atomic_file;
use promptforge_engine::prompt_tests::record::Recorder;
use promptforge_engine::prompt_tests::writer::append_case;
use promptforge_engine::Outcome;
use promptforge_syntax::test_file::{self, Case, Spanned, TestFile};

use crate::files::describe_io_error;

/// The name of a recorded case when the run had no arguments.
const NO_ARGUMENTS: &str = "no arguments";

/// A recording under way.
pub struct Recording {
    /// The file replaced: the test file, or the file it links to.
    target: PathBuf,
    /// Its path as printed.
    pub display: String,
    /// `prompt:` of a new file: None when the prompt is the file's default.
    prompt: Option<String>,
    /// The case's name before making it unique.
    name: String,
    /// What the models, tools and operator answered.
    pub recorder: Arc<Recorder>,
}

/// Why a recording cannot be made: the line `promptforge: {display}: {reason}`.
#[derive(Debug)]
pub struct RecordError {
    /// The test file as printed.
    pub display: String,
    /// Why.
    pub reason: String,
}

impl Recording {
    /// Starts recording a run of `prompt` into `path`; refused before the run when the
    /// test file cannot take the case (it cannot be read, has problems, tests
    /// another prompt, or its `cases:` cannot be appended to) or its lock cannot be
    /// taken (its folder is missing or read-only).
    pub fn start(
        path: &Path,
        prompt: &Path,
        name: Option<&str>,
        arguments: &str,
    ) -> Result<Recording, RecordError> {
        let display = path.display().to_string();
        let fail = |reason: String| RecordError {
            display: display.clone(),
            reason,
        };
        let target = written_file(path);
        drop(take_lock(&target).map_err(fail)?);
        let existing = read_existing(&target).map_err(fail)?;
        let file = existing
            .as_deref()
            .map_or_else(TestFile::default, |text| test_file::parse(text).0);
        let relative = prompt_field(path, prompt);
        let probe = case_named("probe");
        append_case(existing.as_deref(), relative.as_deref(), &probe).map_err(fail)?;
        if existing.is_some() {
            let tested = test_file::prompt_path(path, &file);
            if normalized(&tested) != normalized(prompt) {
                return Err(fail(format!(
                    "it tests the prompt {}, not {}",
                    tested.display(),
                    prompt.display()
                )));
            }
        }
        let name = match name {
            Some(name) => name.to_owned(),
            None if arguments.is_empty() => NO_ARGUMENTS.to_owned(),
            None => arguments.to_owned(),
        };
        Ok(Recording {
            target,
            display,
            prompt: relative,
            name,
            recorder: Recorder::new(),
        })
    }

    /// Appends the case of the run that ended with `outcome` (run with `arguments`
    /// and `seed`), holding the file's lock from its reading to its replacement;
    /// returns the case's name, made unique in the file.
    pub fn finish(
        &self,
        arguments: &str,
        seed: u64,
        outcome: &Outcome,
    ) -> Result<String, RecordError> {
        let fail = |reason: String| RecordError {
            display: self.display.clone(),
            reason,
        };
        let _lock = take_lock(&self.target).map_err(fail)?;
        let existing = read_existing(&self.target).map_err(fail)?;
        let taken: Vec<String> = existing.as_deref().map_or_else(Vec::new, |text| {
            test_file::parse(text)
                .0
                .cases
                .iter()
                .filter_map(|case| case.name.as_ref().map(|n| n.value.clone()))
                .collect()
        });
        let name = unique_name(&self.name, &taken);
        let case = self.recorder.case(&name, arguments, seed, outcome);
        let text = append_case(existing.as_deref(), self.prompt.as_deref(), &case).map_err(fail)?;
        atomic_file::replace_at(&self.target, text.as_bytes())
            .map_err(|e| fail(describe_io_error(&e)))?;
        Ok(name)
    }
}

/// The file a recording into `path` replaces: `path`, or the file it links to.
fn written_file(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The lock of the test file `target`, or why it cannot be taken.
fn take_lock(target: &Path) -> Result<lock::Lock, String> {
    lock::lock(target).map_err(|e| {
        format!(
            "cannot create its lock file {}: {}",
            e.path.display(),
            describe_io_error(&e.error)
        )
    })
}

/// The test file's text, None when it does not exist yet.
fn read_existing(path: &Path) -> Result<Option<String>, String> {
    match promptforge_engine::user_file::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| crate::files::not_utf8(&e)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(describe_io_error(&error)),
    }
}

/// A case with only a name.
fn case_named(name: &str) -> Case {
    Case {
        name: Some(Spanned::new(name.to_owned(), 0..0)),
        ..Case::default()
    }
}

/// `name`, or `name (2)`, `name (3)`, ... : the first not in `taken`.
pub fn unique_name(name: &str, taken: &[String]) -> String {
    if !taken.iter().any(|t| t == name) {
        return name.to_owned();
    }
    (2u64..)
        .map(|n| format!("{name} ({n})"))
        .find(|candidate| !taken.iter().any(|t| t == candidate))
        .unwrap_or_else(|| name.to_owned())
}

/// `prompt:` for a new test file at `test` of the prompt at `prompt`: None when
/// it is the default for the file's name, else the prompt's path relative to the
/// test file's folder (with `/` between its parts).
fn prompt_field(test: &Path, prompt: &Path) -> Option<String> {
    let default = test_file::prompt_path(test, &TestFile::default());
    if normalized(&default) == normalized(prompt) {
        return None;
    }
    let folder = normalized(&crate::host_setup::prompt_dir(test));
    Some(relative(&folder, &normalized(prompt)))
}

/// `path` made absolute against the working folder, with `.` and `..` resolved
/// lexically.
fn normalized(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The path from folder `from` to `to`, both normalized.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<Component<'_>> = from.components().collect();
    let to: Vec<Component<'_>> = to.components().collect();
    let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let ups = from.len().saturating_sub(shared);
    let mut parts: Vec<String> = vec!["..".to_owned(); ups];
    parts.extend(
        to.iter()
            .skip(shared)
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_taken_get_a_number() {
        let taken = vec!["a".to_owned(), "a (2)".to_owned()];
        assert_eq!(unique_name("b", &taken), "b");
        assert_eq!(unique_name("a", &taken), "a (3)");
        assert_eq!(unique_name("a (2)", &taken), "a (2) (2)");
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative(Path::new("/p/t"), Path::new("/p/t/a.md")), "a.md");
        assert_eq!(relative(Path::new("/p/t"), Path::new("/p/a.md")), "../a.md");
        assert_eq!(
            relative(Path::new("/p/t/u"), Path::new("/p/x/a.md")),
            "../../x/a.md"
        );
        assert_eq!(
            normalized(Path::new("/p/./t/../a.md")),
            PathBuf::from("/p/a.md")
        );
    }
}
