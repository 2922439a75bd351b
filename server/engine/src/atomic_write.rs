//! Replacing a file's content so that a crash, a kill or a full disk leaves
//! either the old content or the new one, never a mix: the bytes go to a
//! temporary file beside the target, which is synced and renamed over it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` as the whole content of `path`, atomically: a temporary file in
/// the same folder, synced, renamed over `path`, then the folder synced. The
/// target keeps its permissions; on failure the temporary file is removed and the
/// target is untouched.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let (temporary, file) = create_beside(&folder, &name.to_string_lossy())?;
    let written = (|| {
        let mut file = file;
        if let Ok(existing) = fs::metadata(path) {
            file.set_permissions(existing.permissions())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(error);
    }
    // The rename is durable once the folder's entry is.
    if let Ok(dir) = File::open(&folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A new file `.{name}.{pid}.{n}.tmp` in `folder`, created exclusively.
fn create_beside(folder: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    let mut attempt = 0u32;
    loop {
        let candidate = folder.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_is_replaced_and_nothing_is_left_beside_it() {
        let dir = std::env::temp_dir().join(format!("pf-atomic-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cases.yaml");
        replace(&file, b"first").unwrap();
        replace(&file, b"second").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"second");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        // A target that cannot be replaced (a folder) fails and leaves no temporary.
        let folder = dir.join("folder");
        fs::create_dir(&folder).unwrap();
        assert!(replace(&folder, b"x").is_err());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
        let _ = fs::remove_dir_all(&dir);
    }
}
