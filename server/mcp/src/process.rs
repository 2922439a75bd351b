//! The MCP server's child process: started in a process group of its own, with
//! stdin/stdout as the MCP stdio transport and stderr kept (its last line only) for
//! failure reasons; killed with its whole group, and reaped. Every server started
//! is known (weakly) until it is dropped, so a program that ends can kill those
//! still running ([`kill_all`]).

use std::path::PathBuf;
use std::process::ExitStatus;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

/// The longest stderr line kept for a failure reason, in characters.
const STDERR_LINE_CHARS: usize = 200;
/// The bytes of a stderr line read before the rest of it is dropped.
const STDERR_LINE_BYTES: usize = 1024;

/// How to start one MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program: a bare name is looked up on the child's `PATH`; a relative path
    /// has already been resolved against the configuration's folder.
    pub program: PathBuf,
    /// Its arguments, as written.
    pub args: Vec<String>,
    /// The child's whole environment (nothing else is inherited).
    pub env: Vec<(String, String)>,
    /// The working directory (the configuration's folder), or None to keep the Host's.
    pub cwd: Option<PathBuf>,
}

/// A started server process. Dropping it (or [`ServerProcess::kill`]) kills the
/// process and everything in its process group, then reaps the process.
pub(crate) struct ServerProcess {
    pid: Option<u32>,
    child: Mutex<Option<Child>>,
    stderr_tail: Arc<Mutex<String>>,
    /// Fires when stderr ended.
    stderr_done: CancellationToken,
}

/// The transport halves of a started server.
pub(crate) type Pipes = (ChildStdout, ChildStdin);

/// The servers started and not dropped yet.
static STARTED: Mutex<Vec<Weak<ServerProcess>>> = Mutex::new(Vec::new());

/// Kills every server started and not dropped yet (one already killed is left).
pub(crate) fn kill_all() {
    let started = std::mem::take(&mut *lock(&STARTED));
    for process in started.iter().filter_map(Weak::upgrade) {
        process.kill();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ServerProcess {
    /// Starts the server; the error is the operating system's reason.
    pub(crate) fn spawn(launch: &Launch) -> std::io::Result<(Arc<ServerProcess>, Pipes)> {
        let mut command = Command::new(&launch.program);
        command
            .args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &launch.cwd {
            command.current_dir(dir);
        }
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn()?;
        let missing = || std::io::Error::other("the child's stdio was not piped");
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr_tail = Arc::new(Mutex::new(String::new()));
        let stderr_done = CancellationToken::new();
        match child.stderr.take() {
            Some(stderr) => {
                let done = stderr_done.clone().drop_guard();
                let tail = stderr_tail.clone();
                tokio::spawn(async move {
                    drain_stderr(stderr, tail).await;
                    drop(done);
                });
            }
            None => stderr_done.cancel(),
        }
        let process = Arc::new(ServerProcess {
            pid: child.id(),
            child: Mutex::new(Some(child)),
            stderr_tail,
            stderr_done,
        });
        let mut started = lock(&STARTED);
        started.retain(|known| known.strong_count() > 0);
        started.push(Arc::downgrade(&process));
        Ok((process, (stdout, stdin)))
    }

    /// The last non-empty line the server wrote to stderr, shortened, once stderr
    /// ended or `grace` passed.
    pub(crate) async fn stderr_line(&self, grace: Duration) -> Option<String> {
        let _ = tokio::time::timeout(grace, self.stderr_done.cancelled()).await;
        let tail = lock(&self.stderr_tail);
        (!tail.is_empty()).then(|| tail.clone())
    }

    /// The exit status, when the process exits within `grace` (it is then reaped).
    pub(crate) async fn exit_status(&self, grace: Duration) -> Option<ExitStatus> {
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            if let Some(child) = lock(&self.child).as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Some(status);
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Kills the process group and the process, and reaps the process in the
    /// background (or leaves that to tokio's orphan reaping outside a runtime).
    pub(crate) fn kill(&self) {
        let child = lock(&self.child).take();
        let Some(mut child) = child else {
            return;
        };
        #[cfg(unix)]
        if let Some(pid) = self
            .pid
            .and_then(|p| i32::try_from(p).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            // The group id is the child's pid, still reserved: the child is not reaped yet.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = child.start_kill();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = child.wait().await;
            });
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Reads stderr to its end (so the server never blocks writing to it), keeping the
/// last non-empty line, shortened.
async fn drain_stderr(mut stderr: ChildStderr, tail: Arc<Mutex<String>>) {
    let mut chunk = [0u8; 4096];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let read = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        for &byte in chunk.iter().take(read) {
            if byte == b'\n' {
                keep_line(&line, &tail);
                line.clear();
            } else if line.len() < STDERR_LINE_BYTES {
                line.push(byte);
            }
        }
    }
    keep_line(&line, &tail);
}

fn keep_line(line: &[u8], tail: &Mutex<String>) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    *lock(tail) = promptforge_syntax::excerpt::at_most(text, STDERR_LINE_CHARS);
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// True once `pid` has exited (a zombie counts: it runs no more).
    fn ended(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
    }

    #[tokio::test]
    async fn kill_all_ends_every_server_still_running_and_what_it_started() {
        let launch = Launch {
            program: "sh".into(),
            args: vec!["-c".into(), "sleep 600; exit 0".into()],
            env: std::env::var("PATH")
                .map(|path| vec![("PATH".to_owned(), path)])
                .unwrap_or_default(),
            cwd: None,
        };
        let (first, _first_pipes) = ServerProcess::spawn(&launch).unwrap();
        let (second, _second_pipes) = ServerProcess::spawn(&launch).unwrap();
        let shells = [first.pid.unwrap(), second.pid.unwrap()];
        kill_all();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !shells.iter().all(|&pid| ended(pid)) {
            assert!(
                std::time::Instant::now() < deadline,
                "the servers still run"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Their groups went with them: no `sleep` of theirs is left.
        for shell in shells {
            let left = std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
                .filter(|stat| {
                    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                    // `state ppid pgrp`: the process group is the third field.
                    let fields: Vec<&str> = after.split_whitespace().collect();
                    fields.get(2) == Some(&shell.to_string().as_str())
                        && fields.first() != Some(&"Z")
                })
                .count();
            assert_eq!(left, 0, "the process group {shell} still runs");
        }
    }
}
