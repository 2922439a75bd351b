//! The rules of a test file's own problems, as data: one [`Problem`] variant per
//! rule, carried by [`crate::Code::TestFile`], and the places whose keys it knows.
//! Their messages are the test file's (`test_file::problem`).

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
