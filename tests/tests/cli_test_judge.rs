//! Issue 28: `expect.judge` grades a case's result against a rubric with a model.
//! Live: the prompt's model and the judge are two loopback OpenAI-compatible
//! servers; the judge is sent the rubric and the result, its pass lets the case
//! pass and its fail (with its reason) fails it. Scripted: the judge's answer is
//! the script's round after the run's, so the plumbing is testable offline.

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_tests::{binary, isolate, Scratch};

const PROMPT: &str = "---\nname: capital\ndescription: d\npromptforge: 0\nmodels:\n  w: { model: m }\n---\n\n# Capital\n\n```lua\nreturn models.infer('What is the capital of France?')\n```\n";

const RUBRIC: &str = "names Paris as the capital of France";

/// A streamed chat completion whose text is `text`.
fn replying(text: &str) -> Reply {
    let content = serde_json::to_string(text).expect("a JSON string");
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let body = chunk(&format!("{{\"content\":{content}}}"), "null")
        + &chunk("{}", "\"stop\"")
        + "data: [DONE]\n\n";
    Reply::sse(&body)
}

fn test(dir: &Scratch, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = std::process::Command::new(binary());
    isolate(&mut command)
        .current_dir(dir.path())
        .env("PROMPTFORGE_TRUST", "1")
        .arg("test")
        .args(args);
    let out = command.output().expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A live suite: the prompt's model answers `answer`, the judge `verdict`.
fn live(answer: &str, verdict: &str) -> (Scratch, Server, Server) {
    live_with(answer, replying(verdict))
}

/// A live suite: the prompt's model answers `answer`, the judge replies `judging`.
fn live_with(answer: &str, judging: Reply) -> (Scratch, Server, Server) {
    let model = Server::serve_blocking(Answers::InOrder(vec![replying(answer)]));
    let judge = Server::serve_blocking(Answers::InOrder(vec![judging]));
    let dir = Scratch::new("judge");
    dir.write(
        "promptforge.toml",
        format!(
            "[model.m]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nretries = 0\n\n[model.j]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"judge-model\"\nretries = 0\n",
            model.url(),
            judge.url()
        ),
    );
    dir.write("capital.md", PROMPT);
    dir.write(
        "capital.test.yaml",
        format!("cases:\n  - name: knows the capital\n    live: true\n    expect:\n      judge:\n        rubric: {RUBRIC}\n        model: j\n"),
    );
    (dir, model, judge)
}

#[test]
fn a_live_judge_that_passes_the_result_passes_the_case() {
    let (dir, model, judge) = live("Paris.", "{\"pass\": true, \"reason\": \"it names Paris\"}");
    let (code, stdout, stderr) = test(&dir, &["--live", "capital.test.yaml"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("ok      capital.test.yaml: knows the capital ("),
        "{stdout}"
    );
    assert_eq!(model.requests().len(), 1);
    // The judge was sent the rubric and the result, on its own model.
    let asked = judge.requests();
    assert_eq!(asked.len(), 1);
    let body: serde_json::Value = serde_json::from_slice(&asked[0].body).expect("JSON");
    assert_eq!(body["model"], "judge-model");
    assert_eq!(
        body["messages"][1]["content"],
        format!("Rubric:\n{RUBRIC}\n\nResult:\nParis.")
    );
    assert_eq!(body["temperature"], 0.0);
}

#[test]
fn a_live_judge_that_fails_the_result_fails_the_case_with_its_reason() {
    let (dir, _model, judge) = live(
        "Lyon.",
        "Here is my verdict:\n```json\n{\"pass\": false, \"reason\": \"Lyon is not the capital of France\"}\n```",
    );
    let (code, stdout, stderr) = test(&dir, &["-q", "--live", "capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "capital.test.yaml:5:7: expect.judge: the judge failed the result: Lyon is not the capital of France\n  expected: \"{RUBRIC}\"\n  actual:   \"Lyon.\"\n"
        )),
        "{stdout}"
    );
    assert_eq!(judge.requests().len(), 1);
}

#[test]
fn a_judge_that_streams_without_end_fails_the_case_at_16_mib() {
    // 64 KiB deltas, 64 MiB of them, never reaching [DONE].
    let delta = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "x".repeat(64 * 1024)
    );
    let endless = Reply::sse(": endless\n\n")
        .gap(std::time::Duration::ZERO)
        .then_repeat(delta.as_bytes(), 1024);
    let (dir, _model, judge) = live_with("Paris.", endless);
    let (code, stdout, stderr) = test(&dir, &["-q", "--live", "capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("capital.test.yaml:5:7: expect.judge: the judge could not grade the result: model \"j\" failed: the reply is larger than 16 MiB\n"),
        "{stdout}"
    );
    assert_eq!(judge.requests().len(), 1);
}

const SCRIPTED: &str = "cases:\n  - name: judged offline\n    model:\n      - text: Paris.\n      - text: '{\"pass\": VERDICT, \"reason\": \"REASON\"}'\n    expect:\n      result: Paris.\n      judge:\n        rubric: names Paris\n";

#[test]
fn a_scripted_case_scripts_the_judge_s_answer_too() {
    let dir = Scratch::new("judge-scripted");
    dir.write("capital.md", PROMPT);
    dir.write(
        "capital.test.yaml",
        SCRIPTED
            .replace("VERDICT", "true")
            .replace("REASON", "it does"),
    );
    let (code, stdout, stderr) = test(&dir, &["capital.test.yaml"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");

    dir.write(
        "capital.test.yaml",
        SCRIPTED
            .replace("VERDICT", "false")
            .replace("REASON", "too terse"),
    );
    let (code, stdout, stderr) = test(&dir, &["-q", "capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(":8:7: expect.judge: the judge failed the result: too terse\n"),
        "{stdout}"
    );

    // A script without the judge's round runs out at the judge.
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: no verdict scripted\n    model:\n      - text: Paris.\n    expect:\n      judge:\n        rubric: names Paris\n",
    );
    let (code, stdout, _) = test(&dir, &["-q", "capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("model: "), "{stdout}");
    assert!(!stdout.contains("expect.judge"), "{stdout}");
}

#[test]
fn an_answer_that_is_no_verdict_fails_with_the_answer() {
    let dir = Scratch::new("judge-no-verdict");
    dir.write("capital.md", PROMPT);
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: judge rambles\n    model:\n      - text: Paris.\n      - text: I think it is fine\n    expect:\n      judge:\n        rubric: names Paris\n",
    );
    let (code, stdout, stderr) = test(&dir, &["-q", "capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("expect.judge: the judge's answer is not a verdict (a JSON object with \"pass\": true or false)\n  expected: \"names Paris\"\n  actual:   \"I think it is fine\"\n"),
        "{stdout}"
    );
}

#[test]
fn a_judge_without_a_rubric_is_an_error_of_the_test_file() {
    let dir = Scratch::new("judge-no-rubric");
    dir.write("capital.md", PROMPT);
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: no rubric\n    model:\n      - text: Paris.\n    expect:\n      judge:\n        model: j\n        grade: hard\n",
    );
    let (code, stdout, stderr) = test(&dir, &["capital.test.yaml"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains("unknown field `grade`, expected `rubric` or `model`"),
        "{all}"
    );
    assert!(all.contains("missing field `rubric`"), "{all}");
}
