//! Helpers of the MCP suites (`mcp_everything`, `mcp_prompts`): the reference server
//! `@modelcontextprotocol/server-everything` (found at `$PROMPTFORGE_MCP_EVERYTHING`,
//! its `dist/index.js`, else in `<repo>/target/mcp`, installed there by
//! `scripts/install-mcp-everything.sh` when missing), the stub server, and the Host
//! environment the tests map.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

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
