//! Helpers of the end-to-end suites: build and run the real `promptforge`
//! binary, scratch folders, and a readable line diff.
//!
//! The binary belongs to another package, so `CARGO_BIN_EXE_promptforge` does not
//! exist here: [`binary`] builds it once per test process with
//! `cargo build -p promptforge --features promptforge/fault-injection
//! --message-format=json` and takes the executable's
//! path from cargo's own report, which honours every way of moving the target
//! folder (`CARGO_TARGET_DIR`, `build.target-dir`, ...).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

pub mod agreement;
pub mod dap_client;
pub mod diff;
pub mod lsp_client;
pub mod module_graph;
pub mod perf;

/// The workspace's root folder.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The `promptforge` binary, built (once per process) in the dev profile.
///
/// Panics with cargo's output if the build fails: the suites cannot run without it.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(build_binary)
}

fn build_binary() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "build",
            "-q",
            "-p",
            "promptforge",
            "--bin",
            "promptforge",
            // The protocol tests make handlers panic or wait on purpose.
            "--features",
            "promptforge/fault-injection",
            "--message-format=json",
        ])
        .output()
        .expect("cargo can be started");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "building promptforge failed:\n{}\n{}",
        stdout,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| {
            msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "promptforge"
        })
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported the promptforge executable")
}

/// The `promptforge` binary built in the release profile, for benchmarks (the
/// debug one's figures say little about its speed); built by each call.
pub fn release_binary() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "build",
            "-q",
            "--release",
            "-p",
            "promptforge",
            "--bin",
            "promptforge",
            "--message-format=json",
        ])
        .output()
        .expect("cargo can be started");
    assert!(
        output.status.success(),
        "building promptforge failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| {
            msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "promptforge"
        })
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported the promptforge executable")
}

/// What one run of the binary gave.
#[derive(Debug, Clone)]
pub struct Run {
    /// Everything printed on stdout.
    pub stdout: String,
    /// Everything printed on stderr.
    pub stderr: String,
    /// The exit code (None if killed by a signal).
    pub code: Option<i32>,
}

/// Runs `promptforge ARGS...` in folder `dir` and waits for it.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    let mut command = Command::new(binary());
    isolate(&mut command);
    let output = command
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the promptforge binary can be started");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

/// Keeps a started `promptforge` away from the machine's own configuration and
/// trust: no `$PROMPTFORGE_CONFIG` or `$PROMPTFORGE_TRUST`, and empty user
/// configuration and state folders (a user's `config.toml` lies under every
/// project's, and `promptforge trust` records live in the state folder).
pub fn isolate(command: &mut Command) -> &mut Command {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    let home = HOME.get_or_init(|| {
        let home = std::env::temp_dir().join(format!("pf-tests-home-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(home.join("config")).expect("a scratch home");
        std::fs::create_dir_all(home.join("state")).expect("a scratch home");
        home
    });
    command
        .env_remove("PROMPTFORGE_CONFIG")
        .env_remove("PROMPTFORGE_TRUST")
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
}

/// The address space a [`run_bounded`] process gets, in KiB (2 GiB).
const BOUNDED_MEMORY_KIB: u64 = 2 * 1024 * 1024;

/// Runs `promptforge ARGS...` in `dir` as [`run_in`] does (no configuration of
/// the user's), with `stdin`, but bounded: through `sh`, with an address space
/// of 2 GiB (`ulimit -v`), killed when it has not ended after `deadline` (its code
/// is then None). For the tests of hostile input, whose regression must fail the
/// test rather than take the machine down. Also returns how long it ran.
#[cfg(unix)]
pub fn run_bounded(
    dir: &Path,
    args: &[&str],
    stdin: std::process::Stdio,
    deadline: std::time::Duration,
) -> (Run, std::time::Duration) {
    use std::io::Read;
    use std::process::Stdio;
    let started = std::time::Instant::now();
    let mut command = Command::new("sh");
    let mut child = isolate(&mut command)
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "ulimit -v {BOUNDED_MEMORY_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(binary())
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh can be started");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break Some(status);
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let run = Run {
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        code: status.and_then(|s| s.code()),
    };
    (run, elapsed)
}

/// A scratch folder under the system's temporary folder, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    root: PathBuf,
}

impl Scratch {
    /// A new, empty scratch folder; `label` makes its name readable.
    pub fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!(
            "promptforge-tests-{}-{label}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("the scratch folder can be created");
        Scratch { root }
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Writes `contents` to `relative` inside the folder, creating parent folders.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent folders can be created");
        }
        std::fs::write(&path, contents).expect("the scratch file can be written");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
