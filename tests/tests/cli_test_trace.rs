//! Issue 27: `promptforge test --trace DIR` writes the trace of each failing
//! case's run as OTLP/JSON, one file per case; passing cases write none.

use promptforge_tests::{binary, isolate, Scratch};
use serde_json::Value;

const PROMPT: &str = "---\nname: capital\ndescription: d\npromptforge: 0\nmodels:\n  w: {}\n---\n\n# Capital\n\n```lua\nlocal answer = models.infer('What is the capital of France?')\nreturn answer\n```\n";

#[test]
fn each_failing_case_leaves_its_trace() {
    let dir = Scratch::new("test-trace");
    dir.write("capital.md", PROMPT);
    dir.write(
        "capital.test.yaml",
        "cases:\n  - name: right\n    model:\n      - text: Paris\n    expect:\n      result: Paris\n  - name: wrong answer\n    model:\n      - text: Lyon\n    expect:\n      result: Paris\n",
    );
    let mut command = std::process::Command::new(binary());
    isolate(&mut command).current_dir(dir.path()).args([
        "test",
        "-q",
        "--trace",
        "traces",
        "capital.test.yaml",
    ]);
    let out = command.output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "promptforge: the traces of 1 failing cases are in traces\n"
    );
    let files: Vec<_> = std::fs::read_dir(dir.path().join("traces"))
        .expect("the folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0].starts_with("capital.test.yaml--wrong_answer--"),
        "{files:?}"
    );
    let text = std::fs::read_to_string(dir.path().join("traces").join(&files[0])).unwrap();
    let json: Value = serde_json::from_str(&text).expect("OTLP/JSON");
    let spans = json["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        spans
            .iter()
            .any(|s| s["name"].as_str().is_some_and(|n| n.starts_with("chat "))),
        "{text}"
    );
    assert!(
        text.contains("What is the capital of France?"),
        "the request is in the trace"
    );
}
