//! The process's standard input and output as the session's streams. A pipe or
//! a socket (how editors start a server: Neovim and VS Code give socket pairs,
//! most other clients pipes) is read and written on the runtime's own threads,
//! as soon as it is ready; anything else (a terminal, a file) goes through
//! tokio's stdio, which hands every read and every write to a blocking thread
//! and back (two thread hand-offs per keystroke that the pipe does not make).

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The session's input stream.
pub type Input = Pin<Box<dyn AsyncRead + Send>>;
/// The session's output stream.
pub type Output = Pin<Box<dyn AsyncWrite + Send>>;

/// Standard input, read where it is ready when it is a pipe or a socket. Must be
/// called inside the tokio runtime.
pub fn input() -> Input {
    #[cfg(unix)]
    if let Some(ready) = unix::reader(std::io::stdin()) {
        return ready;
    }
    Box::pin(tokio::io::stdin())
}

/// Standard output, written where it is ready when it is a pipe or a socket. Must
/// be called inside the tokio runtime.
pub fn output() -> Output {
    #[cfg(unix)]
    if let Some(ready) = unix::writer(std::io::stdout()) {
        return ready;
    }
    Box::pin(tokio::io::stdout())
}

#[cfg(unix)]
mod unix {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    use tokio::net::unix::pipe;

    use super::{Input, Output};

    /// What kind of stream a descriptor is (None when neither, or unknown).
    enum Kind {
        Pipe,
        Socket,
    }

    /// A copy of `fd` (the process's own descriptor stays open) and its kind.
    fn copy_of(fd: impl AsFd) -> Option<(OwnedFd, Kind)> {
        let file = std::fs::File::from(fd.as_fd().try_clone_to_owned().ok()?);
        let kind = file.metadata().ok()?.file_type();
        let owned = OwnedFd::from(file);
        let kind = if kind.is_fifo() {
            Kind::Pipe
        } else if kind.is_socket() {
            Kind::Socket
        } else {
            return None;
        };
        Some((owned, kind))
    }

    /// A socket made non-blocking and registered with the runtime.
    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let socket = std::os::unix::net::UnixStream::from(fd);
        socket.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(socket).ok()
    }

    pub(super) fn reader(fd: impl AsFd) -> Option<Input> {
        match copy_of(fd)? {
            (fd, Kind::Pipe) => Some(Box::pin(pipe::Receiver::from_owned_fd(fd).ok()?)),
            (fd, Kind::Socket) => Some(Box::pin(socket(fd)?)),
        }
    }

    pub(super) fn writer(fd: impl AsFd) -> Option<Output> {
        match copy_of(fd)? {
            (fd, Kind::Pipe) => Some(Box::pin(pipe::Sender::from_owned_fd(fd).ok()?)),
            (fd, Kind::Socket) => Some(Box::pin(socket(fd)?)),
        }
    }
}
