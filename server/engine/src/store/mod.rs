//! The store (`language.md` §5): the run's filesystem, in memory or a directory on
//! disk, shared by every section, chain, arm and Plugin of the run.
//!
//! - [`glob`]: the `store.list` patterns, matched without backtracking;
//! - [`directory`]: the store over a directory, which never follows a link out of it.
//!
//! The in-memory store lives in the host's memory, outside every VM's ceiling, so
//! it has limits of its own ([`StoreLimits`], `[limits] store_bytes` and
//! `store_files`).

pub mod directory;
pub mod glob;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::error::{EngineError, ErrorKind};
use crate::messages;
use directory::{DirectoryError, DirectoryStore};
pub use glob::glob_match;
use glob::{Pattern, MAX_PATTERN_BYTES};
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

/// How much the in-memory store may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// The bytes of every file together.
    pub bytes: u64,
    /// The number of files.
    pub files: u64,
}

impl Default for StoreLimits {
    /// 256 MiB in at most 100,000 files (`[limits] store_bytes`, `store_files`).
    fn default() -> Self {
        StoreLimits {
            bytes: 256 * 1024 * 1024,
            files: 100_000,
        }
    }
}

/// The in-memory files, with their total size.
#[derive(Debug, Default)]
struct MemoryFiles {
    files: BTreeMap<String, String>,
    bytes: u64,
}

impl MemoryFiles {
    /// Puts `text` at `path` (`append`: after what is there) within `limits`.
    fn put(
        &mut self,
        path: &str,
        text: &str,
        append: bool,
        limits: StoreLimits,
    ) -> StoreResult<()> {
        let old = self.files.get(path).map_or(0, |t| t.len() as u64);
        let added = text.len() as u64;
        let new_total = if append {
            self.bytes.saturating_add(added)
        } else {
            self.bytes.saturating_sub(old).saturating_add(added)
        };
        if new_total > limits.bytes {
            return Err(EngineError::limit(messages::store_bytes_limit(
                limits.bytes,
            )));
        }
        let is_new = !self.files.contains_key(path);
        if is_new && self.files.len() as u64 >= limits.files {
            return Err(EngineError::limit(messages::store_files_limit(
                limits.files,
            )));
        }
        let entry = self.files.entry(path.to_owned()).or_default();
        if append {
            entry.push_str(text);
        } else {
            text.clone_into(entry);
        }
        self.bytes = new_total;
        Ok(())
    }

    fn remove(&mut self, path: &str) {
        if let Some(text) = self.files.remove(path) {
            self.bytes = self.bytes.saturating_sub(text.len() as u64);
        }
    }
}

/// Where the files live.
#[derive(Debug)]
enum Backend {
    Memory(Mutex<MemoryFiles>),
    Directory(DirectoryStore),
}

/// The run's filesystem.
#[derive(Debug)]
pub struct Store {
    backend: Backend,
    limits: Mutex<StoreLimits>,
}

impl Default for Store {
    fn default() -> Self {
        Store::in_memory()
    }
}

impl Store {
    /// An empty store in memory (the default), with the default limits.
    pub fn in_memory() -> Self {
        Store::with_files([])
    }

    /// A store in memory holding `files` (path -> text), for tests.
    pub fn with_files(files: impl IntoIterator<Item = (String, String)>) -> Self {
        let files: BTreeMap<String, String> = files.into_iter().collect();
        let bytes = files.values().map(|t| t.len() as u64).sum();
        Store {
            backend: Backend::Memory(Mutex::new(MemoryFiles { files, bytes })),
            limits: Mutex::new(StoreLimits::default()),
        }
    }

    /// A store over the directory `root` (`--store DIR`); the directory is created when missing.
    pub fn directory(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        Ok(Store {
            backend: Backend::Directory(DirectoryStore::open(&root.into())?),
            limits: Mutex::new(StoreLimits::default()),
        })
    }

    /// Sets how much the in-memory store may hold (a run sets its Host's limits).
    pub fn set_limits(&self, limits: StoreLimits) {
        *self.limits.lock().unwrap_or_else(|p| p.into_inner()) = limits;
    }

    fn limits(&self) -> StoreLimits {
        *self.limits.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn with_memory<T>(files: &Mutex<MemoryFiles>, f: impl FnOnce(&mut MemoryFiles) -> T) -> T {
        let mut guard = files.lock().unwrap_or_else(|poison| poison.into_inner());
        f(&mut guard)
    }

    /// The store error for a directory store's failure at `path`.
    fn directory_error(path: &str, error: DirectoryError) -> EngineError {
        match error {
            DirectoryError::Link(prefix) => store_error(messages::invalid_store_path(
                path,
                &messages::store_symlink_reason(&prefix),
            )),
            DirectoryError::Missing => store_error(messages::no_such_store_file(path)),
            DirectoryError::Io(e) => store_error(messages::store_io(path, &e.to_string())),
        }
    }

    /// The whole text of `path`.
    fn read_all(&self, path: &str) -> StoreResult<String> {
        check_path(path)?;
        match &self.backend {
            Backend::Memory(files) => Self::with_memory(files, |f| f.files.get(path).cloned())
                .ok_or_else(|| store_error(messages::no_such_store_file(path))),
            Backend::Directory(dir) => dir
                .read(path)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .map_err(|e| Self::directory_error(path, e)),
        }
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
                let limits = self.limits();
                Self::with_memory(files, |f| f.put(path, text, false, limits))
            }
            Backend::Directory(dir) => dir
                .write(path, text)
                .map_err(|e| Self::directory_error(path, e)),
        }
    }

    /// `store.append(path, text)`: adds to the end, creating the file when missing.
    pub fn append(&self, path: &str, text: &str) -> StoreResult<()> {
        check_path(path)?;
        match &self.backend {
            Backend::Memory(files) => {
                let limits = self.limits();
                Self::with_memory(files, |f| f.put(path, text, true, limits))
            }
            Backend::Directory(dir) => dir
                .append(path, text)
                .map_err(|e| Self::directory_error(path, e)),
        }
    }

    /// `store.exists(path)`.
    pub fn exists(&self, path: &str) -> StoreResult<bool> {
        check_path(path)?;
        match &self.backend {
            Backend::Memory(files) => Ok(Self::with_memory(files, |f| f.files.contains_key(path))),
            Backend::Directory(dir) => dir.exists(path).map_err(|e| Self::directory_error(path, e)),
        }
    }

    /// `store.delete(path)`: silent when the file is missing.
    pub fn delete(&self, path: &str) -> StoreResult<()> {
        check_path(path)?;
        match &self.backend {
            Backend::Memory(files) => {
                Self::with_memory(files, |f| f.remove(path));
                Ok(())
            }
            Backend::Directory(dir) => match dir.delete(path) {
                Ok(()) | Err(DirectoryError::Missing) => Ok(()),
                Err(e) => Err(Self::directory_error(path, e)),
            },
        }
    }

    /// `store.list([pattern])`: every path, sorted bytewise, that matches the pattern
    /// (`*` within a segment, `**` across segments; no pattern lists everything).
    pub fn list(&self, pattern: Option<&str>) -> StoreResult<Vec<String>> {
        self.list_until(pattern, &CancellationToken::new())
    }

    /// [`Store::list`] that stops with kind `cancelled` as soon as `cancel` fires.
    pub fn list_until(
        &self,
        pattern: Option<&str>,
        cancel: &CancellationToken,
    ) -> StoreResult<Vec<String>> {
        let pattern =
            match pattern {
                None => None,
                Some(p) => Some(Pattern::new(p).ok_or_else(|| {
                    store_error(messages::store_pattern_too_long(MAX_PATTERN_BYTES))
                })?),
            };
        let keep = |path: &String| pattern.as_ref().is_none_or(|p| p.matches(path));
        let mut paths = match &self.backend {
            Backend::Memory(files) => Self::with_memory(files, |f| {
                let mut kept = Vec::new();
                for path in f.files.keys() {
                    if cancel.is_cancelled() {
                        break;
                    }
                    if keep(path) {
                        kept.push(path.clone());
                    }
                }
                kept
            }),
            Backend::Directory(dir) => {
                let mut found = dir
                    .list(&|| !cancel.is_cancelled())
                    .map_err(|e| Self::directory_error(".", e))?;
                found.retain(|p| !cancel.is_cancelled() && keep(p));
                found
            }
        };
        if cancel.is_cancelled() {
            return Err(EngineError::cancelled());
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
        // What a write stopped before its rename leaves is no store file.
        std::fs::write(root.join("notes/.promptforge-tmp.1.0.a.md.tmp"), "half").unwrap();
        assert_eq!(store.list(None).unwrap(), ["notes/a.md", "notes/deep/b.md"]);
        assert_eq!(
            store.write("notes/deep", "x").unwrap_err().message,
            "store file \"notes/deep\" cannot be used: not a regular file"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
