//! Issue 28: repeated live cases against a loopback OpenAI-compatible server that
//! answers correctly 4 times in 5 (the 5th and 10th requests get a wrong answer):
//! `repeat: 10, min_pass: 0.7` passes with its rate, `min_pass: 0.9` fails with
//! it and each failed run's failure; `--repeat` overrides `repeat:`; a scripted
//! case with `repeat:` warns and runs once.

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_tests::{binary, isolate, Scratch};

const PROMPT: &str = "---\nname: capital\ndescription: d\npromptforge: 0\nmodels:\n  w: { model: m }\n---\n\n# Capital\n\n```lua\nreturn models.infer('What is the capital of France?')\n```\n";

/// Ten answers, the 5th and 10th wrong.
fn four_in_five() -> Server {
    let answers = (1..=10)
        .map(|n| Reply::chat_text(if n % 5 == 0 { "Lyon" } else { "Paris" }))
        .collect();
    Server::serve_blocking(Answers::InOrder(answers))
}

fn suite(min_pass: &str) -> (Scratch, Server) {
    let server = four_in_five();
    let dir = Scratch::new("repeat");
    dir.write(
        "promptforge.toml",
        format!(
            "[model.m]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nretries = 0\n",
            server.url()
        ),
    );
    dir.write("capital.md", PROMPT);
    dir.write(
        "capital.test.yaml",
        format!(
            "cases:\n  - name: knows the capital\n    live: true\n    repeat: 10\n    min_pass: {min_pass}\n    expect:\n      result: Paris\n"
        ),
    );
    (dir, server)
}

fn test(dir: &Scratch, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = std::process::Command::new(binary());
    isolate(&mut command)
        .current_dir(dir.path())
        .env("PROMPTFORGE_TRUST", "1")
        .args(["test", "--live"])
        .args(args);
    let out = command.output().expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_pass_rate_at_the_minimum_passes_and_shows_the_rate() {
    let (dir, server) = suite("0.7");
    let (code, stdout, stderr) = test(&dir, &["capital.test.yaml"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("capital.test.yaml: knows the capital (8/10 runs passed, "),
        "{stdout}"
    );
    assert_eq!(server.requests().len(), 10);
}

#[test]
fn a_pass_rate_below_the_minimum_fails_with_the_rate_and_each_failed_run() {
    let (dir, server) = suite("0.9");
    let (code, stdout, stderr) = test(&dir, &["-q", "capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(":5:15: min_pass: 8/10 runs passed, 9 needed\n  expected: \"9 runs\"\n  actual:   \"8 runs\"\n"),
        "{stdout}"
    );
    let failed_runs: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("expect.result: the result differs"))
        .collect();
    assert_eq!(failed_runs.len(), 2, "{stdout}");
    assert!(failed_runs.iter().all(|l| l.contains(": run ")), "{stdout}");
    assert_eq!(server.requests().len(), 10);
}

#[test]
fn repeat_on_the_command_line_overrides_the_case() {
    let (dir, server) = suite("2");
    let (code, stdout, stderr) = test(&dir, &["--repeat", "3", "capital.test.yaml"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("(3/3 runs passed, "), "{stdout}");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_scripted_case_with_repeat_warns_and_runs_once() {
    let dir = Scratch::new("repeat-scripted");
    dir.write("capital.md", PROMPT);
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: scripted\n    repeat: 5\n    model:\n      - text: Paris\n    expect:\n      result: Paris\n",
    );
    let (code, stdout, stderr) = test(&dir, &["capital.test.yaml"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("ok      capital.test.yaml: scripted ("),
        "{stdout}"
    );
    assert!(!stdout.contains("runs passed"), "{stdout}");
    let mut check = std::process::Command::new(binary());
    isolate(&mut check)
        .current_dir(dir.path())
        .args(["check", "capital.test.yaml"]);
    let out = check.output().expect("the binary runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "capital.test.yaml:3:13: warning[TestFile]: `repeat` applies to live cases: this scripted case runs once\n"
    );
}

/// `--cache DIR`: a second run of a live suite asks no model; a kept answer
/// that does not read as one is asked again and replaced.
#[test]
fn a_cached_live_suite_asks_no_model_the_second_time() {
    let (dir, server) = suite("0.5");
    let cache = dir.path().join("answers");
    let cache_arg = cache.display().to_string();
    let args = [
        "--repeat",
        "2",
        "--cache",
        cache_arg.as_str(),
        "capital.test.yaml",
    ];
    let (code, stdout, stderr) = test(&dir, &args);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.ends_with("promptforge: cache: 1 answers reused, 1 requests to a model\n")
            || stderr.ends_with("promptforge: cache: 0 answers reused, 2 requests to a model\n"),
        "{stderr}"
    );
    let before = server.requests().len();
    let (code, stdout, stderr) = test(&dir, &args);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.ends_with("promptforge: cache: 2 answers reused, 0 requests to a model\n"),
        "{stderr}"
    );
    assert_eq!(
        server.requests().len(),
        before,
        "no request the second time"
    );

    // A kept answer broken by hand is a miss, asked again and written anew.
    let kept: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
    assert_eq!(kept.len(), 1, "one request, one answer");
    std::fs::write(kept[0].path(), "{ not json").unwrap();
    let (code, _, stderr) = test(
        &dir,
        &[
            "--cache",
            cache_arg.as_str(),
            "capital.test.yaml",
            "--repeat",
            "1",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.ends_with("0 answers reused, 1 requests to a model\n"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(kept[0].path()).unwrap();
    assert!(text.contains("\"content\": \"Paris\""), "{text}");
}

/// A prompt whose every run logs 2 MB, on the built-in echo model.
const LOGS_A_LOT: &str = "---\nname: big\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Big\n\n```lua\nlog(string.rep('x', 2000000))\nreturn models.infer('What is the capital of France?')\n```\n";

/// Hostile probe (issue 39): every run of a repeated case was kept to the end,
/// so `repeat: 3000` of a prompt that logs 1 MB peaked at 2.9 GB. Each run is
/// now counted as it ends: 200 runs of 2 MB peaked at 410 MiB before, 34 MiB
/// after; 150 runs stay well under 150 MiB. Past ten failed runs, one line counts the rest.
#[test]
fn a_repeated_case_keeps_no_run_it_has_counted() {
    let dir = Scratch::new("repeat-memory");
    dir.write("big.md", LOGS_A_LOT);
    dir.write(
        "big.test.yaml",
        "cases:\n  - name: logs\n    live: true\n    repeat: 150\n    expect:\n      result_contains: capital\n  - name: fails\n    live: true\n    repeat: 12\n    expect:\n      result_contains: Lyon\n",
    );
    let args = ["test", "--live", "--filter", "logs", "big.test.yaml"];
    let cost = promptforge_tests::perf::process::cost(binary(), dir.path(), &args, &[0]);
    assert!(
        cost.peak_kib < 150 * 1024,
        "150 runs peaked at {} MiB",
        cost.peak_kib / 1024
    );
    let (code, stdout, stderr) = test(&dir, &["-q", "--filter", "fails", "big.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let listed = stdout.matches(": run ").count();
    assert_eq!(listed, 10, "{stdout}");
    assert!(
        stdout.contains(": runs: 2 more failed runs are not listed (the first 10 are)\n"),
        "{stdout}"
    );
}

/// `repeat:` and `--repeat` run 1 to 1000 times; past it, a usage error.
#[test]
fn repeat_past_the_bound_is_a_usage_error() {
    let (dir, server) = suite("2");
    let (code, stdout, stderr) = test(&dir, &["--repeat", "1000000000", "capital.test.yaml"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "invalid value '1000000000' for '--repeat <N>': 1000000000 is not in 1..=1000"
        ),
        "{stderr}"
    );
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: too many\n    live: true\n    repeat: 1001\n    expect:\n      result: Paris\n",
    );
    let (code, stdout, stderr) = test(&dir, &["capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("capital.test.yaml:4:13: error[TestFile]: invalid value: integer `1001`, expected a whole number from 1 to 1000"),
        "{stdout}"
    );
    assert!(server.requests().is_empty());
}

/// Hostile probe (issue 39): a live case passed on an answer from a cache
/// (one shipped in the repository, say) said nothing of it. Every format now
/// marks a verdict that rests on reused answers; a case whose answers all came
/// from a model asked now is not marked.
#[test]
fn a_verdict_on_cached_answers_says_so_in_every_format() {
    let (dir, _server) = suite("1");
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: knows the capital\n    live: true\n    expect:\n      result: Paris\n",
    );
    let cache = dir.path().join("answers");
    let cache = cache.display().to_string();
    let run = |format: &str| {
        test(
            &dir,
            &["--cache", &cache, "--format", format, "capital.test.yaml"],
        )
    };
    let (code, first, stderr) = run("text");
    assert_eq!(code, Some(0), "{first}{stderr}");
    assert!(!first.contains("cache"), "{first}");

    let (code, text, stderr) = run("text");
    assert_eq!(code, Some(0), "{text}{stderr}");
    assert!(
        text.contains(
            "ok      capital.test.yaml: knows the capital (cache: 1 of 1 answers reused, "
        ),
        "{text}"
    );
    let (_, json, _) = run("json");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        json["files"][0]["cases"][0]["cache"],
        serde_json::json!({ "reused": 1, "answers": 1 })
    );
    let (_, junit, _) = run("junit");
    assert!(
        junit.contains("<property name=\"cache.reused\" value=\"1\"/>")
            && junit.contains("<system-out>cache: 1 of 1 answers reused</system-out>"),
        "{junit}"
    );
    // Without the cache the same case is asked anew and not marked.
    let (_, json, _) = test(
        &dir,
        &["--no-cache", "--format", "json", "capital.test.yaml"],
    );
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        json["files"][0]["cases"][0].get("cache").is_none(),
        "{json}"
    );
}
