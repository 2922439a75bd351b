//! Prompt test files (`testing.md`), sentence by sentence: the spec's example reads
//! to the exact model, and each problem of a test file is reported with its exact
//! message, its exact range and its 1-based `line:column`.

use std::ops::Range;
use std::path::{Path, PathBuf};

use promptforge_syntax::api_names::RUN_ERROR_KINDS;
use promptforge_syntax::test_file::{
    self, is_test_file, parse, prompt_path, Answer, Case, Expect, ExpectError, Problem, Round,
    ScriptedCall, ScriptedTool, Spanned, TestFile,
};
use promptforge_syntax::{Code, Diagnostic, LineIndex, Severity};

#[path = "test_file/scripts.rs"]
mod scripts;

/// `testing.md`'s example file, as written there.
const EXAMPLE: &str = r#"prompt: summarize.md          # optional: default is this file's name without .test.yaml, plus .md
cases:
  - name: reads one page before answering
    args: "What is Rust?"
    seed: 7                   # optional: fixes the untrusted nonce and task ids
    store:                    # optional: files in the run's filesystem at the start
      notes.md: "earlier notes"
    model:                    # the scripted model: one entry per model round, in order, for the whole run
      - calls:                # a round that calls tools (alias -> arguments)
          - search: { query: "rust" }
          - fetch: { url: "https://www.rust-lang.org" }
      - text: "Rust is a systems language."
    tools:                    # Harness tools by tool path: what each call returns, in order; the last repeats
      promptforge/web/search:
        - output: "1. https://www.rust-lang.org"
      promptforge/web/fetch:
        - output: "<h1>Rust</h1>"
        - error: "timed out"  # the tool's own failure text
    input: ["yes"]            # answers to input.ask, in order
    expect:                   # every key optional; all must hold
      result: "Rust is a systems language."
      result_contains: "Rust"
      result_matches: "^Rust"        # a regular expression
      no_result: true
      error: { kind: Tool, message: "...", message_contains: "..." }
      calls: { search: 1, fetch: 1 } # calls per alias over the whole run
      store: { "notes.md": "..." }   # exact contents at the end
      log_contains: ["..."]
      rounds: 2                      # model rounds used
"#;

/// Byte range of the `nth` (0-based) occurrence of `needle` in `text`.
fn find(text: &str, needle: &str, nth: usize) -> Range<usize> {
    let start = text
        .match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("{needle:?} #{nth} not in the text"));
    start..start + needle.len()
}

/// `needle`'s `nth` occurrence as a value with its range.
fn spanned(text: &str, needle: &str, nth: usize, value: &str) -> Spanned<String> {
    Spanned::new(value.to_owned(), find(text, needle, nth))
}

/// Each diagnostic as `line:col "text at its range" message`.
fn rendered(text: &str, diagnostics: &[Diagnostic]) -> Vec<String> {
    let index = LineIndex::new(text);
    diagnostics
        .iter()
        .map(|d| {
            let (line, col) = index.position(text, d.offset);
            let written = text.get(d.range.clone()).expect("a range inside the text");
            format!("{line}:{col} {written:?} {}", d.message)
        })
        .collect()
}

/// The problems of a test file, rendered.
fn problems(text: &str) -> Vec<String> {
    let (_, diagnostics) = parse(text);
    rendered(text, &diagnostics)
}

/// A file of one case holding `body` (lines indented by four spaces) after its name.
fn one_case(body: &str) -> String {
    format!("cases:\n  - name: a\n{body}")
}

#[test]
fn the_spec_example_reads_to_the_exact_model() {
    let text = EXAMPLE;
    let (file, diagnostics) = parse(text);
    assert_eq!(diagnostics, vec![]);
    let call = |alias: &str, arguments: &str| ScriptedCall {
        alias: spanned(text, alias, 0, alias),
        arguments: arguments.to_owned(),
    };
    let quoted = |value: &str, nth: usize| spanned(text, &format!("\"{value}\""), nth, value);
    let case = Case {
        name: Some(spanned(
            text,
            "reads one page before answering",
            0,
            "reads one page before answering",
        )),
        range: find(text, "name: reads", 0).start..find(text, "rounds: 2", 0).end,
        args: "What is Rust?".to_owned(),
        seed: Some(7),
        store: vec![(
            spanned(text, "notes.md", 0, "notes.md"),
            "earlier notes".to_owned(),
        )],
        model: Some(vec![
            Round::Calls(vec![
                call("search", r#"{"query":"rust"}"#),
                call("fetch", r#"{"url":"https://www.rust-lang.org"}"#),
            ]),
            Round::Text("Rust is a systems language.".to_owned()),
        ]),
        tools: vec![
            ScriptedTool {
                path: spanned(text, "promptforge/web/search", 0, "promptforge/web/search"),
                answers: vec![Answer::Output("1. https://www.rust-lang.org".to_owned())],
            },
            ScriptedTool {
                path: spanned(text, "promptforge/web/fetch", 0, "promptforge/web/fetch"),
                answers: vec![
                    Answer::Output("<h1>Rust</h1>".to_owned()),
                    Answer::Error("timed out".to_owned()),
                ],
            },
        ],
        input: vec!["yes".to_owned()],
        live: false,
        repeat: None,
        min_pass: None,
        expect: Expect {
            range: Some(find(text, "expect", 0)),
            result: Some(quoted("Rust is a systems language.", 1)),
            result_contains: Some(quoted("Rust", 0)),
            result_matches: Some(quoted("^Rust", 0)),
            no_result: Some(Spanned::new(true, find(text, "true", 0))),
            error: Some(ExpectError {
                range: find(text, "error: {", 0).start..find(text, "error: {", 0).start + 5,
                kind: Some(spanned(text, "Tool", 0, "Tool")),
                message: Some(quoted("...", 0)),
                message_contains: Some(quoted("...", 1)),
            }),
            calls: vec![
                (spanned(text, "search", 2, "search"), 1),
                (spanned(text, "fetch", 2, "fetch"), 1),
            ],
            store: vec![(quoted("notes.md", 0), "...".to_owned())],
            log_contains: vec![quoted("...", 3)],
            rounds: Some(Spanned::new(2, find(text, "2", 0))),
            requests: Vec::new(),
            tool_args: Vec::new(),
            judge: None,
        },
    };
    let expected = TestFile {
        prompt: Some(spanned(text, "summarize.md", 0, "summarize.md")),
        cases: vec![case],
    };
    assert_eq!(file, expected);
}

#[test]
fn the_prompt_is_beside_the_test_file_by_default() {
    let file = TestFile::default();
    let at = Path::new("prompts/summarize.test.yaml");
    assert_eq!(
        prompt_path(at, &file),
        PathBuf::from("prompts/summarize.md")
    );
    assert_eq!(
        prompt_path(Path::new("x.test.yaml"), &file),
        PathBuf::from("x.md")
    );
    let (file, _) = parse("prompt: ../other.md\ncases: []\n");
    assert_eq!(prompt_path(at, &file), PathBuf::from("prompts/../other.md"));
    assert!(is_test_file(Path::new("a/summarize.test.yaml")));
    assert!(!is_test_file(Path::new("summarize.yaml")));
    assert!(!is_test_file(Path::new("summarize.test.yml")));
    assert!(!is_test_file(Path::new("a/.test.yaml")));
}

#[test]
fn a_file_without_cases_misses_the_field_at_its_start() {
    assert_eq!(problems(""), ["1:1 \"\" missing field `cases`"]);
    assert_eq!(
        problems("# only a comment\n"),
        ["1:1 \"\" missing field `cases`"]
    );
    assert_eq!(
        problems("# tests\nprompt: a.md\n"),
        ["2:1 \"\" missing field `cases`"]
    );
    let (file, diagnostics) = parse("cases: []\n");
    assert_eq!((file.cases, diagnostics), (vec![], vec![]));
}

#[test]
fn a_top_level_that_is_not_a_map_is_a_type_error() {
    assert_eq!(
        problems("- name: a\n"),
        ["1:1 \"- name: a\" invalid type: sequence, expected a map"]
    );
    assert_eq!(
        problems("hello\n"),
        ["1:1 \"hello\" invalid type: string \"hello\", expected a map"]
    );
}

#[test]
fn yaml_that_does_not_parse_runs_from_the_parsers_byte_to_its_line_end() {
    assert_eq!(
        problems("cases:\n  - name: a\n   b: c\n"),
        ["3:4 \"b: c\" invalid test file: while parsing a block collection, did not find expected '-' indicator"]
    );
    assert_eq!(
        problems("cases: []\n---\ncases: []\n"),
        ["2:1 \"---\" invalid test file: deserializing from YAML containing more than one document is not supported"]
    );
}

#[test]
fn unknown_keys_list_their_places_keys_in_the_specs_order() {
    assert_eq!(
        problems("cases: []\nprompts: a.md\n"),
        ["2:1 \"prompts\" unknown field `prompts`, expected `prompt` or `cases`"]
    );
    let text = one_case(
        "    arg: x\n    expect:\n      result_match: x\n      error: { kinds: Tool }\n    model:\n      - texts: x\n    tools:\n      a/b/c:\n        - outputs: x\n",
    );
    assert_eq!(
        problems(&text),
        [
            "3:5 \"arg\" unknown field `arg`, expected one of `name`, `args`, `seed`, `store`, `model`, `tools`, `input`, `live`, `repeat`, `min_pass`, `expect`",
            "5:7 \"result_match\" unknown field `result_match`, expected one of `result`, `result_contains`, `result_matches`, `no_result`, `error`, `calls`, `store`, `log_contains`, `rounds`, `requests`, `tool_args`, `judge`",
            "6:16 \"kinds\" unknown field `kinds`, expected one of `kind`, `message`, `message_contains`",
            "8:9 \"texts\" unknown field `texts`, expected `text` or `calls`",
            "8:9 \"texts: x\" a model round holds exactly one of `text` or `calls`",
            "11:11 \"outputs\" unknown field `outputs`, expected `output` or `error`",
            "11:11 \"outputs: x\" a tool answer holds exactly one of `output` or `error`",
        ]
    );
    // A key that is not a string is unknown too, named by its text.
    assert_eq!(
        problems("cases: []\n1: x\n"),
        ["2:1 \"1\" unknown field `1`, expected `prompt` or `cases`"]
    );
}

#[test]
fn a_key_written_twice_is_reported_at_the_second_with_the_first_related() {
    let text = "cases: []\nprompt: a.md\nprompt: b.md\n";
    let (file, diagnostics) = parse(text);
    assert_eq!(
        rendered(text, &diagnostics),
        ["3:1 \"prompt\" duplicate field `prompt`"]
    );
    assert_eq!(diagnostics[0].related[0].range, find(text, "prompt", 0));
    assert_eq!(diagnostics[0].related[0].message, "first written here");
    assert_eq!(file.prompt.map(|p| p.value), Some("a.md".to_owned()));
    let text = one_case("    seed: 1\n    seed: 2\n");
    assert_eq!(problems(&text), ["4:5 \"seed\" duplicate field `seed`"]);
}

#[test]
fn a_case_without_a_name_is_kept_and_reported_at_its_map() {
    let text = "cases:\n  - args: x\n    seed: 1\n";
    let (file, diagnostics) = parse(text);
    assert_eq!(
        rendered(text, &diagnostics),
        ["2:5 \"args: x\\n    seed: 1\" missing field `name`"]
    );
    assert_eq!(file.cases.len(), 1);
    assert_eq!(file.cases[0].name, None);
    assert_eq!(file.cases[0].args, "x");
}

#[test]
fn two_cases_with_one_name_are_reported_at_the_second_name() {
    let text = "cases:\n  - name: same\n  - name: other\n  - name: \"same\"\n";
    let (file, diagnostics) = parse(text);
    assert_eq!(
        rendered(text, &diagnostics),
        ["4:11 \"\\\"same\\\"\" duplicate case name \"same\""]
    );
    assert_eq!(diagnostics[0].related[0].range, find(text, "same", 0));
    assert_eq!(diagnostics[0].related[0].message, "first used here");
    assert_eq!(file.cases.len(), 3);
}

#[test]
fn a_live_case_may_not_script_the_model_or_the_tools() {
    let text = one_case("    live: true\n    model: []\n    tools: {}\n");
    assert_eq!(
        problems(&text),
        [
            "4:5 \"model\" `model` is not allowed on a live case",
            "5:5 \"tools\" `tools` is not allowed on a live case",
        ]
    );
    let (file, _) = parse(&one_case("    live: true\n"));
    assert!(file.cases[0].live);
    assert_eq!(
        problems(&one_case("    live: false\n    model: []\n")),
        Vec::<String>::new()
    );
}

/// `repeat:` is bounded (hostile probe, issue 39: `repeat: 1000000000` was
/// taken, and every run's report kept).
#[test]
fn repeat_runs_from_1_to_the_bound() {
    let repeat = |n: &str| problems(&one_case(&format!("    live: true\n    repeat: {n}\n")));
    assert_eq!(repeat("1000"), Vec::<String>::new());
    assert_eq!(
        repeat("1001"),
        ["4:13 \"1001\" invalid value: integer `1001`, expected a whole number from 1 to 1000"]
    );
    assert_eq!(
        repeat("1000000000"),
        ["4:13 \"1000000000\" invalid value: integer `1000000000`, expected a whole number from 1 to 1000"]
    );
    assert_eq!(
        repeat("0"),
        ["4:13 \"0\" invalid value: integer `0`, expected a whole number from 1 to 1000"]
    );
    let (file, _) = parse(&one_case("    live: true\n    repeat: 1001\n"));
    assert_eq!(file.cases[0].repeat, None);
}

#[test]
fn a_tools_key_is_an_exact_tool_path() {
    let text = one_case(
        "    tools:\n      promptforge/Web/fetch: []\n      promptforge/web: []\n      a/b/c: []\n",
    );
    let (file, diagnostics) = parse(&text);
    assert_eq!(
        rendered(&text, &diagnostics),
        [
            "4:7 \"Web\" invalid exact tool path `promptforge/Web/fetch`: invalid tool id: segment 2 contains `W`; allowed are a-z, 0-9, -, _ and .",
            "5:7 \"promptforge/web\" invalid exact tool path `promptforge/web`: invalid tool id: a tool id has exactly 3 segments (namespace/plugin/name)",
        ]
    );
    // The segment is the range; the position printed is the key's first character.
    assert_eq!(diagnostics[0].range, find(&text, "Web", 0));
    assert_eq!(
        diagnostics[0].offset,
        find(&text, "promptforge/Web", 0).start
    );
    let paths: Vec<&str> = file.cases[0]
        .tools
        .iter()
        .map(|t| t.path.value.as_str())
        .collect();
    assert_eq!(paths, ["a/b/c"]);
}

#[test]
fn a_free_map_key_written_twice_is_a_duplicate_entry() {
    let text =
        one_case("    store: { a.md: x, a.md: y }\n    expect:\n      calls: { s: 1, s: 2 }\n");
    let (file, diagnostics) = parse(&text);
    assert_eq!(
        rendered(&text, &diagnostics),
        [
            "3:23 \"a.md\" duplicate entry with key \"a.md\"",
            "5:22 \"s\" duplicate entry with key \"s\"",
        ]
    );
    assert_eq!(diagnostics[0].related[0].range, find(&text, "a.md", 0));
    assert_eq!(file.cases[0].store[0].1, "x");
}

#[test]
fn a_pattern_that_does_not_compile_is_reported_at_its_scalar() {
    let text = one_case("    expect:\n      result_matches: \"(a\"\n");
    let (file, diagnostics) = parse(&text);
    assert_eq!(
        rendered(&text, &diagnostics),
        ["4:23 \"\\\"(a\\\"\" invalid regular expression: unclosed group"]
    );
    assert_eq!(file.cases[0].expect.result_matches, None);
    assert_eq!(
        problems(&one_case(
            "    expect:\n      result_matches: '\\p{Nope}'\n"
        )),
        ["4:23 \"'\\\\p{Nope}'\" invalid regular expression: Unicode property not found"]
    );
}

#[test]
fn an_error_kind_is_one_of_the_run_error_kinds() {
    let text = one_case("    expect:\n      error: { kind: Parse }\n");
    assert_eq!(
        problems(&text),
        ["4:22 \"Parse\" unknown variant `Parse`, expected one of `Frontmatter`, `Version`, `Structure`, `Lua`, `RequirementsUnmet`, `Binding`, `Tool`, `Model`, `Store`, `Input`, `Limit`, `Cancelled`, `Internal`"]
    );
    for kind in RUN_ERROR_KINDS {
        let text = one_case(&format!("    expect:\n      error: {{ kind: {kind} }}\n"));
        let (file, diagnostics) = parse(&text);
        assert_eq!(diagnostics, vec![], "{kind}");
        let kind_read = file.cases[0]
            .expect
            .error
            .as_ref()
            .and_then(|e| e.kind.clone());
        assert_eq!(kind_read.map(|k| k.value), Some(kind.to_owned()));
    }
}

#[test]
fn values_of_the_wrong_type_get_serdes_wording() {
    let text = one_case(
        "    args: 5\n    seed: -1\n    store: [x]\n    input: \"yes\"\n    live: yes\n    expect:\n      no_result: 1\n      calls: { s: one }\n      log_contains: \"x\"\n      rounds: 1.5\n",
    );
    assert_eq!(
        problems(&text),
        [
            "3:11 \"5\" invalid type: integer `5`, expected a string",
            "4:11 \"-1\" invalid value: integer `-1`, expected u64",
            "5:12 \"[x]\" invalid type: sequence, expected a map",
            "6:12 \"\\\"yes\\\"\" invalid type: string \"yes\", expected a sequence",
            "7:11 \"yes\" invalid type: string \"yes\", expected a boolean",
            "9:18 \"1\" invalid type: integer `1`, expected a boolean",
            "10:19 \"one\" invalid type: string \"one\", expected u64",
            "11:21 \"\\\"x\\\"\" invalid type: string \"x\", expected a sequence",
            "12:15 \"1.5\" invalid type: floating point `1.5`, expected u64",
        ]
    );
    assert_eq!(
        problems("prompt: 5\ncases: {}\n"),
        [
            "1:9 \"5\" invalid type: integer `5`, expected a string",
            "2:8 \"{}\" invalid type: map, expected a sequence",
        ]
    );
    assert_eq!(
        problems("cases:\n  - x\n  -\n"),
        [
            "2:5 \"x\" invalid type: string \"x\", expected a map",
            "3:4 \"\" invalid type: unit value, expected a map",
        ]
    );
    assert_eq!(
        problems(&one_case(
            "    store: { a.md: 1, 2: x }\n    input: [yes, 3]\n"
        )),
        [
            "3:20 \"1\" invalid type: integer `1`, expected a string",
            "3:23 \"2\" invalid type: integer `2`, expected a string",
            "4:18 \"3\" invalid type: integer `3`, expected a string",
        ]
    );
}

#[test]
fn positions_count_characters_and_take_crlf_as_one_line_end() {
    let text = "cases:\r\n  - name: \"é\"\r\n    argz: x\r\n";
    assert_eq!(
        problems(text),
        ["3:5 \"argz\" unknown field `argz`, expected one of `name`, `args`, `seed`, `store`, `model`, `tools`, `input`, `live`, `repeat`, `min_pass`, `expect`"]
    );
    let text = "cases:\n  - { name: \"日本\", seed: x }\n";
    assert_eq!(
        problems(text),
        ["2:25 \"x\" invalid type: string \"x\", expected u64"]
    );
}

#[test]
fn the_codes_are_test_file_errors_and_no_prompt_parse_kind() {
    let (_, diagnostics) = parse("cases: []\nx: 1\n");
    let code = &diagnostics[0].code;
    assert!(matches!(code, Code::TestFile(Problem::UnknownField { .. })));
    assert_eq!(code.name(), "TestFile");
    assert_eq!(code.severity(), Severity::Error);
    assert_eq!(code.parse_kind(), None);
    assert!(!code.refuses_requirements());
    let alias = Code::UnknownAlias {
        alias: "search".to_owned(),
    };
    assert_eq!(alias.name(), "UnknownAlias");
    assert_eq!(alias.severity(), Severity::Warning);
    assert_eq!(alias.parse_kind(), None);
    assert!(!alias.refuses_requirements());
    assert_eq!(
        alias.message(),
        "the prompt neither binds nor registers a tool named \"search\"; the engine decides at run time"
    );
    assert_eq!(
        test_file::messages::unknown_alias("search"),
        alias.message()
    );
}

#[test]
fn the_error_kinds_are_listed_once_each() {
    let mut sorted = RUN_ERROR_KINDS.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), RUN_ERROR_KINDS.len());
}

/// Issue 27: `expect.requests` (checks on what the model was sent) and
/// `expect.tool_args` (per alias, each call's arguments as JSON text).
#[test]
fn requests_and_tool_args_are_read() {
    let text = one_case(
        "    expect:\n      requests:\n        - round: 1\n          system_contains: Be brief\n          tools: [fetch, search]\n        - messages_match: \"Rust\\\\?$\"\n          tools_include: [fetch]\n      tool_args:\n        fetch:\n          - { url: \"https://x\" }\n          - raw text\n",
    );
    let (file, problems) = parse(&text);
    assert_eq!(problems, Vec::new(), "{text}");
    let expect = &file.cases[0].expect;
    assert_eq!(expect.requests.len(), 2);
    let first = &expect.requests[0];
    assert_eq!(first.round.as_ref().map(|r| r.value), Some(1));
    assert_eq!(
        first.system_contains.as_ref().map(|s| s.value.as_str()),
        Some("Be brief")
    );
    assert_eq!(
        first.tools.as_ref().map(|t| t.value.clone()),
        Some(vec!["fetch".to_owned(), "search".to_owned()])
    );
    let second = &expect.requests[1];
    assert_eq!(second.round, None);
    assert_eq!(
        second.messages_match.as_ref().map(|s| s.value.as_str()),
        Some("Rust\\?$")
    );
    let (alias, calls) = &expect.tool_args[0];
    assert_eq!(alias.value, "fetch");
    let texts: Vec<&str> = calls.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(texts, [r#"{"url":"https://x"}"#, "raw text"]);
}

#[test]
fn a_request_check_with_an_unknown_key_or_a_bad_pattern_is_a_problem() {
    let text = one_case("    expect:\n      requests:\n        - round: 1\n          system: x\n        - messages_match: \"(\"\n");
    let (_, problems) = parse(&text);
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].contains("system") && messages[0].contains("system_contains"),
        "{messages:?}"
    );
    assert!(messages[1].contains("unclosed group"), "{messages:?}");
}
