//! Issue 28: `promptforge test --models A,B` against two loopback
//! OpenAI-compatible servers, one that always answers right and one that always
//! answers wrong: each live case runs once per model, the text format ends with
//! the table of pass rates, the JSON format has one entry per (case, model), the
//! JUnit format one suite per model; scripted cases run once; an unknown name is
//! a usage error before anything runs. And the configuration's `[test] cache`:
//! a second run asks no model, `--no-cache` asks again, and a project's cache
//! outside its folder needs trust.

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_tests::{binary, isolate, Scratch};

const PROMPT: &str = "---\nname: capital\ndescription: d\npromptforge: 0\nmodels:\n  w: { model: right }\n---\n\n# Capital\n\n```lua\nreturn models.infer('What is the capital of France?')\n```\n";

const CASES: &str = "cases:\n  - name: knows the capital\n    live: true\n    expect:\n      result: Paris\n  - name: scripted\n    model:\n      - text: Paris\n    expect:\n      result: Paris\n";

/// A server that answers every chat completion with `text`.
fn always(text: &str) -> Server {
    Server::serve_blocking(Answers::by_path([(
        "/v1/chat/completions",
        Reply::chat_text(text),
    )]))
}

struct Suite {
    dir: Scratch,
    right: Server,
    wrong: Server,
}

/// The prompt, its test file and a configuration with the models `right` and
/// `wrong`, and `extra` after them.
fn suite(name: &str, extra: &str) -> Suite {
    let right = always("Paris");
    let wrong = always("Lyon");
    let dir = Scratch::new(name);
    let model = |name: &str, server: &Server| {
        format!(
            "[model.{name}]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nretries = 0\n",
            server.url()
        )
    };
    dir.write(
        "promptforge.toml",
        format!(
            "{}{}{extra}",
            model("right", &right),
            model("wrong", &wrong)
        ),
    );
    dir.write("capital.md", PROMPT);
    dir.write("capital.test.yaml", CASES);
    Suite { dir, right, wrong }
}

impl Suite {
    fn requests(&self) -> (usize, usize) {
        (self.right.requests().len(), self.wrong.requests().len())
    }
}

fn test_in(dir: &Scratch, trusted: bool, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = std::process::Command::new(binary());
    isolate(&mut command)
        .current_dir(dir.path())
        .arg("test")
        .args(args);
    if trusted {
        command.env("PROMPTFORGE_TRUST", "1");
    }
    let out = command.output().expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn test(dir: &Scratch, args: &[&str]) -> (Option<i32>, String, String) {
    test_in(dir, true, args)
}

#[test]
fn the_matrix_over_two_models_prints_the_table() {
    let suite = suite("matrix-text", "");
    let (code, stdout, stderr) = test(
        &suite.dir,
        &["--models", "right,wrong", "capital.test.yaml"],
    );
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("ok      capital.test.yaml: knows the capital [right] ("),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("FAILED  capital.test.yaml: knows the capital [wrong] ("),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("ok      capital.test.yaml: scripted ("),
        "{stdout}"
    );
    assert_eq!(lines.len(), 13, "{stdout}");
    assert_eq!(
        lines[3..].join("\n"),
        "\n\
         case                                 | right | wrong\n\
         capital.test.yaml: knows the capital | 1/1   | 0/1\n\
         \n\
         ---- capital.test.yaml:2:5: knows the capital [wrong] ----\n\
         capital.test.yaml:5:15: expect.result: the result differs\n  \
         expected: \"Paris\"\n  \
         actual:   \"Lyon\"\n\
         \n\
         2 passed, 1 failed"
    );
    assert_eq!(suite.requests(), (1, 1), "each model asked once");
}

#[test]
fn a_repeated_case_shows_its_rate_per_model_and_quiet_keeps_the_table() {
    let suite = suite("matrix-repeat", "");
    let args = [
        "-q",
        "--models",
        "wrong,right",
        "--repeat",
        "3",
        "capital.test.yaml",
    ];
    let (code, stdout, stderr) = test(&suite.dir, &args);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.starts_with(
            "case                                 | wrong | right\n\
             capital.test.yaml: knows the capital | 0/3   | 3/3\n\n"
        ),
        "{stdout}"
    );
    assert!(stdout.ends_with("\n2 passed, 1 failed\n"), "{stdout}");
    assert_eq!(suite.requests(), (3, 3));
}

#[test]
fn the_json_format_has_one_entry_per_case_and_model() {
    let suite = suite("matrix-json", "");
    let args = [
        "--format",
        "json",
        "--models",
        "right,wrong",
        "capital.test.yaml",
    ];
    let (code, stdout, stderr) = test(&suite.dir, &args);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let cases = json["files"][0]["cases"].as_array().expect("cases");
    let seen: Vec<(String, Option<String>, String, serde_json::Value)> = cases
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["model"].as_str().map(str::to_owned),
                c["status"].as_str().unwrap_or_default().to_owned(),
                c["runs"].clone(),
            )
        })
        .collect();
    let rate = |passed: u64| serde_json::json!({ "passed": passed, "runs": 1, "needed": 1 });
    assert_eq!(
        seen,
        [
            (
                "knows the capital".into(),
                Some("right".into()),
                "ok".into(),
                rate(1)
            ),
            (
                "knows the capital".into(),
                Some("wrong".into()),
                "failed".into(),
                rate(0)
            ),
            (
                "scripted".into(),
                None,
                "ok".into(),
                serde_json::Value::Null
            ),
        ]
    );
    assert_eq!(
        (json["passed"].as_u64(), json["failed"].as_u64()),
        (Some(2), Some(1))
    );
}

#[test]
fn the_junit_format_has_one_suite_per_model() {
    let suite = suite("matrix-junit", "");
    let args = [
        "--format",
        "junit",
        "--models",
        "right,wrong",
        "capital.test.yaml",
    ];
    let (code, stdout, stderr) = test(&suite.dir, &args);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let suites: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("<testsuite "))
        .map(str::trim)
        .collect();
    assert_eq!(suites.len(), 3, "{stdout}");
    assert!(
        suites[0].starts_with(
            "<testsuite name=\"capital.test.yaml\" tests=\"1\" failures=\"0\" skipped=\"0\""
        ),
        "{stdout}"
    );
    assert!(
        suites[1].starts_with("<testsuite name=\"right\" tests=\"1\" failures=\"0\" skipped=\"0\""),
        "{stdout}"
    );
    assert!(
        suites[2].starts_with("<testsuite name=\"wrong\" tests=\"1\" failures=\"1\" skipped=\"0\""),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "<testcase name=\"knows the capital [wrong]\" classname=\"capital.test.yaml\""
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("<failure message=\"the result differs\""),
        "{stdout}"
    );
    assert!(stdout.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"3\" failures=\"1\" skipped=\"0\""), "{stdout}");
}

#[test]
fn an_unknown_model_is_a_usage_error_before_anything_runs() {
    let suite = suite("matrix-unknown", "");
    let (code, stdout, stderr) = test(&suite.dir, &["--models", "right,gpt", "capital.test.yaml"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "promptforge: --models: \"gpt\" is not a Host model ({} defines [right, wrong]; echo is built in)\n",
            suite.dir.path().join("promptforge.toml").display()
        )
    );
    assert_eq!(suite.requests(), (0, 0));
    let (code, _, stderr) = test(
        &suite.dir,
        &["--models", "right,right", "capital.test.yaml"],
    );
    assert_eq!(code, Some(2));
    assert_eq!(stderr, "promptforge: --models: \"right\" is named twice\n");
}

#[test]
fn the_configurations_cache_reuses_answers_and_no_cache_asks_again() {
    let suite = suite("matrix-cache", "\n[test]\ncache = \"answers\"\n");
    let args = ["--models", "right,wrong", "capital.test.yaml"];
    let (code, stdout, stderr) = test(&suite.dir, &args);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stderr.ends_with("promptforge: cache: 0 answers reused, 2 requests to a model\n"),
        "{stderr}"
    );
    assert_eq!(suite.requests(), (1, 1));
    let kept = std::fs::read_dir(suite.dir.path().join("answers"))
        .expect("the cache")
        .count();
    assert_eq!(
        kept, 2,
        "one answer per model: the request names its server"
    );

    let (code, stdout, stderr) = test(&suite.dir, &args);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    // Every rate rests on kept answers, and says so.
    assert!(
        stdout.contains("capital.test.yaml: knows the capital | 1/1*  | 0/1*\n* rests on answers reused from the cache\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("knows the capital [wrong] (cache: 1 of 1 answers reused, "),
        "{stdout}"
    );
    assert!(
        stderr.ends_with("promptforge: cache: 2 answers reused, 0 requests to a model\n"),
        "{stderr}"
    );
    assert_eq!(suite.requests(), (1, 1), "no request reaches a server");

    let (code, _, stderr) = test(
        &suite.dir,
        &["--no-cache", "--models", "right,wrong", "capital.test.yaml"],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("cache:"), "{stderr}");
    assert_eq!(suite.requests(), (2, 2), "--no-cache asks again");
}

#[test]
fn a_project_cache_outside_its_folder_needs_trust() {
    let suite = suite("matrix-cache-trust", "\n[test]\ncache = \"../elsewhere\"\n");
    let (code, _, stderr) = test_in(&suite.dir, false, &["--live", "capital.test.yaml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("promptforge.toml:13: test.cache would write files outside its own folder, and this configuration is not trusted"),
        "{stderr}"
    );
    assert_eq!(suite.requests(), (0, 0));
    assert!(!suite.dir.path().join("../elsewhere").exists());
    // Inside its folder, it needs no trust.
    let inside = self::suite("matrix-cache-inside", "\n[test]\ncache = \".answers\"\n");
    let (code, stdout, stderr) = test_in(&inside.dir, false, &["--live", "capital.test.yaml"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.ends_with("promptforge: cache: 0 answers reused, 1 requests to a model\n"),
        "{stderr}"
    );
    assert!(inside.dir.path().join(".answers").is_dir());
}

/// `expect.judge` in a matrix: the judge is the judge's own model, asked once
/// per model under test, never the model under test.
#[test]
fn the_judge_of_a_matrix_stays_the_judge() {
    let grader = always("{\\\"pass\\\": true, \\\"reason\\\": \\\"fine\\\"}");
    let suite = suite(
        "matrix-judge",
        &format!(
            "[model.grader]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"g\"\nretries = 0\n",
            grader.url()
        ),
    );
    suite.dir.write(
        "capital.test.yaml",
        "cases:\n  - name: judged\n    live: true\n    expect:\n      judge:\n        rubric: names a city\n        model: grader\n",
    );
    let args = ["-q", "--models", "right,wrong", "capital.test.yaml"];
    let (code, stdout, stderr) = test(&suite.dir, &args);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("capital.test.yaml: judged | 1/1   | 1/1\n"),
        "{stdout}"
    );
    assert_eq!(suite.requests(), (1, 1), "each model runs the prompt once");
    assert_eq!(grader.requests().len(), 2, "the grader judges both");
}

/// Hostile probe (issue 39): each model of `--models` got a whole copy of the
/// configuration and every Host model before any case ran, so memory grew
/// with the square of the models named (2,000 models: 2.3 GB; 700: 310 MiB).
/// The pinned Hosts now share them: 700 models stay near 30 MiB.
#[test]
fn many_models_share_one_configuration() {
    let dir = Scratch::new("matrix-many");
    let names: Vec<String> = (0..700).map(|i| format!("m{i}")).collect();
    let config: String = names
        .iter()
        .map(|name| format!("[model.{name}]\nprovider = \"echo\"\n\n"))
        .collect();
    dir.write("promptforge.toml", config);
    dir.write("capital.md", PROMPT.replace("{ model: right }", "{}"));
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: echoes\n    live: true\n    expect:\n      result_contains: capital\n",
    );
    let models = names.join(",");
    let args = ["test", "-q", "--models", &models, "capital.test.yaml"];
    let cost = promptforge_tests::perf::process::cost(binary(), dir.path(), &args, &[0]);
    assert!(
        cost.peak_kib < 120 * 1024,
        "700 models peaked at {} MiB",
        cost.peak_kib / 1024
    );
}
