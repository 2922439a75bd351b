//! `expect.requests` and `expect.tool_args` (issue 27): a case asserts what was
//! sent to the model and which arguments its tools were called with; a failure
//! shows the requests that were seen.

mod web_host;

use promptforge_engine::prompt_tests::{run_case, CaseOptions, CaseReport};
use promptforge_engine::testing::runs::block_on;
use promptforge_syntax::test_file;
use web_host::web_host;

const SEARCHER: &str = "---
name: searcher
description: Searches with a model
promptforge: 0
plugins:
  - promptforge/web
tools:
  fetch: promptforge/web/fetch
models:
  w: {}
---

# Searcher

```lua
tools.add('fetch')
tools.add_local('note', 'Take a note', { text = 'string' }, function(a) return 'ok' end)
local m = messages.new():system('Be brief.'):user('What is ' .. args .. '?')
local reply = models.loop(m)
return reply
```
";

const CASES: &str = r#"cases:
  - name: sent
    args: Rust
    model:
      - calls:
          - fetch: { url: "https://www.rust-lang.org", depth: 1 }
          - note: { text: "found it" }
      - text: "A language."
    tools:
      promptforge/web/fetch:
        - output: "<h1>Rust</h1>"
    expect:
      result: "A language."
      requests:
        - round: 1
          system_contains: "Be brief"
          messages_contain: "What is Rust?"
          tools: [note, fetch]
        - messages_match: "<untrusted_input_[0-9a-f]{32}>"
          tools_include: [fetch]
      tool_args:
        fetch:
          - { url: "https://www.rust-lang.org" }
        note:
          - { text: "found it" }
  - name: wrong
    args: Rust
    model:
      - calls:
          - fetch: { url: "https://www.rust-lang.org" }
      - text: "A language."
    tools:
      promptforge/web/fetch:
        - output: "<h1>Rust</h1>"
    expect:
      requests:
        - round: 1
          system_contains: "Be long"
          tools: [fetch]
        - round: 3
        - messages_contain: "Python"
      tool_args:
        fetch:
          - { url: "https://python.org" }
          - { url: "https://www.rust-lang.org" }
"#;

fn case(name: &str) -> CaseReport {
    let (file, diagnostics) = test_file::parse(CASES);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let case = file
        .cases
        .iter()
        .find(|c| c.name.as_ref().is_some_and(|n| n.value == name))
        .expect("the case")
        .clone();
    block_on(run_case(
        &web_host(),
        SEARCHER,
        &case,
        CaseOptions::default(),
    ))
}

#[test]
fn checks_on_the_requests_and_the_tool_arguments_hold() {
    let report = case("sent");
    let failures: Vec<String> = report.failures.iter().map(|f| f.render()).collect();
    assert!(report.passed(), "{failures:#?}");
    assert!(
        report.outcome.trace.is_some(),
        "a case checking requests is traced"
    );
}

#[test]
fn each_check_that_fails_shows_the_requests_seen() {
    let report = case("wrong");
    let failures: Vec<String> = report.failures.iter().map(|f| f.render()).collect();
    let first_round =
        "round 1 (w):\n  system: Be brief.\n  user: What is Rust?\n  tools: [fetch, note]";
    assert_eq!(failures.len(), 6, "{failures:#?}");
    assert_eq!(
        failures[0],
        format!(
            "expect.requests[1].system_contains: no system message of the request contains the text\n  expected: \"Be long\"\n  actual:   {}",
            serde_json::to_string(first_round).unwrap()
        )
    );
    assert_eq!(
        failures[1],
        format!(
            "expect.requests[1].tools: the tools offered differ\n  expected: \"fetch\"\n  actual:   {}",
            serde_json::to_string(first_round).unwrap()
        )
    );
    assert_eq!(
        failures[2],
        "expect.requests[2].round: the run made no model round 3\n  expected: \"3\"\n  actual:   \"2\""
    );
    assert!(
        failures[3].starts_with("expect.requests[3]: no model request holds every check\n  expected: \"messages_contain: Python\"\n  actual:   \"round 1 (w):"),
        "{}",
        failures[3]
    );
    assert!(failures[3].contains("round 2 (w):"), "{}", failures[3]);
    assert_eq!(
        failures[4],
        "expect.tool_args.fetch[1]: call 1 of fetch does not have these arguments\n  expected: \"{\\\"url\\\":\\\"https://python.org\\\"}\"\n  actual:   \"{\\\"url\\\":\\\"https://www.rust-lang.org\\\"}\""
    );
    assert_eq!(
        failures[5],
        "expect.tool_args.fetch[2]: call 2 of fetch does not have these arguments\n  expected: \"{\\\"url\\\":\\\"https://www.rust-lang.org\\\"}\"\n  actual:   (no such call)"
    );
}
