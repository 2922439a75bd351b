//! The rules of a test file's own problems: one [`Problem`] variant per rule, carried
//! by [`crate::Code::TestFile`], with the places whose keys it knows.

use super::messages;
use crate::api_names::RUN_ERROR_KINDS;
use crate::frontmatter::messages as fm;

/// The top level's keys, in `testing.md`'s order.
pub const TOP_KEYS: &[&str] = &["prompt", "cases"];
/// A case's keys, in `testing.md`'s order.
pub const CASE_KEYS: &[&str] = &[
    "name", "args", "seed", "store", "model", "tools", "input", "live", "repeat", "min_pass",
    "expect",
];
/// `expect:`'s keys, in `testing.md`'s order.
pub const EXPECT_KEYS: &[&str] = &[
    "result",
    "result_contains",
    "result_matches",
    "no_result",
    "error",
    "calls",
    "store",
    "log_contains",
    "rounds",
    "requests",
    "tool_args",
    "judge",
];
/// The keys of an item of `expect.requests:`.
pub const REQUEST_KEYS: &[&str] = &[
    "round",
    "messages_contain",
    "messages_match",
    "system_contains",
    "tools",
    "tools_include",
];
/// `expect.judge:`'s keys.
pub const JUDGE_KEYS: &[&str] = &["rubric", "model"];
/// `expect.error:`'s keys, in `testing.md`'s order.
pub const ERROR_KEYS: &[&str] = &["kind", "message", "message_contains"];
/// A model round's keys.
pub const ROUND_KEYS: &[&str] = &["text", "calls"];
/// A tool answer's keys.
pub const ANSWER_KEYS: &[&str] = &["output", "error"];

/// A map of a test file, each knowing its own keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// The file's top level.
    TopLevel,
    /// One case of `cases:`.
    Case,
    /// A case's `expect:`.
    Expect,
    /// `expect.error:`.
    ExpectError,
    /// An item of `expect.requests:`.
    ExpectRequest,
    /// `expect.judge:`.
    ExpectJudge,
    /// One round of `model:`.
    Round,
    /// One answer of a tool under `tools:`.
    Answer,
}

impl Place {
    /// The place's keys, in the order the unknown-field message lists them.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Place::TopLevel => TOP_KEYS,
            Place::Case => CASE_KEYS,
            Place::Expect => EXPECT_KEYS,
            Place::ExpectError => ERROR_KEYS,
            Place::ExpectRequest => REQUEST_KEYS,
            Place::ExpectJudge => JUDGE_KEYS,
            Place::Round => ROUND_KEYS,
            Place::Answer => ANSWER_KEYS,
        }
    }
}

/// One rule of a test file (`testing.md`), with what it found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Problem {
    /// The test file's YAML does not parse; the parser's reason.
    InvalidYaml { reason: String },
    /// A model script's (turns file's) YAML does not parse; the parser's reason.
    InvalidScriptYaml { reason: String },
    /// A value of the wrong type (serde's wording: what was found, what was expected).
    InvalidType {
        found: String,
        expected: &'static str,
    },
    /// A value of the right type out of range (a negative `u64`).
    InvalidValue {
        found: String,
        expected: &'static str,
    },
    /// A key the place does not know.
    UnknownField { place: Place, key: String },
    /// An `expect.error.kind` that is no error kind.
    UnknownErrorKind { kind: String },
    /// A key of a place written twice.
    DuplicateField { key: String },
    /// A key of a free map (store paths, tool paths, aliases) written twice.
    DuplicateEntry { key: String },
    /// A required key is missing (`cases`, a case's `name`).
    MissingField { key: &'static str },
    /// Two cases with one name.
    DuplicateCaseName { name: String },
    /// `model:` or `tools:` on a `live: true` case.
    NotOnLiveCase { key: &'static str },
    /// A `tools:` key that breaks the tool path grammar; the reason.
    InvalidToolPath { text: String, reason: String },
    /// A round with both or neither of `text` and `calls`.
    RoundShape,
    /// A call entry that is not a map of one key.
    CallShape,
    /// A tool answer with both or neither of `output` and `error`.
    AnswerShape,
    /// A YAML value JSON cannot hold; serde_json's reason.
    NotJson { reason: String },
    /// A `result_matches:` that does not compile; the reason.
    InvalidRegex { reason: String },
    /// The prompt the file tests cannot be read (missing, unreadable, not UTF-8).
    PromptUnreadable { path: String, reason: String },
    /// `repeat:` on a scripted case, which runs once (a warning).
    RepeatOnScriptedCase,
    /// `min_pass:` without `repeat:` on the case.
    MinPassWithoutRepeat,
}

impl Problem {
    /// The exact message of the rule.
    pub fn message(&self) -> String {
        match self {
            Problem::InvalidYaml { reason } => messages::invalid_yaml(reason),
            Problem::InvalidScriptYaml { reason } => messages::invalid_script_yaml(reason),
            Problem::InvalidType { found, expected } => messages::invalid_type(found, expected),
            Problem::InvalidValue { found, expected } => messages::invalid_value(found, expected),
            Problem::UnknownField { place, key } => messages::unknown_field(key, place.keys()),
            Problem::UnknownErrorKind { kind } => messages::unknown_variant(kind, &RUN_ERROR_KINDS),
            Problem::DuplicateField { key } => messages::duplicate_field(key),
            Problem::DuplicateEntry { key } => messages::duplicate_entry(key),
            Problem::MissingField { key } => messages::missing_field(key),
            Problem::DuplicateCaseName { name } => messages::duplicate_case_name(name),
            Problem::NotOnLiveCase { key } => messages::not_on_live_case(key),
            Problem::InvalidToolPath { text, reason } => fm::invalid_tool_path(text, reason),
            Problem::RoundShape => messages::ROUND_SHAPE.to_owned(),
            Problem::PromptUnreadable { path, reason } => messages::prompt_unreadable(path, reason),
            Problem::CallShape => messages::CALL_SHAPE.to_owned(),
            Problem::AnswerShape => messages::ANSWER_SHAPE.to_owned(),
            Problem::NotJson { reason } => messages::not_json(reason),
            Problem::InvalidRegex { reason } => messages::invalid_regex(reason),
            Problem::RepeatOnScriptedCase => messages::REPEAT_ON_SCRIPTED_CASE.to_owned(),
            Problem::MinPassWithoutRepeat => messages::MIN_PASS_WITHOUT_REPEAT.to_owned(),
        }
    }

    /// True for the rules that warn and let the file run.
    pub fn is_warning(&self) -> bool {
        matches!(self, Problem::RepeatOnScriptedCase)
    }

    /// What the rule says without any text taken from the file (no value, key,
    /// name or parser reason): how a file read for someone else, such as a
    /// configuration's turns file, is described, so its content is never printed.
    pub fn without_content(&self) -> String {
        match self {
            Problem::InvalidYaml { .. } | Problem::InvalidScriptYaml { .. } => {
                "the YAML does not parse".to_owned()
            }
            Problem::InvalidType { expected, .. } => format!("invalid type, expected {expected}"),
            Problem::InvalidValue { expected, .. } => {
                format!("invalid value, expected {expected}")
            }
            Problem::UnknownField { place, .. } => messages::unknown_key(place.keys()),
            Problem::UnknownErrorKind { .. } => "an unknown error kind".to_owned(),
            Problem::DuplicateField { .. } | Problem::DuplicateEntry { .. } => {
                "a key written twice".to_owned()
            }
            Problem::MissingField { key } => messages::missing_field(key),
            Problem::DuplicateCaseName { .. } => "two cases with one name".to_owned(),
            Problem::NotOnLiveCase { key } => messages::not_on_live_case(key),
            Problem::InvalidToolPath { .. } => "an invalid tool path".to_owned(),
            Problem::RoundShape => messages::ROUND_SHAPE.to_owned(),
            Problem::PromptUnreadable { .. } => "its prompt cannot be read".to_owned(),
            Problem::CallShape => messages::CALL_SHAPE.to_owned(),
            Problem::AnswerShape => messages::ANSWER_SHAPE.to_owned(),
            Problem::NotJson { .. } => "a value JSON cannot hold".to_owned(),
            Problem::InvalidRegex { .. } => "an invalid regular expression".to_owned(),
            Problem::RepeatOnScriptedCase => messages::REPEAT_ON_SCRIPTED_CASE.to_owned(),
            Problem::MinPassWithoutRepeat => messages::MIN_PASS_WITHOUT_REPEAT.to_owned(),
        }
    }
}
