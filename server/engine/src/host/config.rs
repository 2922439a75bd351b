//! The Host configuration (`host.md` §1): TOML, found in a fixed order, unknown keys
//! refused with the key and the file's line, secrets only as environment variable names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::trust::{Part, TrustNeed};
use crate::store::StoreLimits;

/// The file name searched from the prompt's folder upward.
pub const PROJECT_FILE: &str = "promptforge.toml";

/// The environment variable naming a configuration file.
pub const CONFIG_ENV: &str = "PROMPTFORGE_CONFIG";

/// Why a configuration could not be used: `{file}:{line}: {message}` (or without the line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, when the problem has one.
    pub line: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    fn render(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{}: {}", self.path.display(), line, self.message),
            None => format!("{}: {}", self.path.display(), self.message),
        }
    }
}

/// The providers a Host model can use (`host.md` §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// An OpenAI-compatible chat completions server.
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
    /// Offline: replies with the last user message.
    Echo,
    /// Replies from a YAML file of turns.
    Script,
}

impl ProviderKind {
    /// The name as written in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Echo => "echo",
            ProviderKind::Script => "script",
        }
    }
}

/// One `[model.NAME]` table, as the layers merged it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// The provider.
    pub provider: ProviderKind,
    /// The server's base URL (openai; anthropic defaults to the public endpoint).
    pub base_url: Option<String>,
    /// The provider's model name (default: the Host model's name).
    pub model: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Seconds before a round times out.
    pub timeout_s: Option<u64>,
    /// Retries on transport errors, 429 and 5xx.
    pub retries: Option<u32>,
    /// The turns file of the `script` provider, resolved against the folder of the
    /// configuration that named it.
    pub path: Option<PathBuf>,
}

/// One `[plugin."ns/name"]` table: an MCP server over stdio, as the layers merged it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PluginConfig {
    /// The command to start.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables of the server's environment: name -> the Host variable that holds the value.
    pub env: BTreeMap<String, String>,
    /// Plugins this one conflicts with.
    pub conflicts: Vec<String>,
    /// The folder of the configuration that named the command: a relative command
    /// and the server's working folder resolve against it.
    pub dir: PathBuf,
}

/// The largest page `fetch` reads when `[web] max_fetch_bytes` is not set: 2 MiB.
pub const DEFAULT_MAX_FETCH_BYTES: u64 = 2 * 1024 * 1024;

/// The `[web]` table: the `promptforge/web` Plugin.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebConfig {
    /// The search API endpoint; search exists only when set.
    pub search_endpoint: Option<String>,
    /// The environment variable holding the search key.
    pub search_key_env: Option<String>,
    /// Whether fetch may reach loopback, private, link-local and unique-local addresses.
    pub allow_private_addresses: bool,
    /// The largest page fetch reads.
    pub max_fetch_bytes: Option<u64>,
}

/// The `[trace]` table: where runs' traces go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraceConfig {
    /// The OTLP/HTTP endpoint every `promptforge run` exports its trace to
    /// (`/v1/traces` is appended unless the path ends in it); none: no export.
    pub otlp_endpoint: Option<String>,
}

/// The `[test]` table: how `promptforge test` keeps live models' answers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TestConfig {
    /// The folder live answers are kept in (`--cache` without the flag),
    /// resolved against the folder of the file that sets it.
    pub cache: Option<PathBuf>,
    /// Kept answers older than this many seconds are asked again.
    pub cache_max_age: Option<u64>,
}

/// The limits of a run (`language.md` §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Lua memory per VM, in MiB.
    pub lua_memory_mib: u64,
    /// Lua instructions per VM.
    pub lua_instructions: u64,
    /// How deep chains nest.
    pub call_depth: u32,
    /// Fanout arms running at once.
    pub fanout_concurrency: u32,
    /// The longest tool output, in bytes.
    pub tool_output_bytes: u64,
    /// The run log's size over the whole run, in bytes (host memory): each line
    /// counts its bytes and what the host keeps for any line
    /// ([`crate::run::context::LOG_LINE_OVERHEAD`]).
    pub log_bytes: u64,
    /// What the in-memory store may hold, in bytes (host memory).
    pub store_bytes: u64,
    /// How many files the in-memory store may hold.
    pub store_files: u64,
    /// A run's trace, in bytes (host memory): each span counts its JSON text and
    /// [`crate::trace::SPAN_OVERHEAD`]; past it, spans are dropped and counted.
    pub trace_bytes: u64,
    /// The sections a run may enter, every walk counted (each jump, `call`,
    /// fall-through, fanout arm and task): a walk whose sections never reach
    /// the instruction budget (a section that jumps to itself) still ends.
    pub walk_sections: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            lua_memory_mib: 64,
            lua_instructions: 200_000_000,
            call_depth: 8,
            fanout_concurrency: 8,
            tool_output_bytes: 1_048_576,
            log_bytes: 16 * 1024 * 1024,
            store_bytes: StoreLimits::default().bytes,
            store_files: StoreLimits::default().files,
            trace_bytes: 16 * 1024 * 1024,
            walk_sections: 100_000,
        }
    }
}

/// A configuration as read and merged (or the built-in defaults).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// The file it came from (the project's over the user's); None for the
    /// built-in defaults.
    pub path: Option<PathBuf>,
    /// The Host model a label without `model:` uses.
    pub default_model: Option<String>,
    /// The Host models by name.
    pub models: BTreeMap<String, ModelConfig>,
    /// The MCP Plugins by id.
    pub plugins: BTreeMap<String, PluginConfig>,
    /// The web Plugin's settings.
    pub web: WebConfig,
    /// The run limits.
    pub limits: Limits,
    /// Where runs' traces go.
    pub trace: TraceConfig,
    /// How `promptforge test` keeps live answers.
    pub test: TestConfig,
    /// The acting parts of a project configuration that is not trusted, withheld
    /// from this configuration (see [`super::trust`]).
    pub withheld: Vec<TrustNeed>,
}

impl Config {
    /// The folder relative paths in the file are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.path
            .as_deref()
            .and_then(Path::parent)
            .map_or_else(PathBuf::new, Path::to_path_buf)
    }

    /// The withheld part that `part` names, when it is withheld.
    pub fn withheld(&self, part: &Part) -> Option<&TrustNeed> {
        self.withheld.iter().find(|need| &need.part == part)
    }
}

/// A configuration file's text, read within the bounds of [`crate::user_file`].
pub(super) fn read_text(path: &Path) -> Result<String, ConfigError> {
    crate::user_file::read_to_string(path).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        line: None,
        message: format!("cannot be read: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("conf/promptforge.toml"))
    }

    const FULL: &str = r#"default_model = "local"

[model.local]
provider = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "qwen2.5-7b-instruct"
api_key_env = "LOCAL_API_KEY"
timeout_s = 120
retries = 2

[model.claude]
provider = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "ANTHROPIC_API_KEY"

[plugin."io.github.corp/mcp"]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { TOKEN_ENV = "CORP_TOKEN" }
conflicts = ["acme/fs"]

[web]
search_endpoint = "https://api.search.brave.com/res/v1/web/search"
search_key_env = "BRAVE_SEARCH_API_KEY"
allow_private_addresses = false
max_fetch_bytes = 2097152

[limits]
lua_memory_mib = 32
lua_instructions = 1000
call_depth = 3
fanout_concurrency = 2
tool_output_bytes = 100
log_bytes = 2000
store_bytes = 3000
store_files = 4
"#;

    #[test]
    fn the_example_of_host_md_reads() {
        let config = parse(FULL).unwrap();
        assert_eq!(config.default_model.as_deref(), Some("local"));
        assert_eq!(config.models["local"].provider, ProviderKind::Openai);
        assert_eq!(config.models["local"].timeout_s, Some(120));
        assert_eq!(
            config.models["claude"].api_key_env.as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(config.plugins["io.github.corp/mcp"].conflicts, ["acme/fs"]);
        assert_eq!(config.web.max_fetch_bytes, Some(2_097_152));
        assert_eq!(
            config.limits,
            Limits {
                lua_memory_mib: 32,
                lua_instructions: 1000,
                call_depth: 3,
                fanout_concurrency: 2,
                tool_output_bytes: 100,
                log_bytes: 2000,
                store_bytes: 3000,
                store_files: 4,
                trace_bytes: Limits::default().trace_bytes,
                walk_sections: Limits::default().walk_sections,
            }
        );
        assert_eq!(config.base_dir(), PathBuf::from("conf"));
    }

    #[test]
    fn defaults_are_the_spec_limits() {
        let limits = parse("").unwrap().limits;
        assert_eq!(limits, Limits::default());
        assert_eq!(limits.lua_memory_mib, 64);
        assert_eq!(limits.lua_instructions, 200_000_000);
        assert_eq!((limits.call_depth, limits.fanout_concurrency), (8, 8));
        assert_eq!(limits.tool_output_bytes, 1_048_576);
    }

    #[test]
    fn unknown_keys_name_the_key_and_the_line() {
        let error = parse(
            "default_model = \"x\"\n\n[model.x]\nprovider = \"echo\"\napi_key = \"sk-secret\"\n",
        )
        .unwrap_err();
        assert_eq!(error.line, Some(5));
        assert!(
            error.message.contains("unknown field `api_key`"),
            "{}",
            error.message
        );
        assert!(error
            .to_string()
            .starts_with("conf/promptforge.toml:5: unknown field `api_key`"));
        let error = parse("colour = 1\n").unwrap_err();
        assert_eq!(error.line, Some(1));
        assert!(error.message.contains("unknown field `colour`"));
        let error = parse("[limits]\nlua_memory = 3\n").unwrap_err();
        assert_eq!(error.line, Some(2));
        assert!(error.message.contains("unknown field `lua_memory`"));
    }

    #[test]
    fn bad_values_are_refused_at_their_line() {
        let error = parse("[model.a]\nprovider = \"gemini\"\n").unwrap_err();
        assert_eq!(error.line, Some(2));
        assert!(
            error.message.contains("unknown variant `gemini`"),
            "{}",
            error.message
        );
        let error = parse("[limits]\n\ncall_depth = 0\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "conf/promptforge.toml:3: limits.call_depth must be at least 1"
        );
        let error = parse("[model.s]\nprovider = \"script\"\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "conf/promptforge.toml:1: model.s: the script provider needs path = \"...\""
        );
    }
}
