//! The prompt-test runner (`testing.md`), case by case on the engine: scripted
//! tools answered in order with the real tool's trust, unscripted calls, the model
//! script running out or left over, `input` answers, `store` seeds, the default
//! seed, and each expectation's failure with its expected and actual text.

mod web_host;

use promptforge_engine::prompt_tests::{default_seed, run_case, CaseOptions, CaseReport};
use promptforge_engine::testing::runs::block_on;
use promptforge_syntax::test_file;
use web_host::web_host;

const FETCHER: &str = "---
name: fetcher
description: Fetches twice
promptforge: 0
plugins:
  - promptforge/web
tools:
  fetch: promptforge/web/fetch
---

# Fetcher

```lua
local first = tools.call('fetch', { url = args })
local ok, err = pcall(tools.call, 'fetch', { url = args })
return first .. '|' .. (ok and 'ok' or tostring(err)) .. '|' .. tools.calls.fetch
```
";

const ASKER: &str = "---
name: asker
description: Asks, reads and writes the store, asks a model
promptforge: 0
models:
  writer: {}
---

# Asker

```lua
models.default('writer')
local answer = input.ask('name?')
local notes = store.read('notes.md')
store.write('out.md', notes .. ' ' .. answer)
log('asked ' .. answer)
return models.infer('hello ' .. answer)
```
";

/// Runs case `name` of the test file `yaml` on `prompt`, offline.
fn case(prompt: &str, yaml: &str, name: &str) -> CaseReport {
    let (file, diagnostics) = test_file::parse(yaml);
    assert!(
        diagnostics
            .iter()
            .all(|d| d.severity != promptforge_syntax::Severity::Error),
        "{diagnostics:?}"
    );
    let case = file
        .cases
        .iter()
        .find(|c| c.name.as_ref().is_some_and(|n| n.value == name))
        .expect("the case is in the file")
        .clone();
    let host = web_host();
    block_on(run_case(&host, prompt, &case, CaseOptions::default()))
}

fn rendered(report: &CaseReport) -> Vec<String> {
    report.failures.iter().map(|f| f.render()).collect()
}

#[test]
fn scripted_tools_answer_in_order_the_last_repeating_with_the_real_tools_trust() {
    let report = case(
        FETCHER,
        "cases:
  - name: two fetches
    args: https://example.org
    tools:
      promptforge/web/fetch:
        - output: \"<h1>Rust</h1>\"
        - error: timed out
    expect:
      result_contains: \"|tool call failure: timed out|2\"
      calls: { fetch: 2 }
",
        "two fetches",
    );
    assert_eq!(rendered(&report), Vec::<String>::new());
    let result = report.outcome.result.clone().unwrap_or_default();
    // fetch is an untrusted tool: its scripted output still arrives in the envelope.
    assert!(result.contains("<untrusted_input_"), "{result}");
    assert!(result.contains("&lt;h1>Rust&lt;/h1>"), "{result}");
}

#[test]
fn a_harness_tool_called_but_not_scripted_fails_the_case() {
    let report = case(
        FETCHER,
        "cases:\n  - name: no script\n    args: https://example.org\n    expect:\n      result: x\n",
        "no script",
    );
    assert_eq!(
        rendered(&report),
        ["tools: unscripted call to promptforge/web/fetch"]
    );
}

#[test]
fn input_store_and_model_scripts_are_the_cases() {
    let yaml = "cases:
  - name: all good
    store: { notes.md: earlier }
    input: [Ada]
    model:
      - text: hi Ada
    expect:
      result: hi Ada
      store: { out.md: earlier Ada }
      log_contains: [asked Ada]
      rounds: 1
  - name: script ran out
    store: { notes.md: earlier }
    input: [Ada]
    expect:
      result: hi Ada
  - name: rounds left over
    store: { notes.md: earlier }
    input: [Ada]
    model:
      - text: hi Ada
      - text: unused
  - name: no answer
    store: { notes.md: earlier }
    model:
      - text: hi
    expect:
      error: { kind: Input }
";
    assert_eq!(
        rendered(&case(ASKER, yaml, "all good")),
        Vec::<String>::new()
    );
    assert_eq!(
        rendered(&case(ASKER, yaml, "script ran out")),
        [
            "model: the model script ended after 0 rounds",
            "expect.result: the result differs\n  expected: \"hi Ada\"\n  actual:   (no result)"
        ]
    );
    assert_eq!(
        rendered(&case(ASKER, yaml, "rounds left over")),
        ["model: 1 scripted model rounds were not used"]
    );
    let no_answer = case(ASKER, yaml, "no answer");
    assert_eq!(
        rendered(&no_answer),
        ["model: 1 scripted model rounds were not used"]
    );
}

#[test]
fn every_failed_expectation_is_reported_with_expected_and_actual() {
    let yaml = "cases:
  - name: wrong
    store: { notes.md: earlier }
    input: [Ada]
    model:
      - text: \"hi Ada\\nsecond line\\n\"
    expect:
      result: \"hi Ada\\nthird line\\n\"
      result_contains: Bob
      result_matches: \"^bye\"
      no_result: true
      calls: { fetch: 1 }
      store: { out.md: other, missing.md: x }
      log_contains: [nothing like it]
      rounds: 2
  - name: expects an error
    store: { notes.md: earlier }
    input: [Ada]
    model:
      - text: fine
    expect:
      error: { kind: Tool, message: boom }
";
    assert_eq!(
        rendered(&case(ASKER, yaml, "wrong")),
        [
            "expect.result: the result differs\n  diff (-expected +actual):\n    hi Ada\n  - third line\n  + second line",
            "expect.result_contains: the result does not contain the text\n  expected: \"Bob\"\n  actual:   \"hi Ada\\nsecond line\\n\"",
            "expect.result_matches: the result does not match the pattern\n  expected: \"^bye\"\n  actual:   \"hi Ada\\nsecond line\\n\"",
            "expect.no_result: the run gave a result\n  expected: (no result)\n  actual:   \"hi Ada\\nsecond line\\n\"",
            "expect.calls.fetch: the calls of fetch differ\n  expected: \"1\"\n  actual:   \"0\"",
            "expect.store.out.md: the store file out.md differs\n  expected: \"other\"\n  actual:   \"earlier Ada\"",
            "expect.store.missing.md: the store file missing.md differs\n  expected: \"x\"\n  actual:   (no such file)",
            "expect.log_contains: no log line contains the text\n  expected: \"nothing like it\"\n  actual:   \"asked Ada\"",
            "expect.rounds: the model rounds used differ\n  expected: \"2\"\n  actual:   \"1\"",
        ]
    );
    assert_eq!(
        rendered(&case(ASKER, yaml, "expects an error")),
        ["expect.error: the run did not fail\n  expected: \"error[Tool]: boom\"\n  actual:   (no error)"]
    );
}

#[test]
fn an_unexpected_run_error_fails_the_case_and_error_expectations_compare_kind_and_message() {
    let yaml = "cases:
  - name: unexpected
    input: [Ada]
  - name: expected
    input: [Ada]
    expect:
      error:
        kind: Store
        message_contains: notes.md
  - name: wrong kind
    input: [Ada]
    expect:
      error: { kind: Lua, message: other }
";
    let message = "H1 pass: no such store file \"notes.md\"";
    assert_eq!(
        rendered(&case(ASKER, yaml, "unexpected")),
        [format!(
            "run: the run failed\n  expected: (no error)\n  actual:   \"error[Store]: {}\"",
            message.replace('"', "\\\"")
        )]
    );
    assert_eq!(
        rendered(&case(ASKER, yaml, "expected")),
        Vec::<String>::new()
    );
    assert_eq!(
        rendered(&case(ASKER, yaml, "wrong kind")),
        [
            "expect.error.kind: the error kind differs\n  expected: \"Lua\"\n  actual:   \"Store\"".to_owned(),
            format!("expect.error.message: the error message differs\n  expected: \"other\"\n  actual:   \"{}\"", message.replace('"', "\\\"")),
        ]
    );
}

#[test]
fn a_case_without_a_seed_runs_with_a_fixed_seed_of_its_name() {
    let yaml = "cases:\n  - name: seeded\n    args: x\n    tools:\n      promptforge/web/fetch:\n        - output: page\n";
    let first = case(FETCHER, yaml, "seeded");
    let second = case(FETCHER, yaml, "seeded");
    assert_eq!(first.seed, default_seed("seeded"));
    assert_eq!(first.outcome.result, second.outcome.result);
    let given = case(FETCHER, "cases:\n  - name: s\n    seed: 7\n    args: x\n    tools:\n      promptforge/web/fetch:\n        - output: page\n", "s");
    assert_eq!(given.seed, 7);
    assert_ne!(
        given.outcome.result, first.outcome.result,
        "the nonce follows the seed"
    );
}

#[test]
fn every_run_error_kind_is_one_the_test_file_accepts() {
    use promptforge_engine::RunErrorKind as K;
    use promptforge_syntax::ParseKind as P;
    let kinds = [
        K::Parse(P::Frontmatter),
        K::Parse(P::Version),
        K::Parse(P::Structure),
        K::Parse(P::Lua),
        K::RequirementsUnmet,
        K::Binding,
        K::Tool,
        K::Model,
        K::Store,
        K::Input,
        K::Lua,
        K::Limit,
        K::Cancelled,
        K::Internal,
    ];
    for kind in kinds {
        assert!(
            promptforge_syntax::api_names::RUN_ERROR_KINDS.contains(&kind.as_str()),
            "{}",
            kind.as_str()
        );
    }
}
