//! Finding the files `check` and `test` read: explicit files as named, folders
//! walked recursively for Markdown files and prompt test files (`*.test.yaml`),
//! everything in bytewise path order.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use promptforge_engine::user_file;

/// Extensions of the Markdown files a folder walk picks up.
const MARKDOWN_EXTENSIONS: [&str; 2] = ["md", "markdown"];

/// Folders a walk never enters (besides hidden ones).
const SKIPPED_FOLDERS: [&str; 2] = ["target", "node_modules"];

/// What a file found is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A prompt (a Markdown file, or any file named that is not a test file).
    Prompt,
    /// A prompt test file (`*.test.yaml`, `testing.md`).
    Test,
}

impl FileKind {
    /// The kind of the file at `path`, by its name.
    pub fn of(path: &Path) -> Self {
        if promptforge_syntax::test_file::is_test_file(path) {
            FileKind::Test
        } else {
            FileKind::Prompt
        }
    }
}

/// A file to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The path to open.
    pub path: PathBuf,
    /// The path to print: as reached from the argument (`examples/x.md`).
    pub display: String,
    /// True when the file was named on the command line rather than found in a folder.
    pub explicit: bool,
    /// What the file is read as.
    pub kind: FileKind,
}

/// A path that could not be used, with the reason, for `promptforge: {path}: {reason}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// The path as printed.
    pub path: String,
    /// Why it could not be used.
    pub reason: String,
}

/// What [`collect`] found.
#[derive(Debug, Default)]
pub struct Collected {
    /// Files to check, sorted bytewise by their printed path, each once.
    pub targets: Vec<Target>,
    /// Arguments or folders that could not be read.
    pub errors: Vec<PathError>,
}

/// Collects the files named by `args`: files as they are, folders recursively for
/// the files of the kinds in `wanted` (Markdown files for [`FileKind::Prompt`],
/// `*.test.yaml` files for [`FileKind::Test`]).
pub fn collect(args: &[PathBuf], wanted: &[FileKind]) -> Collected {
    let mut found = Collected::default();
    for arg in args {
        let display = arg.to_string_lossy().into_owned();
        match fs::metadata(arg) {
            Err(error) => found.errors.push(PathError {
                path: display,
                reason: describe_io_error(&error),
            }),
            Ok(meta) if meta.is_dir() => {
                let shown = if is_current_dir(arg) {
                    None
                } else {
                    Some(arg.clone())
                };
                walk(arg, shown.as_deref(), wanted, &mut found);
            }
            Ok(_) => found.targets.push(Target {
                kind: FileKind::of(arg),
                path: arg.clone(),
                display,
                explicit: true,
            }),
        }
    }
    // Path order; for one path named twice, or named and also found, keep it once,
    // as explicit (explicit sorts first among equals).
    found.targets.sort_by(|a, b| {
        a.display
            .as_bytes()
            .cmp(b.display.as_bytes())
            .then(b.explicit.cmp(&a.explicit))
    });
    found
        .targets
        .dedup_by(|later, earlier| later.display == earlier.display);
    found
}

/// Walks `dir`, whose printed form is `shown` (None for `.`, whose files print bare).
fn walk(dir: &Path, shown: Option<&Path>, wanted: &[FileKind], found: &mut Collected) {
    let shown_dir = shown.map_or_else(|| ".".to_owned(), |s| s.to_string_lossy().into_owned());
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            found.errors.push(PathError {
                path: shown_dir,
                reason: describe_io_error(&error),
            });
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                found.errors.push(PathError {
                    path: shown_dir.clone(),
                    reason: describe_io_error(&error),
                });
                continue;
            }
        };
        let name = entry.file_name();
        let path = entry.path();
        let shown_path = match shown {
            Some(parent) => parent.join(&name),
            None => PathBuf::from(&name),
        };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            let name = name.to_string_lossy();
            if !name.starts_with('.') && !SKIPPED_FOLDERS.contains(&name.as_ref()) {
                walk(&path, Some(&shown_path), wanted, found);
            }
            continue;
        }
        // A symlink counts when it points at a file; linked folders are not
        // followed, so a walk never loops.
        let is_file = file_type.is_file()
            || (file_type.is_symlink() && fs::metadata(&path).is_ok_and(|m| m.is_file()));
        let kind = if is_markdown(&path) {
            Some(FileKind::Prompt)
        } else if promptforge_syntax::test_file::is_test_file(&path) {
            Some(FileKind::Test)
        } else {
            None
        };
        if let Some(kind) = kind.filter(|kind| is_file && wanted.contains(kind)) {
            found.targets.push(Target {
                path,
                display: shown_path.to_string_lossy().into_owned(),
                explicit: false,
                kind,
            });
        }
    }
}

/// True for `.md` and `.markdown` files (lowercase extensions).
fn is_markdown(path: &Path) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| MARKDOWN_EXTENSIONS.contains(&ext))
}

/// True for `.`, `./`, `././`: a folder whose files print without a prefix.
fn is_current_dir(path: &Path) -> bool {
    let mut components = path.components().peekable();
    components.peek().is_some() && components.all(|c| c == Component::CurDir)
}

/// The reason part of `promptforge: {path}: {reason}` for an I/O error.
pub fn describe_io_error(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => "no such file or folder".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    }
}

/// Reads a text file named on the command line (a prompt, a test file, an
/// arguments file) through [`user_file`]: its text, or why it cannot be read (the
/// I/O error, or where its first byte that is not UTF-8 is).
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = user_file::read(path).map_err(|e| describe_io_error(&e))?;
    String::from_utf8(bytes).map_err(|e| not_utf8(&e))
}

/// Why a file's bytes are not a prompt's text: where the first byte that is not
/// UTF-8 is.
pub fn not_utf8(error: &std::string::FromUtf8Error) -> String {
    format!(
        "not UTF-8 text (invalid byte at offset {})",
        error.utf8_error().valid_up_to()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_dir_forms() {
        assert!(is_current_dir(Path::new(".")));
        assert!(is_current_dir(Path::new("./")));
        assert!(!is_current_dir(Path::new("")));
        assert!(!is_current_dir(Path::new("./examples")));
        assert!(!is_current_dir(Path::new("..")));
    }

    #[test]
    fn markdown_extensions() {
        assert!(is_markdown(Path::new("a/b.md")));
        assert!(is_markdown(Path::new("b.markdown")));
        assert!(!is_markdown(Path::new("b.txt")));
        assert!(!is_markdown(Path::new("md")));
    }
}
