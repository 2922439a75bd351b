//! What a prompt test file (`*.test.yaml`, `testing.md`) holds, once read: every
//! value with the byte range it was written at, so the runner's failures and the
//! file's own problems point into the file.

use std::ops::Range;

pub use crate::spanned::Spanned;

/// A whole test file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestFile {
    /// `prompt:` as written (None: the default, this file's name without
    /// `.test.yaml`, plus `.md`).
    pub prompt: Option<Spanned<String>>,
    /// The cases, in file order (a case whose map could not be read is left out;
    /// a case without a name is kept, with `name` None).
    pub cases: Vec<Case>,
}

/// One case of `cases:`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Case {
    /// `name:` (None when missing or not a string: a problem of the file).
    pub name: Option<Spanned<String>>,
    /// The case's map, from the first character of its first key to the end of its
    /// last value (its `- name:` line is the line of `range.start`).
    pub range: Range<usize>,
    /// `args:` (default empty).
    pub args: String,
    /// `seed:` (None: the runner's fixed default for this case).
    pub seed: Option<u64>,
    /// `store:` files at the start, path to contents, in file order.
    pub store: Vec<(Spanned<String>, String)>,
    /// `model:` rounds, in order (None: not given; `Some(vec![])` for `model: []`).
    pub model: Option<Vec<Round>>,
    /// `tools:` Harness tools by tool path, in file order.
    pub tools: Vec<ScriptedTool>,
    /// `input:` answers to `input.ask`, in order.
    pub input: Vec<String>,
    /// `live: true`.
    pub live: bool,
    /// `repeat:` runs of a live case (a scripted case runs once).
    pub repeat: Option<Spanned<u64>>,
    /// `min_pass:` the runs of a repeated case that must pass.
    pub min_pass: Option<Spanned<MinPass>>,
    /// `expect:`.
    pub expect: Expect,
}

/// `min_pass:`: a share of the runs (`0.8`) or a count (`8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinPass {
    /// A share of the runs, in millionths (`0.8` is 800000), above 0 and at most
    /// 1000000.
    Share(u32),
    /// A number of runs, 1 or more.
    Count(u64),
}

impl MinPass {
    /// The runs of `runs` that must pass: the count (at most `runs`), or the
    /// share rounded up.
    pub fn needed(self, runs: u64) -> u64 {
        match self {
            MinPass::Count(count) => count.min(runs),
            MinPass::Share(millionths) => {
                (u128::from(runs) * u128::from(millionths)).div_ceil(1_000_000) as u64
            }
        }
    }
}

/// One scripted model round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Round {
    /// `- text: ...`: a final text reply.
    Text(String),
    /// `- calls: [ {alias: {arguments}} ]`: tool calls in order.
    Calls(Vec<ScriptedCall>),
}

/// One call of a scripted round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    /// The alias (or Engine tool name) called, where it was written.
    pub alias: Spanned<String>,
    /// The arguments as JSON text (a string value is taken as the raw text the
    /// model wrote, so a test can send arguments that are not JSON at all).
    pub arguments: String,
}

/// A Harness tool's script under `tools:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedTool {
    /// The exact tool path, where it was written.
    pub path: Spanned<String>,
    /// What each call returns, in order; the last repeats.
    pub answers: Vec<Answer>,
}

/// One scripted answer of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `- output: ...`: the tool's output text (JSON text for a structured tool; a
    /// map or list written in YAML is turned into JSON text).
    Output(String),
    /// `- error: ...`: the tool's own failure text.
    Error(String),
}

/// `expect:`: every key optional; all must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expect {
    /// Where `expect:` was written (None: not given).
    pub range: Option<Range<usize>>,
    /// `result:` exactly.
    pub result: Option<Spanned<String>>,
    /// `result_contains:`.
    pub result_contains: Option<Spanned<String>>,
    /// `result_matches:` (a regular expression that compiles).
    pub result_matches: Option<Spanned<String>>,
    /// `no_result: true` (`false` asks for nothing).
    pub no_result: Option<Spanned<bool>>,
    /// `error:`.
    pub error: Option<ExpectError>,
    /// `calls:` per alias over the whole run, in file order.
    pub calls: Vec<(Spanned<String>, u64)>,
    /// `store:` exact contents at the end, in file order.
    pub store: Vec<(Spanned<String>, String)>,
    /// `log_contains:`, each a text some log line contains.
    pub log_contains: Vec<Spanned<String>>,
    /// `rounds:` model rounds used.
    pub rounds: Option<Spanned<u64>>,
    /// `requests:`: checks on what the model was sent, in file order.
    pub requests: Vec<ExpectRequest>,
    /// `tool_args:`: per alias, the arguments of its calls in order (JSON text,
    /// matched partially), in file order.
    pub tool_args: Vec<(Spanned<String>, Vec<Spanned<String>>)>,
    /// `judge:`: a model grades the result against a rubric.
    pub judge: Option<ExpectJudge>,
}

/// `expect.judge:`: the result is graded by a model against a rubric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectJudge {
    /// Where `judge:` was written.
    pub range: Range<usize>,
    /// `rubric:`: what a passing result is.
    pub rubric: Spanned<String>,
    /// `model:`: the Host model that judges (None: the Host's default model),
    /// resolved as a label's `model:` is.
    pub model: Option<Spanned<String>>,
}

/// One item of `expect.requests:`: checks that one model round's request (the
/// `round:`, else any round) holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectRequest {
    /// Where the item was written.
    pub range: Range<usize>,
    /// `round:` (1-based, over the whole run); None: any round.
    pub round: Option<Spanned<u64>>,
    /// `messages_contain:`: some message's text contains it.
    pub messages_contain: Option<Spanned<String>>,
    /// `messages_match:`: some message's text matches the pattern.
    pub messages_match: Option<Spanned<String>>,
    /// `system_contains:`: some system message contains it.
    pub system_contains: Option<Spanned<String>>,
    /// `tools:`: the aliases offered are exactly these (in any order).
    pub tools: Option<Spanned<Vec<String>>>,
    /// `tools_include:`: the aliases offered include these.
    pub tools_include: Option<Spanned<Vec<String>>>,
}

/// `expect.error`: the run fails, with these facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectError {
    /// Where `error:` was written.
    pub range: Range<usize>,
    /// `kind:` as printed in `error[Kind]` (a run error kind or a parse kind).
    pub kind: Option<Spanned<String>>,
    /// `message:` exactly.
    pub message: Option<Spanned<String>>,
    /// `message_contains:`.
    pub message_contains: Option<Spanned<String>>,
}
