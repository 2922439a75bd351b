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
    let output = Command::new(binary())
        .current_dir(dir)
        .args(args)
        .env_remove("PROMPTFORGE_CONFIG")
        .output()
        .expect("the promptforge binary can be started");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
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
