//! `promptforge test --format json` and `--format junit` (`testing.md`): the
//! counts, names and failure texts a CI report reads, on the suite meant to fail.

mod cli_test_support;

use cli_test_support::{fixtures, pf};
use serde_json::Value;

#[test]
fn json_holds_files_problems_cases_and_counts() {
    let run = pf(&fixtures(), &["test", "--format", "json", "fail"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr, "");
    let json: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    assert_eq!(
        (&json["passed"], &json["failed"], &json["skipped"]),
        (&Value::from(1), &Value::from(10), &Value::from(0))
    );
    let files: Vec<&str> = json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["file"].as_str().expect("file"))
        .collect();
    assert_eq!(
        files,
        [
            "fail/ask.test.yaml",
            "fail/fetcher.test.yaml",
            "fail/problems.test.yaml",
            "fail/words.test.yaml"
        ]
    );

    let problems = &json["files"][2];
    assert_eq!(problems["cases"], Value::Array(Vec::new()));
    let problem = &problems["problems"][0];
    assert_eq!(problem["path"], "fail/problems.test.yaml");
    assert_eq!(
        (&problem["line"], &problem["column"]),
        (&Value::from(7), &Value::from(5))
    );
    assert_eq!(problem["code"], "TestFile");
    assert_eq!(problem["severity"], "error");

    let words = &json["files"][3]["cases"];
    assert_eq!(words[0]["name"], "passes");
    assert_eq!(words[0]["status"], "ok");
    assert_eq!(words[0]["failures"], Value::Array(Vec::new()));
    assert!(words[0]["duration_ms"].is_u64());
    assert!(words[0]["seed"].is_u64());
    let wrong = &words[1];
    assert_eq!(wrong["status"], "failed");
    assert_eq!(
        wrong["failures"][0],
        serde_json::json!({
            "what": "expect.result",
            "message": "the result differs",
            "expected": "4 words",
            "actual": "3 words",
            "line": 13,
            "column": 15,
            "text": "expect.result: the result differs\n  expected: \"4 words\"\n  actual:   \"3 words\"",
        })
    );
    // An absent side is null; a failure without texts has neither key.
    let run_error = &words[3]["failures"];
    assert_eq!(run_error[0]["actual"], Value::Null);
    assert_eq!(run_error[1]["expected"], Value::Null);
    let unscripted = &json["files"][1]["cases"][1]["failures"][0];
    assert_eq!(
        unscripted["message"],
        "unscripted call to promptforge/web/fetch"
    );
    assert!(unscripted.get("expected").is_none() && unscripted.get("actual").is_none());
}

#[test]
fn json_of_a_seeded_and_a_skipped_case() {
    let run = pf(
        &fixtures(),
        &["test", "--format", "json", "pass/live.test.yaml"],
    );
    assert_eq!(run.code, Some(0));
    let json: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    let case = &json["files"][0]["cases"][0];
    assert_eq!(case["status"], "skipped");
    assert_eq!(case["duration_ms"], 0);
    assert_eq!(json["skipped"], 1);
}

#[test]
fn junit_reads_as_xml_with_the_counts_names_and_failure_texts() {
    let run = pf(&fixtures(), &["test", "--format", "junit", "fail", "pass"]);
    assert_eq!(run.code, Some(1));
    assert!(run
        .stdout
        .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    let doc = roxmltree::Document::parse(&run.stdout).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(
        (
            root.attribute("tests"),
            root.attribute("failures"),
            root.attribute("skipped")
        ),
        (Some("18"), Some("10"), Some("1"))
    );
    assert!(root
        .attribute("time")
        .is_some_and(|t| t.parse::<f64>().is_ok()));
    let suites: Vec<roxmltree::Node<'_, '_>> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    let names: Vec<&str> = suites.iter().filter_map(|s| s.attribute("name")).collect();
    assert_eq!(
        names,
        [
            "fail/ask.test.yaml",
            "fail/fetcher.test.yaml",
            "fail/problems.test.yaml",
            "fail/words.test.yaml",
            "pass/ask.test.yaml",
            "pass/fetcher.test.yaml",
            "pass/live.test.yaml",
            "pass/words.test.yaml"
        ]
    );
    let counts = |suite: &roxmltree::Node<'_, '_>| {
        ["tests", "failures", "skipped"].map(|a| suite.attribute(a).unwrap_or("?").to_owned())
    };
    assert_eq!(counts(&suites[3]), ["6", "5", "0"]);
    assert_eq!(counts(&suites[6]), ["1", "0", "1"]);

    let cases = |suite: &roxmltree::Node<'_, '_>| -> Vec<(String, String)> {
        suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|c| {
                assert_eq!(c.attribute("classname"), suite.attribute("name"));
                assert!(c
                    .attribute("time")
                    .is_some_and(|t| t.parse::<f64>().is_ok()));
                (
                    c.attribute("name").unwrap_or("").to_owned(),
                    c.first_element_child()
                        .map_or("passed", |e| e.tag_name().name())
                        .to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        cases(&suites[2]),
        [("(test file)".to_owned(), "failure".to_owned())]
    );
    assert_eq!(
        cases(&suites[6]),
        [(
            "the echo model answers live".to_owned(),
            "skipped".to_owned()
        )]
    );
    assert_eq!(
        cases(&suites[3])[0],
        ("passes".to_owned(), "passed".to_owned())
    );

    let failure = |suite: usize, case: usize| {
        let node = suites[suite]
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .nth(case)
            .and_then(|c| c.first_element_child())
            .expect("a failure");
        (
            node.attribute("message").unwrap_or("").to_owned(),
            node.attribute("type").unwrap_or("").to_owned(),
            node.text().unwrap_or("").to_owned(),
        )
    };
    assert_eq!(
        failure(3, 1),
        (
            "the result differs".to_owned(),
            "expect.result".to_owned(),
            "fail/words.test.yaml:13:15: expect.result: the result differs\n  expected: \"4 words\"\n  actual:   \"3 words\"".to_owned()
        )
    );
    // Every failure of a case is in its one <failure>.
    let (message, what, text) = failure(3, 5);
    assert_eq!(
        (message.as_str(), what.as_str()),
        ("the store file count.txt differs", "expect.store.count.txt")
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("fail/words.test.yaml:"))
            .count(),
        2
    );
    let (message, what, text) = failure(2, 0);
    assert!(message.starts_with("unknown field `expct`"), "{message}");
    assert_eq!(what, "TestFile");
    assert!(text.starts_with("fail/problems.test.yaml:7:5: error[TestFile]: unknown field `expct`"));
}

#[test]
fn junit_escapes_names_and_texts() {
    let scratch = promptforge_tests::Scratch::new("junit-escape");
    let prompt = std::fs::read_to_string(fixtures().join("pass/words.md")).expect("fixture");
    scratch.write("words.md", prompt);
    scratch.write(
        "words.test.yaml",
        "cases:\n  - name: \"<&> \\\"quoted\\\" 'single' \\u0001\"\n    args: a\n    expect: { result: \"<b> & \\u0002\" }\n",
    );
    let run = pf(scratch.path(), &["test", "--format", "junit"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stdout
            .contains("name=\"&lt;&amp;&gt; &quot;quoted&quot; &apos;single&apos; \""),
        "{}",
        run.stdout
    );
    let doc = roxmltree::Document::parse(&run.stdout).expect("well-formed XML");
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .expect("a testcase");
    assert_eq!(case.attribute("name"), Some("<&> \"quoted\" 'single' "));
    let text = case
        .first_element_child()
        .and_then(|f| f.text())
        .unwrap_or("");
    assert!(text.contains("expected: \"<b> & \\u0002\""), "{text}");
}

/// Every way `test` can be refused, each with `--format json`: exactly one JSON
/// object on stdout, nothing on stderr, exit 2; a refusal before any case ran
/// is the object's `error` (kind `Usage`), a path that cannot be used one of
/// its `errors` while the other paths still run.
#[test]
fn every_refusal_of_format_json_is_one_json_object() {
    let refusals: [&[&str]; 4] = [
        &["--shard", "3/2", "pass"],
        &["--shard", "x", "pass"],
        &["--watch", "pass"],
        &["--models", "nope", "pass"],
    ];
    for args in refusals {
        let mut all = vec!["test", "--format", "json"];
        all.extend_from_slice(args);
        let run = pf(&fixtures(), &all);
        let json: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON value ({e}): {:?}", run.stdout));
        assert_eq!((run.code, run.stderr.as_str()), (Some(2), ""), "{args:?}");
        assert_eq!(json["error"]["kind"], "Usage", "{args:?}: {json}");
        assert!(
            json["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{args:?}: {json}"
        );
        assert_eq!(
            (&json["files"], &json["passed"], &json["failed"]),
            (&Value::Array(Vec::new()), &Value::from(0), &Value::from(0)),
            "{args:?}"
        );
    }
    let run = pf(
        &fixtures(),
        &["test", "--format", "json", "missing.test.yaml", "pass"],
    );
    let json: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    assert_eq!((run.code, run.stderr.as_str()), (Some(2), ""));
    assert_eq!(json["errors"][0]["path"], "missing.test.yaml", "{json}");
    assert!(json["passed"].as_u64().is_some_and(|n| n > 0), "{json}");
    assert!(json.get("error").is_none(), "{json}");
}
