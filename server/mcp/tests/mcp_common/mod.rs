//! Helpers of the MCP suites (`mcp_everything`, `mcp_prompts`): the reference server
//! `@modelcontextprotocol/server-everything` (found at `$PROMPTFORGE_MCP_EVERYTHING`,
//! its `dist/index.js`, else in `<repo>/target/mcp`, installed there by
//! `scripts/install-mcp-everything.sh` when missing), the stub server, the Host
//! environment the tests map, and the processes a server leaves (or not).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The Plugin id the suites give the server.
pub const ID: &str = "acme/everything";

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The server-everything entry script; fails the test when it is not installed.
pub fn everything() -> PathBuf {
    if let Some(path) = std::env::var_os("PROMPTFORGE_MCP_EVERYTHING") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "PROMPTFORGE_MCP_EVERYTHING={} is not a file",
            path.display()
        );
        return path;
    }
    let path = repo_root()
        .join("target/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    install_once(&path);
    assert!(
        path.is_file(),
        "@modelcontextprotocol/server-everything is not installed at {}: run scripts/install-mcp-everything.sh (or set PROMPTFORGE_MCP_EVERYTHING to its dist/index.js)",
        path.display()
    );
    path
}

/// Runs `scripts/install-mcp-everything.sh` once per test process when the server
/// is not installed yet, so `cargo test --workspace` works on a fresh machine with
/// node and npm (the script pins the version and does nothing when it is there).
pub fn install_once(entry: &Path) {
    static INSTALLED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(|| {
        if entry.is_file() {
            return;
        }
        let status = std::process::Command::new("bash")
            .arg(repo_root().join("scripts/install-mcp-everything.sh"))
            .status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "installing @modelcontextprotocol/server-everything failed ({status:?}); it needs node and npm"
        );
    });
}

/// The stub MCP server (`tests/fixtures/mcp_stub.js`).
pub fn stub() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_stub.js")
}

/// The Host environment of the suites: `CORP_TOKEN` is set, the rest is the process's.
pub fn host_env(name: &str) -> Option<String> {
    match name {
        "CORP_TOKEN" => Some("tok-123".to_owned()),
        _ => std::env::var(name).ok(),
    }
}

/// The Host of `config` with the MCP servers registered as the shipped Host
/// registers them, reading variables through [`host_env`].
pub fn mcp_host(config: promptforge_engine::host::Config) -> promptforge_engine::Host {
    let mut extensions = promptforge_engine::host::Extensions::new();
    promptforge_mcp::register(&mut extensions);
    promptforge_engine::Host::with_extensions(config, &host_env, &extensions).expect("the Host")
}

/// True while `pid` is a live (not zombie) process.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// True once `/proc/{pid}` is gone (the process was reaped).
pub fn gone(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits until `check` holds, at most 5 s (the test fails then, naming `what`).
pub async fn wait_until(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The children of `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// A path `name` in this test process's temporary folder, with no file there.
pub fn temp_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pf-mcp-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// The pid a shell wrote to `file`, once it is there.
pub async fn read_pid(file: &Path) -> u32 {
    wait_until("the pid file", || {
        std::fs::read_to_string(file).is_ok_and(|t| t.trim().parse::<u32>().is_ok())
    })
    .await;
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_default()
}
