//! The Host configuration (`host.md` §1): TOML, found in a fixed order, unknown keys
//! refused with the key and the file's line, secrets only as environment variable names.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

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

/// One `[model.NAME]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// The turns file of the `script` provider, relative to the configuration's folder.
    pub path: Option<String>,
}

/// One `[plugin."ns/name"]` table: an MCP server over stdio.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// The command to start.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables of the server's environment: name -> the Host variable that holds the value.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Plugins this one conflicts with.
    #[serde(default)]
    pub conflicts: Vec<String>,
}

/// The `[web]` table: the `promptforge/web` Plugin.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    /// The search API endpoint; search exists only when set.
    pub search_endpoint: Option<String>,
    /// The environment variable holding the search key.
    pub search_key_env: Option<String>,
    /// Whether fetch may reach loopback, private, link-local and unique-local addresses.
    #[serde(default)]
    pub allow_private_addresses: bool,
    /// The largest page fetch reads.
    pub max_fetch_bytes: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    lua_memory_mib: Option<Spanned<u64>>,
    lua_instructions: Option<Spanned<u64>>,
    call_depth: Option<Spanned<u64>>,
    fanout_concurrency: Option<Spanned<u64>>,
    tool_output_bytes: Option<Spanned<u64>>,
    log_bytes: Option<Spanned<u64>>,
    store_bytes: Option<Spanned<u64>>,
    store_files: Option<Spanned<u64>>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    default_model: Option<String>,
    #[serde(default)]
    model: BTreeMap<String, ModelConfig>,
    #[serde(default)]
    plugin: BTreeMap<String, PluginConfig>,
    web: Option<WebConfig>,
    limits: Option<LimitsFile>,
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
            store_bytes: 256 * 1024 * 1024,
            store_files: 100_000,
        }
    }
}

/// A configuration as read (or the built-in defaults).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// The file it came from; None for the built-in defaults.
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
}

impl Config {
    /// The folder relative paths in the file are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.path
            .as_deref()
            .and_then(Path::parent)
            .map_or_else(PathBuf::new, Path::to_path_buf)
    }

    /// Reads and checks the configuration file at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = crate::user_file::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot be read: {e}"),
        })?;
        Config::parse(&text, path)
    }

    /// Parses configuration `text` read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let error_at = |span: Option<Range<usize>>, message: String| ConfigError {
            path: path.to_path_buf(),
            line: span.map(|s| line_of(text, s.start)),
            message,
        };
        let file: ConfigFile = toml::from_str(text)
            .map_err(|e| error_at(e.span(), e.message().trim_end().to_owned()))?;
        let mut limits = Limits::default();
        if let Some(given) = file.limits {
            let pick = |value: Option<Spanned<u64>>, key: &str, into: &mut u64| {
                if let Some(value) = value {
                    let span = value.span();
                    let number = value.into_inner();
                    if number == 0 {
                        return Err(error_at(
                            Some(span),
                            format!("limits.{key} must be at least 1"),
                        ));
                    }
                    *into = number;
                }
                Ok(())
            };
            pick(
                given.lua_memory_mib,
                "lua_memory_mib",
                &mut limits.lua_memory_mib,
            )?;
            pick(
                given.lua_instructions,
                "lua_instructions",
                &mut limits.lua_instructions,
            )?;
            pick(
                given.tool_output_bytes,
                "tool_output_bytes",
                &mut limits.tool_output_bytes,
            )?;
            pick(given.log_bytes, "log_bytes", &mut limits.log_bytes)?;
            pick(given.store_bytes, "store_bytes", &mut limits.store_bytes)?;
            pick(given.store_files, "store_files", &mut limits.store_files)?;
            let mut depth = u64::from(limits.call_depth);
            pick(given.call_depth, "call_depth", &mut depth)?;
            limits.call_depth = u32::try_from(depth).unwrap_or(u32::MAX);
            let mut concurrency = u64::from(limits.fanout_concurrency);
            pick(
                given.fanout_concurrency,
                "fanout_concurrency",
                &mut concurrency,
            )?;
            limits.fanout_concurrency = u32::try_from(concurrency).unwrap_or(u32::MAX);
        }
        for (name, model) in &file.model {
            let needs_path = model.provider == ProviderKind::Script && model.path.is_none();
            if needs_path {
                return Err(error_at(
                    key_span(text, &format!("[model.{name}]")),
                    format!("model.{name}: the script provider needs path = \"...\""),
                ));
            }
        }
        Ok(Config {
            path: Some(path.to_path_buf()),
            default_model: file.default_model,
            models: file.model,
            plugins: file.plugin,
            web: file.web.unwrap_or_default(),
            limits,
        })
    }
}

fn line_of(text: &str, offset: usize) -> u32 {
    let upto = text.get(..offset.min(text.len())).unwrap_or(text);
    upto.matches('\n').count() as u32 + 1
}

fn key_span(text: &str, needle: &str) -> Option<Range<usize>> {
    text.find(needle).map(|at| at..at + needle.len())
}

/// Where configuration is looked for, in `host.md` §1's order.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// `--config FILE`.
    pub explicit: Option<PathBuf>,
    /// `$PROMPTFORGE_CONFIG`.
    pub env_file: Option<PathBuf>,
    /// The prompt's folder (the search for `promptforge.toml` goes upward from it).
    pub prompt_dir: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
}

impl Discovery {
    /// Discovery from the process environment.
    pub fn from_env(explicit: Option<PathBuf>, prompt_dir: Option<PathBuf>) -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Discovery {
            explicit,
            env_file: var(CONFIG_ENV),
            prompt_dir,
            xdg_config_home: var("XDG_CONFIG_HOME"),
            home: var("HOME"),
        }
    }

    /// The file to read: `--config`, `$PROMPTFORGE_CONFIG` (both must exist), the
    /// nearest `promptforge.toml` upward, the user file; None for the built-in defaults.
    pub fn find(&self) -> Option<PathBuf> {
        if let Some(explicit) = &self.explicit {
            return Some(explicit.clone());
        }
        if let Some(file) = &self.env_file {
            return Some(file.clone());
        }
        if let Some(dir) = &self.prompt_dir {
            let start = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            for folder in start.ancestors() {
                let candidate = folder.join(PROJECT_FILE);
                if candidate.is_file() {
                    return Some(candidate);
                }
            }
        }
        let user = match (&self.xdg_config_home, &self.home) {
            (Some(xdg), _) => Some(xdg.join("promptforge").join("config.toml")),
            (None, Some(home)) => {
                Some(home.join(".config").join("promptforge").join("config.toml"))
            }
            (None, None) => None,
        };
        user.filter(|file| file.is_file())
    }

    /// Finds and loads the configuration, or the built-in defaults when there is none.
    pub fn load(&self) -> Result<Config, ConfigError> {
        match self.find() {
            Some(path) => Config::load(&path),
            None => Ok(Config::default()),
        }
    }
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

    #[test]
    fn discovery_order() {
        let root =
            std::env::temp_dir().join(format!("promptforge-discovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let prompts = root.join("project/prompts/deep");
        std::fs::create_dir_all(&prompts).unwrap();
        std::fs::create_dir_all(root.join("xdg/promptforge")).unwrap();
        std::fs::create_dir_all(root.join("home/.config/promptforge")).unwrap();
        std::fs::write(root.join("xdg/promptforge/config.toml"), "").unwrap();
        std::fs::write(root.join("home/.config/promptforge/config.toml"), "").unwrap();
        let mut discovery = Discovery {
            explicit: None,
            env_file: None,
            prompt_dir: Some(prompts.clone()),
            xdg_config_home: Some(root.join("xdg")),
            home: Some(root.join("home")),
        };
        assert_eq!(
            discovery.find(),
            Some(root.join("xdg/promptforge/config.toml"))
        );
        discovery.xdg_config_home = None;
        assert_eq!(
            discovery.find(),
            Some(root.join("home/.config/promptforge/config.toml"))
        );
        std::fs::write(root.join("project/promptforge.toml"), "").unwrap();
        let found = discovery.find().unwrap();
        assert!(found.ends_with("project/promptforge.toml"), "{found:?}");
        discovery.env_file = Some(root.join("env.toml"));
        assert_eq!(discovery.find(), Some(root.join("env.toml")));
        discovery.explicit = Some(root.join("explicit.toml"));
        assert_eq!(discovery.find(), Some(root.join("explicit.toml")));
        let missing = discovery.load().unwrap_err();
        assert!(missing
            .to_string()
            .contains("explicit.toml: cannot be read"));
        let none = Discovery::default();
        assert_eq!(none.load().unwrap(), Config::default());
        let _ = std::fs::remove_dir_all(&root);
    }
}
