//! The store over a directory on disk (`--store DIR`). Every path is resolved one
//! segment at a time from a handle on DIR, opening each folder and the file itself
//! without following symbolic links (`cap-std`): a link anywhere in a path is
//! refused, so no read, write, append, delete, exists or list ever reaches outside
//! DIR, even when the tree changes while the run goes on. A write replaces the
//! file atomically ([`atomic_file`]); an append adds to it in place.

use std::io::{self, Read, Write};
use std::path::Path;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::atomic_file;

/// Why an operation on a directory store failed.
#[derive(Debug)]
pub enum DirectoryError {
    /// A segment of the path is a symbolic link: the path up to it.
    Link(String),
    /// The file (or a folder on its way) does not exist.
    Missing,
    /// The filesystem failed.
    Io(io::Error),
}

impl From<io::Error> for DirectoryError {
    fn from(error: io::Error) -> Self {
        DirectoryError::Io(error)
    }
}

/// A handle on the store's directory.
#[derive(Debug)]
pub struct DirectoryStore {
    root: Dir,
}

/// The path up to and including segment `index` of `segments`.
fn prefix(segments: &[&str], index: usize) -> String {
    segments
        .get(..=index)
        .map(|s| s.join("/"))
        .unwrap_or_default()
}

/// True when `name` in `dir` is a symbolic link (not followed).
fn is_link(dir: &Dir, name: &str) -> bool {
    dir.symlink_metadata(name)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
}

impl DirectoryStore {
    /// Opens (creating when missing) the directory `root`.
    pub fn open(root: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(root)?;
        let root = Dir::open_ambient_dir(root, ambient_authority())?;
        Ok(DirectoryStore { root })
    }

    /// The folder holding the last segment of `path` (a checked store path), and
    /// that segment; folders on the way are created when `create` is set.
    fn parent<'p>(&self, path: &'p str, create: bool) -> Result<(Dir, &'p str), DirectoryError> {
        let segments: Vec<&str> = path.split('/').collect();
        let Some((last, folders)) = segments.split_last() else {
            return Err(DirectoryError::Missing);
        };
        let mut dir = self.root.try_clone()?;
        for (index, name) in folders.iter().enumerate() {
            let opened = match dir.open_dir_nofollow(name) {
                Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                    match dir.create_dir(name) {
                        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
                        _ => dir.open_dir_nofollow(name),
                    }
                }
                other => other,
            };
            dir = match opened {
                Ok(next) => next,
                Err(_) if is_link(&dir, name) => {
                    return Err(DirectoryError::Link(prefix(&segments, index)))
                }
                Err(e)
                    if e.kind() == io::ErrorKind::NotFound
                        || e.kind() == io::ErrorKind::NotADirectory =>
                {
                    return Err(DirectoryError::Missing)
                }
                Err(e) => return Err(DirectoryError::Io(e)),
            };
        }
        Ok((dir, last))
    }

    /// Opens the file at `path` with `options`, never through a link.
    fn open_file(
        &self,
        path: &str,
        options: &mut OpenOptions,
        create: bool,
    ) -> Result<cap_std::fs::File, DirectoryError> {
        let (dir, name) = self.parent(path, create)?;
        // A link is refused, and a pipe or device is never opened (it could block).
        if let Ok(meta) = dir.symlink_metadata(name) {
            let kind = meta.file_type();
            if kind.is_symlink() {
                return Err(DirectoryError::Link(path.to_owned()));
            }
            if !kind.is_file() && !kind.is_dir() {
                return Err(DirectoryError::Io(io::Error::other("not a regular file")));
            }
        }
        options.follow(FollowSymlinks::No);
        match dir.open_with(name, options) {
            Ok(file) => Ok(file),
            Err(_) if is_link(&dir, name) => Err(DirectoryError::Link(path.to_owned())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(DirectoryError::Missing),
            Err(e) => Err(DirectoryError::Io(e)),
        }
    }

    /// The bytes of the file at `path`; Missing for a folder.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, DirectoryError> {
        let mut file = self.open_file(path, OpenOptions::new().read(true), false)?;
        if file.metadata()?.is_dir() {
            return Err(DirectoryError::Missing);
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Creates or replaces the file at `path`, atomically ([`atomic_file`]): a run
    /// stopped at any point leaves the old content or the new one.
    pub fn write(&self, path: &str, text: &str) -> Result<(), DirectoryError> {
        let (dir, name) = self.parent(path, true)?;
        if is_link(&dir, name) {
            return Err(DirectoryError::Link(path.to_owned()));
        }
        atomic_file::replace(&dir, name, text.as_bytes())?;
        Ok(())
    }

    /// Adds `text` to the end of the file at `path`, creating it when missing.
    pub fn append(&self, path: &str, text: &str) -> Result<(), DirectoryError> {
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        let mut file = self.open_file(path, &mut options, true)?;
        file.write_all(text.as_bytes())?;
        Ok(())
    }

    /// True when `path` is a regular file.
    pub fn exists(&self, path: &str) -> Result<bool, DirectoryError> {
        let (dir, name) = match self.parent(path, false) {
            Ok(found) => found,
            Err(DirectoryError::Missing) => return Ok(false),
            Err(other) => return Err(other),
        };
        match dir.symlink_metadata(name) {
            Ok(meta) if meta.file_type().is_symlink() => Err(DirectoryError::Link(path.to_owned())),
            Ok(meta) => Ok(meta.is_file()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(DirectoryError::Io(e)),
        }
    }

    /// Deletes the file at `path`; Missing when there is none.
    pub fn delete(&self, path: &str) -> Result<(), DirectoryError> {
        let (dir, name) = self.parent(path, false)?;
        if is_link(&dir, name) {
            return Err(DirectoryError::Link(path.to_owned()));
        }
        match dir.remove_file(name) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(DirectoryError::Missing),
            Err(e) => Err(DirectoryError::Io(e)),
        }
    }

    /// Every regular file under the directory, as store paths; links (to files or
    /// folders) and the temporary files of a write that was stopped are skipped, and `keep_going` is asked between entries, so a
    /// cancelled run stops listing a huge tree.
    pub fn list(&self, keep_going: &dyn Fn() -> bool) -> Result<Vec<String>, DirectoryError> {
        let mut found = Vec::new();
        let mut pending = vec![(self.root.try_clone()?, String::new())];
        while let Some((dir, prefix)) = pending.pop() {
            for entry in dir.entries()? {
                if !keep_going() {
                    return Ok(found);
                }
                let entry = entry?;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let relative = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}/{name}")
                };
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    if let Ok(sub) = dir.open_dir_nofollow(&name) {
                        pending.push((sub, relative));
                    }
                } else if kind.is_file() && !atomic_file::is_temporary(&name) {
                    found.push(relative);
                }
            }
        }
        Ok(found)
    }
}
