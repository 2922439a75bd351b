//! The store (`language.md` §5): the run's filesystem, in memory or a directory on
//! disk, shared by every section, chain, arm and Plugin of the run.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{EngineError, ErrorKind};
use crate::messages;

/// The longest store path, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// A store operation's failure (kind `store`).
pub type StoreResult<T> = Result<T, EngineError>;

fn store_error(message: String) -> EngineError {
    EngineError::new(ErrorKind::Store, message)
}

/// Checks a store path against the rules of §5; the error names the first rule broken.
pub fn check_path(path: &str) -> StoreResult<()> {
    let reason = if path.is_empty() {
        Some("the path is empty")
    } else if path.len() > MAX_PATH_BYTES {
        Some("the path is longer than 1024 bytes")
    } else if path.contains('\0') {
        Some("the path contains NUL")
    } else if path.contains('\\') {
        Some("the path contains a backslash")
    } else if path.starts_with('/') {
        Some("the path is absolute")
    } else if path.split('/').any(str::is_empty) {
        Some("the path has an empty segment")
    } else if path.split('/').any(|s| s == "." || s == "..") {
        Some("the path has a . or .. segment")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(store_error(messages::invalid_store_path(path, reason))),
        None => Ok(()),
    }
}

/// Where the files live.
#[derive(Debug)]
enum Backend {
    Memory(Mutex<BTreeMap<String, String>>),
    Directory(PathBuf),
}

/// The run's filesystem.
#[derive(Debug)]
pub struct Store {
    backend: Backend,
}

impl Default for Store {
    fn default() -> Self {
        Store::in_memory()
    }
}

impl Store {
    /// An empty store in memory (the default).
    pub fn in_memory() -> Self {
        Store {
            backend: Backend::Memory(Mutex::new(BTreeMap::new())),
        }
    }

    /// A store in memory holding `files` (path -> text), for tests.
    pub fn with_files(files: impl IntoIterator<Item = (String, String)>) -> Self {
        Store {
            backend: Backend::Memory(Mutex::new(files.into_iter().collect())),
        }
    }

    /// A store over the directory `root` (`--store DIR`); the directory is created when missing.
    pub fn directory(root: impl Into<PathBuf>) -> io::Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root)?;
        Ok(Store {
            backend: Backend::Directory(root),
        })
    }

    fn with_memory<T>(
        files: &Mutex<BTreeMap<String, String>>,
        f: impl FnOnce(&mut BTreeMap<String, String>) -> T,
    ) -> T {
        let mut guard = files.lock().unwrap_or_else(|poison| poison.into_inner());
        f(&mut guard)
    }

    fn io_error(path: &str, error: &io::Error) -> EngineError {
        store_error(messages::store_io(path, &error.to_string()))
    }

    /// The whole text of `path`.
    fn read_all(&self, path: &str) -> StoreResult<String> {
        check_path(path)?;
        let found = match &self.backend {
            Backend::Memory(files) => Self::with_memory(files, |f| f.get(path).cloned()),
            Backend::Directory(root) => match std::fs::read(root.join(path)) {
                Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                Err(e)
                    if e.kind() == io::ErrorKind::NotFound || is_a_directory(&root.join(path)) =>
                {
                    None
                }
                Err(e) => return Err(Self::io_error(path, &e)),
            },
        };
        found.ok_or_else(|| store_error(messages::no_such_store_file(path)))
    }

    /// `store.read(path [, first [, last]])`: the file, or its lines `first..=last`
    /// (1-based, inclusive, each with its line ending; bounds are clamped to the file).
    pub fn read(&self, path: &str, first: Option<i64>, last: Option<i64>) -> StoreResult<String> {
        let text = self.read_all(path)?;
        if first.is_none() && last.is_none() {
            return Ok(text);
        }
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let count = lines.len() as i64;
        let first = first.unwrap_or(1).max(1);
        let last = last.unwrap_or(count).min(count);
        if first > last {
            return Ok(String::new());
        }
        let from = usize::try_from(first - 1).unwrap_or(0);
        let to = usize::try_from(last).unwrap_or(0);
        Ok(lines.get(from..to).map(|l| l.concat()).unwrap_or_default())
    }

    /// `store.write(path, text)`: creates or replaces the file.
    pub fn write(&self, path: &str, text: &str) -> StoreResult<()> {
        check_path(path)?;
        match &self.backend {
            Backend::Memory(files) => {
                Self::with_memory(files, |f| f.insert(path.to_owned(), text.to_owned()));
                Ok(())
            }
            Backend::Directory(root) => {
                let full = root.join(path);
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| Self::io_error(path, &e))?;
                }
                std::fs::write(full, text).map_err(|e| Self::io_error(path, &e))
            }
        }
    }

    /// `store.append(path, text)`: adds to the end, creating the file when missing.
    pub fn append(&self, path: &str, text: &str) -> StoreResult<()> {
        check_path(path)?;
        match &self.backend {
            Backend::Memory(files) => {
                Self::with_memory(files, |f| {
                    f.entry(path.to_owned()).or_default().push_str(text)
                });
                Ok(())
            }
            Backend::Directory(root) => {
                use std::io::Write;
                let full = root.join(path);
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| Self::io_error(path, &e))?;
                }
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(full)
                    .map_err(|e| Self::io_error(path, &e))?;
                file.write_all(text.as_bytes())
                    .map_err(|e| Self::io_error(path, &e))
            }
        }
    }

    /// `store.exists(path)`.
    pub fn exists(&self, path: &str) -> StoreResult<bool> {
        check_path(path)?;
        Ok(match &self.backend {
            Backend::Memory(files) => Self::with_memory(files, |f| f.contains_key(path)),
            Backend::Directory(root) => root.join(path).is_file(),
        })
    }

    /// `store.delete(path)`: silent when the file is missing.
    pub fn delete(&self, path: &str) -> StoreResult<()> {
        check_path(path)?;
        match &self.backend {
            Backend::Memory(files) => {
                Self::with_memory(files, |f| f.remove(path));
                Ok(())
            }
            Backend::Directory(root) => match std::fs::remove_file(root.join(path)) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Self::io_error(path, &e)),
            },
        }
    }

    /// `store.list([pattern])`: every path, sorted bytewise, that matches the pattern
    /// (`*` within a segment, `**` across segments; no pattern lists everything).
    pub fn list(&self, pattern: Option<&str>) -> StoreResult<Vec<String>> {
        let mut paths = match &self.backend {
            Backend::Memory(files) => Self::with_memory(files, |f| f.keys().cloned().collect()),
            Backend::Directory(root) => {
                let mut found = Vec::new();
                collect_files(root, "", &mut found).map_err(|e| Self::io_error(".", &e))?;
                found
            }
        };
        if let Some(pattern) = pattern {
            paths.retain(|p| glob_match(pattern, p));
        }
        paths.sort();
        Ok(paths)
    }

    /// Every file and its text, sorted by path (for tests and `promptforge test`).
    pub fn snapshot(&self) -> StoreResult<BTreeMap<String, String>> {
        let mut files = BTreeMap::new();
        for path in self.list(None)? {
            let text = self.read_all(&path)?;
            files.insert(path, text);
        }
        Ok(files)
    }
}

fn is_a_directory(path: &Path) -> bool {
    path.is_dir()
}

fn collect_files(dir: &Path, prefix: &str, out: &mut Vec<String>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let relative = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect_files(&entry.path(), &relative, out)?;
        } else if kind.is_file() {
            out.push(relative);
        }
    }
    Ok(())
}

/// Matches a store path against a pattern: `*` matches any run of characters within
/// one segment, `**` any run of characters across segments (a `**/` also matches no
/// folder at all); everything else matches itself.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let path: Vec<char> = path.chars().collect();
    matches_from(&pattern, &path)
}

fn matches_from(pattern: &[char], path: &[char]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some(('*', rest)) if rest.first() == Some(&'*') => {
            let rest = &rest[1..];
            if let Some(after_slash) = rest.strip_prefix(&['/']) {
                // `**/` also matches zero folders.
                if matches_from(after_slash, path) {
                    return true;
                }
            }
            (0..=path.len()).any(|i| matches_from(rest, &path[i..]))
        }
        Some(('*', rest)) => {
            for i in 0..=path.len() {
                if matches_from(rest, &path[i..]) {
                    return true;
                }
                if path.get(i) == Some(&'/') {
                    break;
                }
            }
            false
        }
        Some((c, rest)) => path.first() == Some(c) && matches_from(rest, &path[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(path: &str) -> String {
        check_path(path).unwrap_err().message
    }

    #[test]
    fn path_rules_and_messages() {
        assert!(check_path("notes.md").is_ok());
        assert!(check_path("a/b.c/d").is_ok());
        assert_eq!(reason(""), "invalid store path \"\": the path is empty");
        assert_eq!(
            reason("/etc/passwd"),
            "invalid store path \"/etc/passwd\": the path is absolute"
        );
        assert_eq!(
            reason("a//b"),
            "invalid store path \"a//b\": the path has an empty segment"
        );
        assert_eq!(
            reason("a/"),
            "invalid store path \"a/\": the path has an empty segment"
        );
        assert_eq!(
            reason("a/./b"),
            "invalid store path \"a/./b\": the path has a . or .. segment"
        );
        assert_eq!(
            reason("../x"),
            "invalid store path \"../x\": the path has a . or .. segment"
        );
        assert_eq!(
            reason("a\\b"),
            "invalid store path \"a\\b\": the path contains a backslash"
        );
        assert_eq!(
            reason("a\0b"),
            "invalid store path \"a\0b\": the path contains NUL"
        );
        let long = "x".repeat(1025);
        assert!(reason(&long).ends_with(": the path is longer than 1024 bytes"));
        assert!(check_path(&"x".repeat(1024)).is_ok());
        assert_eq!(check_path("").unwrap_err().kind, ErrorKind::Store);
    }

    fn exercise(store: &Store) {
        assert_eq!(
            store.read("missing.md", None, None).unwrap_err().message,
            "no such store file \"missing.md\""
        );
        store.write("notes/a.md", "one\ntwo\nthree\n").unwrap();
        store.append("notes/a.md", "four").unwrap();
        store.append("log.txt", "x").unwrap();
        assert_eq!(
            store.read("notes/a.md", None, None).unwrap(),
            "one\ntwo\nthree\nfour"
        );
        assert_eq!(
            store.read("notes/a.md", Some(2), Some(3)).unwrap(),
            "two\nthree\n"
        );
        assert_eq!(store.read("notes/a.md", Some(4), None).unwrap(), "four");
        assert_eq!(store.read("notes/a.md", Some(3), Some(2)).unwrap(), "");
        assert_eq!(store.read("log.txt", None, None).unwrap(), "x");
        assert!(store.exists("log.txt").unwrap());
        assert!(!store.exists("notes").unwrap());
        store.write("notes/deep/b.md", "b").unwrap();
        assert_eq!(
            store.list(None).unwrap(),
            ["log.txt", "notes/a.md", "notes/deep/b.md"]
        );
        assert_eq!(store.list(Some("notes/*")).unwrap(), ["notes/a.md"]);
        assert_eq!(
            store.list(Some("notes/**")).unwrap(),
            ["notes/a.md", "notes/deep/b.md"]
        );
        assert_eq!(
            store.list(Some("**/*.md")).unwrap(),
            ["notes/a.md", "notes/deep/b.md"]
        );
        assert_eq!(store.list(Some("*.txt")).unwrap(), ["log.txt"]);
        store.delete("log.txt").unwrap();
        store.delete("log.txt").unwrap();
        assert!(!store.exists("log.txt").unwrap());
        assert_eq!(store.write("../x", "").unwrap_err().kind, ErrorKind::Store);
    }

    #[test]
    fn memory_store() {
        exercise(&Store::in_memory());
    }

    #[test]
    fn directory_store() {
        let root = std::env::temp_dir().join(format!("promptforge-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store = Store::directory(&root).unwrap();
        exercise(&store);
        assert!(root.join("notes/deep/b.md").is_file());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn globbing() {
        assert!(glob_match("*", "a.md"));
        assert!(!glob_match("*", "a/b.md"));
        assert!(glob_match("**", "a/b.md"));
        assert!(glob_match("a/**/c", "a/c"));
        assert!(glob_match("a/**/c", "a/b/x/c"));
        assert!(glob_match("a*z", "abcz"));
        assert!(!glob_match("a*z", "ab/cz"));
        assert!(!glob_match("a.md", "b.md"));
    }
}
