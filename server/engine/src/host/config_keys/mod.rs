//! Every key of `promptforge.toml`, with its type, default and meaning: the one
//! source of the book's table of keys (`docs/src/configuration.md`). The tests
//! beside it hold the table to the reader: every key here is read, and the
//! reader reads no key that is not here.

use super::config::Limits;
use super::layers::limit;
use super::{DEFAULT_RETRIES, DEFAULT_TIMEOUT_S};
use crate::host::config::DEFAULT_MAX_FETCH_BYTES;

/// Where a key is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// At the top of the file.
    Top,
    /// In a `[model.NAME]` table.
    Model,
    /// In a `[plugin."ns/name"]` table.
    Plugin,
    /// In the `[web]` table.
    Web,
    /// In the `[limits]` table.
    Limits,
    /// In the `[trace]` table.
    Trace,
    /// In the `[test]` table.
    Test,
}

impl Table {
    /// The table's header as written in the book (empty at the top).
    pub fn header(self) -> &'static str {
        match self {
            Table::Top => "",
            Table::Model => "[model.NAME]",
            Table::Plugin => "[plugin.\"ns/name\"]",
            Table::Web => "[web]",
            Table::Limits => "[limits]",
            Table::Trace => "[trace]",
            Table::Test => "[test]",
        }
    }
}

/// A key's value when the file does not set it.
#[derive(Debug, Clone, Copy)]
pub enum KeyDefault {
    /// Said in words (`none`, `required`, ...).
    Words(&'static str),
    /// The number the Host uses.
    Number(fn() -> u64),
}

/// One key of the configuration.
#[derive(Debug, Clone, Copy)]
pub struct ConfigKey {
    /// Where it is written.
    pub table: Table,
    /// Its name.
    pub key: &'static str,
    /// The type of its value, in words.
    pub kind: &'static str,
    /// Its value when not set.
    pub default: KeyDefault,
    /// What it does.
    pub what: &'static str,
    /// A value it may take, as TOML (read by the tests).
    pub example: &'static str,
}

const fn key(
    table: Table,
    key: &'static str,
    kind: &'static str,
    default: KeyDefault,
    what: &'static str,
    example: &'static str,
) -> ConfigKey {
    ConfigKey {
        table,
        key,
        kind,
        default,
        what,
        example,
    }
}

/// The default of the `[limits]` key named `name`.
macro_rules! limit_default {
    ($name:literal) => {
        KeyDefault::Number(|| limit(&Limits::default(), $name))
    };
}

/// Every key, in the order the book lists them.
pub const KEYS: &[ConfigKey] = &[
    key(Table::Top, "default_model", "string", KeyDefault::Words("none"), "the model a label without `model:` uses", "\"local\""),
    key(Table::Model, "provider", "`openai`, `anthropic`, `echo`, `script`", KeyDefault::Words("required"), "how the model is reached", "\"openai\""),
    key(Table::Model, "base_url", "URL", KeyDefault::Words("the provider's public API"), "the server to send requests to (off this machine, needs trust in a project file)", "\"http://127.0.0.1:8080/v1\""),
    key(Table::Model, "model", "string", KeyDefault::Words("none"), "the model name the server knows", "\"qwen2.5-7b-instruct\""),
    key(Table::Model, "api_key_env", "string", KeyDefault::Words("none"), "the environment variable holding the key (needs trust in a project file)", "\"OPENAI_API_KEY\""),
    key(Table::Model, "timeout_s", "integer", KeyDefault::Number(|| DEFAULT_TIMEOUT_S), "one request's deadline, in seconds: the whole request, its streamed reply included (a retry gets a new one)", "30"),
    key(Table::Model, "retries", "integer", KeyDefault::Number(|| u64::from(DEFAULT_RETRIES)), "retries of a failed request", "0"),
    key(Table::Model, "path", "path", KeyDefault::Words("required for `script`"), "the turns file of a `script` model, relative to the configuration's folder", "\"turns.yaml\""),
    key(Table::Plugin, "command", "string", KeyDefault::Words("required"), "the MCP server's program (needs trust in a project file)", "\"npx\""),
    key(Table::Plugin, "args", "list of strings", KeyDefault::Words("`[]`"), "its arguments", "[\"-y\", \"server\"]"),
    key(Table::Plugin, "env", "table", KeyDefault::Words("`{}`"), "variables the server gets, each named after one of the Host's (`{ TOKEN = \"MY_TOKEN\" }`)", "{ TOKEN = \"MY_TOKEN\" }"),
    key(Table::Plugin, "conflicts", "list of Plugin ids", KeyDefault::Words("`[]`"), "Plugins it cannot be activated with", "[\"acme/other\"]"),
    key(Table::Web, "search_endpoint", "URL", KeyDefault::Words("none"), "turns on `promptforge/web/search` (off this machine, needs trust in a project file)", "\"https://search.example/api\""),
    key(Table::Web, "search_key_env", "string", KeyDefault::Words("none"), "the variable holding the search key", "\"SEARCH_KEY\""),
    key(Table::Web, "allow_private_addresses", "boolean", KeyDefault::Words("`false`"), "lets `fetch` reach loopback and private addresses", "true"),
    key(Table::Web, "max_fetch_bytes", "integer", KeyDefault::Number(|| DEFAULT_MAX_FETCH_BYTES), "the most of a page `fetch` reads", "65536"),
    key(Table::Limits, "lua_memory_mib", "integer", limit_default!("lua_memory_mib"), "each Lua VM's memory", "32"),
    key(Table::Limits, "lua_instructions", "integer", limit_default!("lua_instructions"), "the instructions each Lua VM (a section, chain or arm) may execute", "1000000"),
    key(Table::Limits, "call_depth", "integer", limit_default!("call_depth"), "how deep `call` may nest", "4"),
    key(Table::Limits, "fanout_concurrency", "integer", limit_default!("fanout_concurrency"), "fanout arms running at once", "2"),
    key(Table::Limits, "tool_output_bytes", "integer", limit_default!("tool_output_bytes"), "one tool output's size", "4096"),
    key(Table::Limits, "log_bytes", "integer", limit_default!("log_bytes"), "the run log (each line counts 64 bytes more)", "65536"),
    key(Table::Limits, "store_bytes", "integer", limit_default!("store_bytes"), "what the in-memory store holds", "1048576"),
    key(Table::Limits, "store_files", "integer", limit_default!("store_files"), "files in the in-memory store", "100"),
    key(Table::Limits, "trace_bytes", "integer", limit_default!("trace_bytes"), "a run's trace (each span counts 256 bytes more); past it, spans are dropped", "1048576"),
    key(Table::Limits, "walk_sections", "integer", limit_default!("walk_sections"), "the sections a run may enter, over all its walks (each jump, `call`, fall-through, fanout arm and task enters one)", "10000"),
    key(Table::Trace, "otlp_endpoint", "URL", KeyDefault::Words("none"), "the OpenTelemetry collector (OTLP/HTTP) `promptforge run` exports every run's trace to; `/v1/traces` is appended unless the path ends in it (needs trust in a project file)", "\"http://127.0.0.1:4318\""),
    key(Table::Test, "cache", "path", KeyDefault::Words("none"), "the folder `promptforge test` keeps live models' answers in, as `--cache` does, relative to the configuration's folder (outside it, needs trust in a project file); `--cache` and `--no-cache` win over it", "\"answers\""),
    key(Table::Test, "cache_max_age", "integer", KeyDefault::Words("none (for ever)"), "kept answers older than this many seconds are asked again, as `--cache-max-age` does", "86400"),
];

impl KeyDefault {
    /// The default as the book writes it.
    pub fn text(self) -> String {
        match self {
            KeyDefault::Words(words) => words.to_owned(),
            KeyDefault::Number(number) => number().to_string(),
        }
    }
}

/// The book's table of every key (Markdown, one row per key, ending in a newline).
pub fn markdown_table() -> String {
    let mut out = String::from("| key | type | default | what |\n| --- | --- | --- | --- |\n");
    for k in KEYS {
        let name = match k.table {
            Table::Top => format!("`{}`", k.key),
            table => format!("`{} {}`", table.header(), k.key),
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {} |\n",
            k.kind,
            k.default.text(),
            k.what
        ));
    }
    out
}

#[cfg(test)]
mod tests;
