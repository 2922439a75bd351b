//! The prompt-test runner's verdicts and its record mode's refusals
//! (`testing.md`), each built by one function. Tests compare them byte for byte.

/// A Harness tool called in a test case whose `tools:` does not script it.
pub fn unscripted_call(path: &str) -> String {
    format!("unscripted call to {path}")
}

/// A test case's model script was not used up.
pub fn scripted_rounds_unused(rounds: usize) -> String {
    format!("{rounds} scripted model rounds were not used")
}

/// `expect.result` does not hold.
pub const RESULT_DIFFERS: &str = "the result differs";
/// `expect.result_contains` does not hold.
pub const RESULT_LACKS_TEXT: &str = "the result does not contain the text";
/// `expect.result_matches` does not hold.
pub const RESULT_DOES_NOT_MATCH: &str = "the result does not match the pattern";
/// `expect.no_result` does not hold.
pub const RESULT_GIVEN: &str = "the run gave a result";
/// `expect.error` was given and the run succeeded.
pub const RUN_DID_NOT_FAIL: &str = "the run did not fail";
/// `expect.error.kind` does not hold.
pub const ERROR_KIND_DIFFERS: &str = "the error kind differs";
/// `expect.error.message` does not hold.
pub const ERROR_MESSAGE_DIFFERS: &str = "the error message differs";
/// `expect.error.message_contains` does not hold.
pub const ERROR_MESSAGE_LACKS_TEXT: &str = "the error message does not contain the text";
/// The run failed and the case expects no error.
pub const RUN_FAILED: &str = "the run failed";
/// `expect.log_contains` does not hold for one text.
pub const LOG_LACKS_TEXT: &str = "no log line contains the text";
/// `expect.rounds` does not hold.
pub const ROUNDS_DIFFER: &str = "the model rounds used differ";

/// `expect.calls` does not hold for one alias.
pub fn calls_differ(alias: &str) -> String {
    format!("the calls of {alias} differ")
}

/// `expect.store` does not hold for one file.
pub fn store_file_differs(path: &str) -> String {
    format!("the store file {path} differs")
}

/// `expect.result_matches` holds a pattern that does not compile (a problem of the
/// test file the runner meets when the file was not checked first).
pub fn bad_result_pattern(reason: &str) -> String {
    format!("the result_matches pattern does not compile: {reason}")
}

/// The actual side of a failure when the run gave no result.
pub const NO_RESULT: &str = "(no result)";
/// The actual side of a failure when the store has no such file.
pub const NO_SUCH_FILE: &str = "(no such file)";
/// The actual side of a failure when the run did not fail.
pub const NO_ERROR: &str = "(no error)";

/// `--shard` given something other than `I/N` with `1 <= I <= N`.
pub fn bad_shard(text: &str) -> String {
    format!("--shard takes I/N with 1 <= I <= N, got `{text}`")
}

/// `run --record` to a test file that has problems of its own.
pub const RECORD_FILE_HAS_PROBLEMS: &str =
    "the test file has problems; fix them (promptforge check) before recording into it";
/// `run --record` to a test file whose `cases:` is not a block list ending the file.
pub const RECORD_NOT_BLOCK_LIST: &str =
    "the test file's `cases:` is not a block list (`- name: ...` items) at the end of the file; add the case by hand";

/// `expect.requests` on any round: no round's request holds every check.
pub const NO_REQUEST_HOLDS: &str = "no model request holds every check";
/// `expect.requests[].messages_contain` does not hold.
pub const MESSAGES_LACK_TEXT: &str = "no message of the request contains the text";
/// `expect.requests[].messages_match` does not hold.
pub const MESSAGES_DO_NOT_MATCH: &str = "no message of the request matches the pattern";
/// `expect.requests[].system_contains` does not hold.
pub const SYSTEM_LACKS_TEXT: &str = "no system message of the request contains the text";
/// `expect.requests[].tools` does not hold.
pub const TOOLS_OFFERED_DIFFER: &str = "the tools offered differ";
/// `expect.requests[].tools_include` does not hold.
pub const TOOLS_OFFERED_LACK: &str = "the tools offered lack some";
/// The actual side of a request failure when the run made no model round.
pub const NO_ROUNDS: &str = "(no model round)";
/// The actual side of a `tool_args` failure when the alias was called fewer times.
pub const NO_SUCH_CALL: &str = "(no such call)";

/// `expect.requests[].round` names a round the run did not make.
pub fn no_such_round(round: u64) -> String {
    format!("the run made no model round {round}")
}

/// `expect.tool_args` does not hold for one call.
pub fn tool_arguments_differ(alias: &str, call: usize) -> String {
    format!("call {call} of {alias} does not have these arguments")
}

/// A repeated case whose runs did not pass often enough: its rate (`7/10 runs
/// passed`) and the runs needed.
pub fn pass_rate_too_low(rate: &str, needed: u64) -> String {
    format!("{rate}, {needed} needed")
}

/// A repeated case's failed runs past the `shown` ones whose failures are listed.
pub fn failed_runs_not_shown(count: u64, shown: usize) -> String {
    format!("{count} more failed runs are not listed (the first {shown} are)")
}

/// `expect.judge`: the judge's verdict was a fail, with its reason.
pub fn judge_failed(reason: &str) -> String {
    format!("the judge failed the result: {reason}")
}

/// `expect.judge`: the judge answered something that is no verdict.
pub const JUDGE_GAVE_NO_VERDICT: &str =
    "the judge's answer is not a verdict (a JSON object with \"pass\": true or false)";

/// `expect.judge`: the judge's model could not be asked.
pub fn judge_unavailable(message: &str) -> String {
    format!("the judge could not grade the result: {message}")
}

/// `expect.judge`: the run ended without a result, so there is nothing to grade.
pub const NOTHING_TO_JUDGE: &str = "the run gave no result to judge";
