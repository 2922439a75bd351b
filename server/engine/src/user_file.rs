//! Reading a file a user names (a prompt, a prompt test and the prompt it names,
//! a configuration, a script of model turns, an arguments file) without being at
//! its mercy: a device, a pipe or a socket is refused before it is opened
//! (reading `/dev/zero` never ends, and opening a pipe waits for a writer), and a
//! file past [`MAX_USER_FILE_BYTES`] is refused after that many bytes instead of
//! filling memory; a stream (stdin) gets the same size limit. Errors are
//! `io::Error`s, so every caller words them as it words the others.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

/// The largest file read: 64 MiB.
pub const MAX_USER_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The file's bytes, as `fs::read` gives them, within the limits above (a
/// folder fails as `fs::read` fails on it).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_at_most(path, MAX_USER_FILE_BYTES)
}

/// [`read`] with a smaller size limit: a file past `limit` bytes (at most
/// [`MAX_USER_FILE_BYTES`]) fails with [`io::ErrorKind::FileTooLarge`], without
/// being read when its size says so, else after `limit` bytes and one more.
pub fn read_at_most(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let limit = limit.min(MAX_USER_FILE_BYTES);
    let metadata = fs::metadata(path)?;
    let kind = metadata.file_type();
    if !kind.is_file() && !kind.is_dir() {
        return Err(io::Error::other("not a regular file"));
    }
    if kind.is_file() && metadata.len() > limit {
        return Err(too_large(limit));
    }
    // Room for the whole file up front: grown by doubling, a 10 MiB prompt held
    // 16 MiB.
    let expected = metadata.len().min(limit) as usize + 1;
    read_into(File::open(path)?, Vec::with_capacity(expected), limit)
}

/// The error of a file or stream past `limit` bytes.
fn too_large(limit: u64) -> io::Error {
    let size = if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    };
    io::Error::new(io::ErrorKind::FileTooLarge, format!("larger than {size}"))
}

/// Everything `stream` gives until it ends, refused past [`MAX_USER_FILE_BYTES`]
/// (after reading that many bytes and one more).
pub fn read_stream(stream: impl Read) -> io::Result<Vec<u8>> {
    read_into(stream, Vec::new(), MAX_USER_FILE_BYTES)
}

fn read_into(stream: impl Read, mut bytes: Vec<u8>, limit: u64) -> io::Result<Vec<u8>> {
    stream.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// The analysis layer's files, read as every file a user names is (the front
/// ends hand this to [`promptforge_analysis::test_file::prompt_of`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct UserFiles;

impl promptforge_analysis::source_files::SourceFiles for UserFiles {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        read(path)
    }
}

/// The file's text, as `fs::read_to_string` gives it, within the limits above.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    read_to_string_at_most(path, MAX_USER_FILE_BYTES)
}

/// [`read_to_string`] with the smaller size limit of [`read_at_most`].
pub fn read_to_string_at_most(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_at_most(path, limit)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn devices_and_pipes_are_refused_before_they_are_read() {
        let error = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(error.to_string(), "not a regular file");
        let dir = std::env::temp_dir().join(format!("pf-user-file-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let pipe = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&pipe).status();
        if made.is_ok_and(|s| s.success()) {
            // Opening it would wait for a writer for ever.
            assert_eq!(read(&pipe).unwrap_err().to_string(), "not a regular file");
        }
        let file = dir.join("prompt.md");
        fs::write(&file, "text").unwrap();
        assert_eq!(read_to_string(&file).unwrap(), "text");
        assert!(read(&dir).is_err());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_stream_is_read_to_the_limit_and_no_further() {
        let limit = MAX_USER_FILE_BYTES as usize;
        assert_eq!(read_stream(&b"text"[..]).unwrap(), b"text");
        assert_eq!(
            read_stream(io::repeat(b'x').take(limit as u64))
                .unwrap()
                .len(),
            limit
        );
        let error = read_stream(io::repeat(0)).unwrap_err();
        assert_eq!(
            (error.kind(), error.to_string()),
            (io::ErrorKind::FileTooLarge, "larger than 64 MiB".to_owned())
        );
    }

    #[test]
    fn a_smaller_limit_refuses_a_larger_file_unread() {
        let dir = std::env::temp_dir().join(format!("pf-user-file-at-most-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("big.test.yaml");
        fs::write(&file, "x".repeat(2048)).unwrap();
        assert_eq!(read_to_string_at_most(&file, 2048).unwrap().len(), 2048);
        let error = read_at_most(&file, 2047).unwrap_err();
        assert_eq!(
            (error.kind(), error.to_string()),
            (
                io::ErrorKind::FileTooLarge,
                "larger than 2047 bytes".to_owned()
            )
        );
        let error = read_at_most(&file, 1024).unwrap_err();
        assert_eq!(error.to_string(), "larger than 1024 bytes");
        // A limit past the largest file read is that one.
        assert_eq!(read_at_most(&file, u64::MAX).unwrap().len(), 2048);
        let _ = fs::remove_dir_all(&dir);
    }
}
