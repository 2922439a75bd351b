//! `promptforge test` end to end (`testing.md`): the verdict lines, the failures'
//! details and the closing line of a passing suite and of a suite meant to fail,
//! `-q`, `--filter`, `--shard`, `--live`, and the exit codes.

mod cli_test_support;

use std::collections::BTreeSet;

use cli_test_support::{fixtures, pf, without_times};
use promptforge_tests::Scratch;

const UNKNOWN_CASE_KEY: &str = "unknown field `expct`, expected one of `name`, `args`, `seed`, `store`, `model`, `tools`, `input`, `live`, `repeat`, `min_pass`, `expect`";

/// The verdict lines of `pass/` without `--live`, durations elided.
const PASS_VERDICTS: &str = "\
ok      pass/ask.test.yaml: asks twice (N ms)
ok      pass/fetcher.test.yaml: reads the page before answering (N ms)
ok      pass/fetcher.test.yaml: a failed fetch reaches the model (N ms)
skipped pass/live.test.yaml: the echo model answers live (live)
ok      pass/words.test.yaml: counts three words (N ms)
ok      pass/words.test.yaml: lists the words one a line (N ms)
ok      pass/words.test.yaml: an error is expected (N ms)
";

#[test]
fn a_passing_suite_prints_one_line_per_case_and_the_counts() {
    let run = pf(&fixtures(), &["test", "pass"]);
    assert_eq!(
        without_times(&run.stdout),
        format!("{PASS_VERDICTS}6 passed, 0 failed, 1 skipped\n")
    );
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, Some(0));
}

#[test]
fn live_cases_run_with_live_on_the_offline_hosts_echo_model() {
    let run = pf(&fixtures(), &["test", "--live", "pass/live.test.yaml"]);
    assert_eq!(
        without_times(&run.stdout),
        "ok      pass/live.test.yaml: the echo model answers live (N ms)\n1 passed, 0 failed\n"
    );
    assert_eq!(run.code, Some(0));
    let skipped = pf(&fixtures(), &["test", "pass/live.test.yaml"]);
    assert_eq!(
        skipped.stdout,
        "skipped pass/live.test.yaml: the echo model answers live (live)\n0 passed, 0 failed, 1 skipped\n"
    );
    assert_eq!(skipped.code, Some(0));
}

/// What the failing suite prints after its verdict lines.
fn fail_details() -> String {
    [
        "---- fail/ask.test.yaml:4:5: the script runs out ----\n\
         fail/ask.test.yaml:4:5: model: the model script ended after 1 rounds\n",
        "---- fail/ask.test.yaml:9:5: rounds are left over ----\n\
         fail/ask.test.yaml:9:5: model: 1 scripted model rounds were not used\n",
        "---- fail/fetcher.test.yaml:4:5: wrong calls count ----\n\
         fail/fetcher.test.yaml:15:16: expect.calls.fetch: the calls of fetch differ\n  \
         expected: \"2\"\n  \
         actual:   \"1\"\n",
        "---- fail/fetcher.test.yaml:17:5: unscripted call ----\n\
         fail/fetcher.test.yaml:17:5: tools: unscripted call to promptforge/web/fetch\n",
        &format!(
            "---- fail/problems.test.yaml: (test file) ----\n\
             fail/problems.test.yaml:7:5: error[TestFile]: {UNKNOWN_CASE_KEY}\n"
        ),
        "---- fail/words.test.yaml:10:5: wrong one-line result ----\n\
         fail/words.test.yaml:13:15: expect.result: the result differs\n  \
         expected: \"4 words\"\n  \
         actual:   \"3 words\"\n",
        "---- fail/words.test.yaml:15:5: wrong multi-line result ----\n\
         fail/words.test.yaml:18:15: expect.result: the result differs\n  \
         diff (-expected +actual):\n    \
         alpha\n  \
         - BETA\n  \
         + beta\n    \
         gamma\n",
        "---- fail/words.test.yaml:20:5: unexpected run error ----\n\
         fail/words.test.yaml:23:15: expect.result: the result differs\n  \
         expected: \"1 words\"\n  \
         actual:   (no result)\n\
         fail/words.test.yaml:20:5: run: the run failed\n  \
         expected: (no error)\n  \
         actual:   \"error[Lua]: H1 pass: asked to fail\"\n",
        "---- fail/words.test.yaml:25:5: expects an error on a run that succeeds ----\n\
         fail/words.test.yaml:28:7: expect.error: the run did not fail\n  \
         expected: \"error[Lua]: ...\"\n  \
         actual:   (no error)\n",
        "---- fail/words.test.yaml:31:5: wrong store contents ----\n\
         fail/words.test.yaml:35:9: expect.store.count.txt: the store file count.txt differs\n  \
         expected: \"3\"\n  \
         actual:   \"2\"\n\
         fail/words.test.yaml:36:9: expect.store.other.txt: the store file other.txt differs\n  \
         expected: \"never written\"\n  \
         actual:   (no such file)\n",
    ]
    .join("\n")
}

const FAIL_VERDICTS: &str = "\
FAILED  fail/ask.test.yaml: the script runs out (N ms)
FAILED  fail/ask.test.yaml: rounds are left over (N ms)
FAILED  fail/fetcher.test.yaml: wrong calls count (N ms)
FAILED  fail/fetcher.test.yaml: unscripted call (N ms)
FAILED  fail/problems.test.yaml: (test file)
ok      fail/words.test.yaml: passes (N ms)
FAILED  fail/words.test.yaml: wrong one-line result (N ms)
FAILED  fail/words.test.yaml: wrong multi-line result (N ms)
FAILED  fail/words.test.yaml: unexpected run error (N ms)
FAILED  fail/words.test.yaml: expects an error on a run that succeeds (N ms)
FAILED  fail/words.test.yaml: wrong store contents (N ms)
";

#[test]
fn a_suite_meant_to_fail_reports_every_failure_exactly() {
    let run = pf(&fixtures(), &["test", "fail"]);
    let details = fail_details();
    assert_eq!(
        without_times(&run.stdout),
        format!("{FAIL_VERDICTS}\n{details}\n1 passed, 10 failed\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, Some(1));
}

#[test]
fn quiet_prints_only_the_details_and_the_closing_line() {
    let run = pf(&fixtures(), &["test", "-q", "fail"]);
    let details = fail_details();
    assert_eq!(run.stdout, format!("{details}\n1 passed, 10 failed\n"));
    assert_eq!(run.code, Some(1));
    let run = pf(&fixtures(), &["test", "-q", "pass"]);
    assert_eq!(run.stdout, "6 passed, 0 failed, 1 skipped\n");
    assert_eq!(run.code, Some(0));
}

#[test]
fn one_file_with_problems_is_one_failure_and_runs_none_of_its_cases() {
    let run = pf(&fixtures(), &["test", "fail/problems.test.yaml"]);
    assert_eq!(
        run.stdout,
        format!(
            "FAILED  fail/problems.test.yaml: (test file)\n\n\
             ---- fail/problems.test.yaml: (test file) ----\n\
             fail/problems.test.yaml:7:5: error[TestFile]: {UNKNOWN_CASE_KEY}\n\n\
             0 passed, 1 failed\n"
        )
    );
    assert_eq!(run.code, Some(1));
}

#[test]
fn the_filter_runs_the_cases_whose_name_contains_it() {
    let run = pf(&fixtures(), &["test", "pass", "--filter", "words"]);
    assert_eq!(
        without_times(&run.stdout),
        "ok      pass/words.test.yaml: counts three words (N ms)\n\
         ok      pass/words.test.yaml: lists the words one a line (N ms)\n\
         2 passed, 0 failed\n"
    );
    assert_eq!(run.code, Some(0));
    let none = pf(
        &fixtures(),
        &["test", "pass", "--filter", "no case is named so"],
    );
    assert_eq!(none.stdout, "0 passed, 0 failed\n");
    assert_eq!(none.code, Some(0));
}

#[test]
fn shards_run_every_case_exactly_once() {
    let all: BTreeSet<String> = PASS_VERDICTS
        .lines()
        .map(|line| {
            line.replacen("skipped", "ok     ", 1)
                .replace(" (live)", " (N ms)")
        })
        .collect();
    let mut seen = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let run = pf(&fixtures(), &["test", "--live", "--shard", shard, "pass"]);
        assert_eq!(run.code, Some(0), "{shard}: {}", run.stdout);
        let lines: Vec<String> = without_times(&run.stdout)
            .lines()
            .filter(|line| line.starts_with("ok "))
            .map(str::to_owned)
            .collect();
        assert!(lines.len() == 2 || lines.len() == 3, "{shard}: {lines:?}");
        seen.extend(lines);
    }
    assert_eq!(seen.len(), all.len(), "{seen:#?}");
    assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), all);
}

#[test]
fn usage_errors_exit_two_and_the_other_paths_still_run() {
    let run = pf(
        &fixtures(),
        &["test", "pass/ask.test.yaml", "missing.test.yaml"],
    );
    assert_eq!(
        run.stderr,
        "promptforge: missing.test.yaml: no such file or folder\n"
    );
    assert_eq!(
        without_times(&run.stdout),
        "ok      pass/ask.test.yaml: asks twice (N ms)\n1 passed, 0 failed\n"
    );
    assert_eq!(run.code, Some(2));

    let run = pf(&fixtures(), &["test", "pass/words.md"]);
    assert_eq!(
        run.stderr,
        "promptforge: pass/words.md: not a prompt test file (its name does not end in .test.yaml)\n"
    );
    assert_eq!(run.code, Some(2));

    for bad in ["0/3", "4/3", "x"] {
        let run = pf(&fixtures(), &["test", "--shard", bad, "pass"]);
        assert_eq!(
            run.stderr,
            format!("promptforge: --shard takes I/N with 1 <= I <= N, got `{bad}`\n")
        );
        assert_eq!((run.stdout.as_str(), run.code), ("", Some(2)));
    }
    assert_eq!(pf(&fixtures(), &["test", "--format", "xml"]).code, Some(2));
    assert_eq!(pf(&fixtures(), &["test", "--no-such-flag"]).code, Some(2));
}

#[test]
fn no_test_file_at_all_passes_with_zero_counts() {
    let scratch = Scratch::new("no-tests");
    scratch.write("a.md", "# not a test\n");
    let run = pf(scratch.path(), &["test"]);
    assert_eq!(run.stdout, "0 passed, 0 failed\n");
    assert_eq!(run.code, Some(0));
}

#[test]
fn warnings_print_and_the_cases_still_run() {
    let scratch = Scratch::new("test-warning");
    let prompt = std::fs::read_to_string(fixtures().join("pass/ask.md")).expect("fixture");
    scratch.write("ask.md", prompt);
    scratch.write(
        "ask.test.yaml",
        "cases:\n  - name: calls a tool it has not\n    model:\n      - text: A\n      - calls:\n          - nosuch: {}\n    expect:\n      error: { kind: Tool }\n",
    );
    let run = pf(scratch.path(), &["test"]);
    assert_eq!(
        without_times(&run.stdout),
        "ask.test.yaml:6:13: warning[UnknownAlias]: the prompt neither binds nor registers a tool named \"nosuch\"; the engine decides at run time\n\
         ok      ask.test.yaml: calls a tool it has not (N ms)\n\
         1 passed, 0 failed\n"
    );
    assert_eq!(run.code, Some(0));
}

#[test]
fn a_test_file_tests_its_prompt_on_the_host_of_the_prompts_folder() {
    let scratch = Scratch::new("test-config");
    let prompt = std::fs::read_to_string(fixtures().join("pass/ask.md")).expect("fixture");
    scratch.write("p/ask.md", prompt);
    scratch.write(
        "t/ask.test.yaml",
        "prompt: ../p/ask.md\ncases:\n  - name: one\n    model: [{ text: a }, { text: b }]\n    expect: { result: a / b }\n",
    );
    let run = pf(scratch.path(), &["test", "t"]);
    assert_eq!(
        without_times(&run.stdout),
        "ok      t/ask.test.yaml: one (N ms)\n1 passed, 0 failed\n"
    );
    // The prompt's folder has a configuration that cannot be read: the file fails.
    scratch.write("p/promptforge.toml", "no_such_key = 1\n");
    let run = pf(scratch.path(), &["test", "t"]);
    assert!(
        run.stdout.starts_with(
            "FAILED  t/ask.test.yaml: (test file)\n\n---- t/ask.test.yaml: (test file) ----\n\
             t/ask.test.yaml: error[Configuration]: the Host configuration cannot be used: "
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("\n\n0 passed, 1 failed\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, Some(1));
    // `--config` wins, as for `run`.
    scratch.write("empty.toml", "");
    let run = pf(scratch.path(), &["test", "--config", "empty.toml", "t"]);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
}
