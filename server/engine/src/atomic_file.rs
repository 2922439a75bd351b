//! Replacing a file's content atomically: the new content is written to a
//! temporary file in the same folder, flushed to the disk, and renamed over the
//! file; then the folder is flushed, so the rename itself lasts. Whatever happens
//! on the way (the process killed, the disk full, an error), the file holds its
//! old content or its new one, never a part of either, and a failure before the
//! rename removes the temporary file. The replaced file keeps its permissions
//! (not its owner: the new file is the writer's).
//!
//! `run --record` (a test file) and a directory store's `store.write` replace
//! files through here. A file a process killed mid-write leaves behind is named
//! as [`is_temporary`] says, so a folder listing can skip it.

use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions};

/// How the name of every temporary file starts.
const TEMPORARY_PREFIX: &str = ".promptforge-tmp.";

/// How the name of every temporary file ends: never as the replaced file's does,
/// so a folder walk looking for prompts (`.md`) or test files (`.test.yaml`)
/// never takes one for the file it replaces.
const TEMPORARY_SUFFIX: &str = ".tmp";

/// The bytes of the replaced file's name a temporary file's name repeats (so that
/// it stays within the longest name a folder takes).
const NAME_BYTES_KEPT: usize = 64;

/// How many names are tried for the temporary file before giving up.
const TEMPORARY_TRIES: u32 = 100;

/// True when `name` is the name of a temporary file of this module.
pub fn is_temporary(name: &str) -> bool {
    name.starts_with(TEMPORARY_PREFIX) && name.ends_with(TEMPORARY_SUFFIX)
}

/// Replaces (or creates) the file at `path` with `bytes`. The last component of
/// `path` is replaced as it is: a symbolic link there is replaced by the file
/// (resolve it first to write the file it names).
pub fn replace_at(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let dir = Dir::open_ambient_dir(folder, ambient_authority())?;
    replace(&dir, name, bytes)
}

/// Replaces (or creates) the file `name` in `dir` with `bytes`.
pub fn replace(dir: &Dir, name: &str, bytes: &[u8]) -> io::Result<()> {
    replace_with(dir, name, |file| file.write_all(bytes))
}

/// Replaces (or creates) the file `name` in `dir` with what `write` writes to
/// the temporary file. An existing `name` must be a regular file (not a link, a
/// folder or a device) that this process may write; any error before the rename,
/// `write`'s included, leaves it as it was and removes the temporary file.
pub fn replace_with(
    dir: &Dir,
    name: &str,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let existing = match dir.symlink_metadata(name) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(meta) = &existing {
        if !meta.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        // A file its mode keeps from this process is not replaced either.
        let mut options = OpenOptions::new();
        options.write(true).follow(FollowSymlinks::No);
        dir.open_with(name, &options)?;
    }
    let (temporary, mut file) = create_temporary(dir, name)?;
    let written = (|| {
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        write(&mut file)?;
        file.sync_all()?;
        dir.rename(&temporary, dir, name)
    })();
    if let Err(error) = written {
        let _ = dir.remove_file(&temporary);
        return Err(error);
    }
    sync_folder(dir)
}

/// A new temporary file in `dir` for replacing `name`, and its name.
fn create_temporary(dir: &Dir, name: &str) -> io::Result<(String, File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut kept = NAME_BYTES_KEPT.min(name.len());
    while !name.is_char_boundary(kept) {
        kept -= 1;
    }
    let stem = name.get(..kept).unwrap_or_default();
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut tries = 0;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let temporary = format!("{TEMPORARY_PREFIX}{pid}.{n}.{stem}{TEMPORARY_SUFFIX}");
        match dir.open_with(&temporary, &options) {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < TEMPORARY_TRIES => {
                tries += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Flushes the folder's entries to the disk (a filesystem that cannot flush a
/// folder is taken at its word). The folder is opened again for reading: `dir`
/// may be a handle that names it only (`O_PATH`), which cannot be flushed.
fn sync_folder(dir: &Dir) -> io::Result<()> {
    #[cfg(unix)]
    match dir.open(".")?.sync_all() {
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported
            ) => {}
        other => return other,
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new empty folder under the temporary folder, and a handle on it.
    fn folder(label: &str) -> (std::path::PathBuf, Dir) {
        let path = std::env::temp_dir().join(format!("pf-atomic-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        let dir = Dir::open_ambient_dir(&path, ambient_authority()).unwrap();
        (path, dir)
    }

    /// The names in the folder, sorted.
    fn names(path: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_created_then_replaced_and_no_temporary_file_stays() {
        let (path, dir) = folder("replace");
        replace(&dir, "a.txt", b"old").unwrap();
        replace_at(&path.join("a.txt"), b"new").unwrap();
        assert_eq!(std::fs::read(path.join("a.txt")).unwrap(), b"new");
        assert_eq!(names(&path), ["a.txt"]);
        let _ = std::fs::remove_dir_all(&path);
    }

    #[test]
    fn a_failure_before_the_rename_leaves_the_old_file_and_no_temporary_file() {
        let (path, dir) = folder("failure");
        std::fs::write(path.join("a.txt"), "old content").unwrap();
        let error = replace_with(&dir, "a.txt", |file| {
            file.write_all(b"half of the new")?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "no space left"))
        })
        .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read(path.join("a.txt")).unwrap(), b"old content");
        assert_eq!(names(&path), ["a.txt"]);
        // A new file that fails is not created at all.
        assert!(replace_with(&dir, "b.txt", |_| Err(io::Error::other("no"))).is_err());
        assert_eq!(names(&path), ["a.txt"]);
        let _ = std::fs::remove_dir_all(&path);
    }

    #[test]
    #[cfg(unix)]
    fn the_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (path, dir) = folder("mode");
        let file = path.join("a.sh");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o750)).unwrap();
        replace(&dir, "a.sh", b"new").unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
        let _ = std::fs::remove_dir_all(&path);
    }

    #[test]
    #[cfg(unix)]
    fn links_and_folders_are_not_replaced() {
        let (path, dir) = folder("kinds");
        std::fs::write(path.join("target"), "kept").unwrap();
        std::os::unix::fs::symlink(path.join("target"), path.join("link")).unwrap();
        std::fs::create_dir(path.join("sub")).unwrap();
        for name in ["link", "sub"] {
            let error = replace(&dir, name, b"new").unwrap_err();
            assert_eq!(error.to_string(), "not a regular file", "{name}");
        }
        assert_eq!(std::fs::read(path.join("target")).unwrap(), b"kept");
        assert_eq!(names(&path), ["link", "sub", "target"]);
        let _ = std::fs::remove_dir_all(&path);
    }

    #[test]
    fn temporary_names_are_recognised_and_stay_short() {
        let (path, dir) = folder("names");
        let long = "é".repeat(100);
        let (temporary, _file) = create_temporary(&dir, &long).unwrap();
        assert!(is_temporary(&temporary));
        assert!(temporary.ends_with(".tmp"));
        assert!(temporary.len() < TEMPORARY_PREFIX.len() + 40 + NAME_BYTES_KEPT);
        assert!(!is_temporary("notes.md"));
        let _ = std::fs::remove_dir_all(&path);
    }
}
