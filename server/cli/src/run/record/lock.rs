//! The lock a recording holds while it reads its test file, adds the case and
//! replaces the file: an exclusive advisory lock (`flock`) on `F.lock` beside the
//! test file `F`, so recordings into one file at once take turns and every case
//! lands.
//!
//! Why a lock file and not `F` itself: `F` is replaced by a rename, so a second
//! recording waiting on the old `F` would get its lock once it no longer names the
//! file. `F.lock` is never replaced. It is removed on release, while still locked,
//! so no lock file stays behind; a recording that got the lock of a file removed
//! meanwhile (the path now names another file, or none) locks again. A process
//! killed while it holds the lock leaves `F.lock`, which the next recording takes
//! and removes (the operating system released the lock with the process).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A held lock; dropping it removes the lock file and releases the lock.
#[derive(Debug)]
pub struct Lock {
    file: File,
    path: PathBuf,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub struct LockError {
    /// The lock file.
    pub path: PathBuf,
    /// The operating system's reason.
    pub error: io::Error,
}

/// The lock file of `target`: its path with `.lock` added.
pub fn lock_path(target: &Path) -> PathBuf {
    let mut path = target.as_os_str().to_owned();
    path.push(".lock");
    PathBuf::from(path)
}

/// Waits until this process holds the lock of `target` (a file that may not
/// exist yet).
pub fn lock(target: &Path) -> Result<Lock, LockError> {
    let path = lock_path(target);
    let fail = |error: io::Error| LockError {
        path: path.clone(),
        error,
    };
    loop {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(fail)?;
        file.lock().map_err(fail)?;
        let named = match fs::symlink_metadata(&path) {
            Ok(named) => named,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(fail(error)),
        };
        if !named.is_file() {
            return Err(fail(io::Error::other("not a regular file")));
        }
        if same_file(&named, &file.metadata().map_err(fail)?) {
            return Ok(Lock { file, path });
        }
    }
}

/// True when both describe one file.
#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Without inode numbers the lock file is taken as the one locked.
#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    true
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still held: whoever locks the removed file next sees that
        // the path no longer names it, and locks again.
        #[cfg(unix)]
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_file_is_beside_the_target_and_gone_after_the_release() {
        let dir = std::env::temp_dir().join(format!("pf-record-lock-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("a.test.yaml");
        assert_eq!(lock_path(&target), dir.join("a.test.yaml.lock"));
        let held = lock(&target).unwrap();
        assert!(dir.join("a.test.yaml.lock").is_file());
        // Another holder waits for this one, then holds the lock itself.
        let waiter = std::thread::spawn({
            let target = target.clone();
            move || lock(&target).map(drop).is_ok()
        });
        drop(held);
        assert!(waiter.join().unwrap());
        assert!(!dir.join("a.test.yaml.lock").exists());
        let error = lock(&dir.join("missing/a.test.yaml")).unwrap_err();
        assert_eq!(error.error.kind(), io::ErrorKind::NotFound);
        let _ = fs::remove_dir_all(&dir);
    }
}
