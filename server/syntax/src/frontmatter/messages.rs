//! Every frontmatter message of `language.md` §1 and the Tools chapter, each built by one function.
//!
//! The texts are exact: tests compare them byte for byte.

/// `{what}` of a string field (`name`, `description`, a model's `model`).
pub const EXPECTED_STRING: &str = "a string";
/// `{what}` of an integer field (`promptforge`, `max_tool_iterations`, `max_tokens`).
pub const EXPECTED_INTEGER: &str = "an integer";
/// `{what}` of `temperature`.
pub const EXPECTED_NUMBER: &str = "a number";
/// `{what}` of `plugins:`.
pub const EXPECTED_SEQUENCE: &str = "a sequence";
/// `{what}` of the top level, `tools:`, `models:` and a label's options.
pub const EXPECTED_MAP: &str = "a map";
/// `{what}` of a `plugins:` entry's `optional:`.
pub const EXPECTED_BOOLEAN: &str = "a boolean";
/// `{what}` of a `plugins:` entry's `ref:`.
pub const EXPECTED_PLUGIN_ID: &str = "a Plugin id string";
/// `{what}` of a `plugins:` entry that is neither a string nor a map.
pub const EXPECTED_PLUGIN_ENTRY: &str =
    "a Plugin id string or a map with `ref`, `optional`, and `config`";
/// `{what}` of a `tools:` value that is not a string.
pub const EXPECTED_TOOL_PATH: &str = "an exact tool path string";

/// Related-information text on the first declaration of a Plugin declared twice.
pub const RELATED_FIRST_DECLARED: &str = "first declared here";
/// Related-information text on the optional declaration of a slot's Plugin.
pub const RELATED_DECLARED_OPTIONAL: &str = "declared optional here";
/// Related-information text on the other key of a name that is both an alias and a label.
pub const RELATED_OTHER_KEY: &str = "also declared here";

/// YAML that does not parse: `invalid frontmatter: {parser message}`.
pub fn invalid_yaml(parser_message: &str) -> String {
    format!("invalid frontmatter: {parser_message}")
}

/// `missing field `{key}``.
pub fn missing_field(key: &str) -> String {
    format!("missing field `{key}`")
}

/// `duplicate field `{key}``.
pub fn duplicate_field(key: &str) -> String {
    format!("duplicate field `{key}`")
}

/// The keys of a `plugins:` entry map.
pub const PLUGIN_FIELDS: &[&str] = &["ref", "optional", "config"];

/// The keys of a model label's options.
pub const MODEL_OPTIONS: &[&str] = &["model", "temperature", "max_tokens"];

/// serde's unknown-field message: `unknown field `{key}`, expected one of `a`, `b``.
fn unknown_field(key: &str, fields: &[&str]) -> String {
    let expected: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    format!(
        "unknown field `{key}`, expected one of {}",
        expected.join(", ")
    )
}

/// An unknown top-level key.
pub fn unknown_top_level_field(key: &str) -> String {
    unknown_field(key, super::KNOWN_KEYS)
}

/// An unknown key in a `plugins:` entry map.
pub fn unknown_plugin_field(key: &str) -> String {
    unknown_field(key, PLUGIN_FIELDS)
}

/// An unknown key in a model label's options.
pub fn unknown_model_option(key: &str) -> String {
    unknown_field(key, MODEL_OPTIONS)
}

/// serde's type error: `invalid type: {found}, expected {what}`.
pub fn invalid_type(found: &str, expected: &str) -> String {
    format!("invalid type: {found}, expected {expected}")
}

/// A `promptforge:` integer other than 0 (kind Version).
pub fn unsupported_version(version: &str) -> String {
    format!("unsupported promptforge version {version}: this engine reads version 0")
}

/// A `name:` that breaks the prompt name grammar.
pub fn invalid_prompt_name(text: &str) -> String {
    format!("invalid prompt name `{text}`: expected [a-z0-9][a-z0-9_-]{{0,63}}")
}

/// An empty `description:`.
pub fn empty_description() -> String {
    "description must not be empty".to_owned()
}

/// `max_tool_iterations` outside 1 to 1000.
pub fn max_tool_iterations_out_of_range(value: &str) -> String {
    format!("max_tool_iterations must be between 1 and 1000, got {value}")
}

/// `temperature` outside 0 to 2 (`value` as written in the file).
pub fn temperature_out_of_range(value: &str) -> String {
    format!("temperature must be between 0 and 2, got {value}")
}

/// `max_tokens` below 1.
pub fn max_tokens_out_of_range(value: &str) -> String {
    format!("max_tokens must be at least 1, got {value}")
}

/// An alias or model label that breaks the alias grammar.
pub fn invalid_alias(alias: &str) -> String {
    format!("invalid alias \"{alias}\": expected [A-Za-z][A-Za-z0-9_-]{{0,63}}")
}

/// An alias or model label that is a reserved name.
pub fn reserved_name(name: &str) -> String {
    format!(
        "invalid frontmatter: '{name}' is a reserved name and cannot be an alias or a model label"
    )
}

/// A name that is both a tool alias and a model label.
pub fn alias_and_label(name: &str) -> String {
    format!("invalid frontmatter: '{name}' is both a tool alias and a model label")
}

/// A Plugin declared more than once under `plugins:` (printed without a position).
pub fn plugin_declared_twice(id: &str) -> String {
    format!("invalid frontmatter: Plugin {id} is declared more than once under plugins")
}

/// A tool slot backed by an optional Plugin (printed without a position).
pub fn slot_needs_required_plugin(alias: &str, path: &str, id: &str) -> String {
    format!(
        "invalid frontmatter: tool alias '{alias}' names {path}, whose Plugin {id} is declared optional; a tool slot requires its Plugin"
    )
}

/// A Plugin id with three otherwise valid segments.
pub fn plugin_id_two_segments(text: &str) -> String {
    format!("invalid Plugin id `{text}`: a Plugin id has exactly 2 segments (namespace/plugin)")
}

/// A Plugin id that breaks the shared grammar.
pub fn invalid_plugin_id(text: &str, reason: &str) -> String {
    format!("invalid Plugin id `{text}`: invalid global name: {reason}")
}

/// A `tools:` value that breaks the tool path grammar.
pub fn invalid_tool_path(text: &str, reason: &str) -> String {
    format!("invalid exact tool path `{text}`: invalid tool id: {reason}")
}

/// Reason: the overall count is not 2 or 3.
pub fn reason_segment_count(found: usize) -> String {
    format!("expected 2 or 3 segments separated by /, found {found}")
}

/// Reason: segment `{i}` (1-based) is empty.
pub fn reason_empty_segment(index: usize) -> String {
    format!("segment {index} is empty")
}

/// Reason: segment `{i}` holds a control character.
pub fn reason_control_character(index: usize) -> String {
    format!("segment {index} contains a control character")
}

/// Reason: segment `{i}` holds a character outside a-z 0-9 - _ .
pub fn reason_bad_character(index: usize, c: char) -> String {
    format!("segment {index} contains `{c}`; allowed are a-z, 0-9, -, _ and .")
}

/// Reason: a tool path with two otherwise valid segments.
pub fn reason_tool_id_three_segments() -> String {
    "a tool id has exactly 3 segments (namespace/plugin/name)".to_owned()
}

/// The YAML holds a second document.
pub const MORE_THAN_ONE_DOCUMENT: &str =
    "deserializing from YAML containing more than one document is not supported";
/// The YAML nests deeper than the validator walks.
pub const RECURSION_LIMIT: &str = "recursion limit exceeded";
/// Aliases expand to more nodes than the validator walks.
pub const REPETITION_LIMIT: &str = "repetition limit exceeded";
/// An alias names the node that contains it.
pub const RECURSIVE_ALIAS: &str = "while parsing node, found a recursive alias";
