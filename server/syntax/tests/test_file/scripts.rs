//! The scripts of a test file (`testing.md`): the model's rounds and their calls,
//! the tools' answers, and a `script` provider's whole turns file; then hostile
//! text, which never panics.

use super::*;
use promptforge_syntax::test_file::parse_rounds;

#[test]
fn a_round_holds_exactly_one_of_text_or_calls() {
    let text = one_case(
        "    model:\n      - {}\n      - { text: a, calls: [] }\n      - 3\n      - text: ok\n",
    );
    let (file, diagnostics) = parse(&text);
    assert_eq!(
        rendered(&text, &diagnostics),
        [
            "4:9 \"{}\" a model round holds exactly one of `text` or `calls`",
            "5:9 \"{ text: a, calls: [] }\" a model round holds exactly one of `text` or `calls`",
            "6:9 \"3\" a model round holds exactly one of `text` or `calls`",
        ]
    );
    assert_eq!(
        file.cases[0].model,
        Some(vec![Round::Text("ok".to_owned())])
    );
}

#[test]
fn a_call_is_a_map_of_one_alias_to_its_arguments() {
    let text =
        one_case("    model:\n      - calls:\n          - { a: 1, b: 2 }\n          - plain\n");
    assert_eq!(
        problems(&text),
        [
            "5:13 \"{ a: 1, b: 2 }\" a scripted call is a map of one alias to its arguments",
            "6:13 \"plain\" a scripted call is a map of one alias to its arguments",
        ]
    );
}

#[test]
fn arguments_are_json_text_unless_written_as_a_string() {
    let text = one_case(
        "    model:\n      - calls:\n          - s: { b: 1, a: [true, null, 1.5] }\n          - s: [1, \"x\"]\n          - s: 5\n          - s: '{\"not json'\n          - s:\n",
    );
    let (file, diagnostics) = parse(&text);
    assert_eq!(diagnostics, vec![]);
    let Some(Some(Round::Calls(calls))) = file.cases[0].model.as_ref().map(|m| m.first()) else {
        panic!("one round of calls");
    };
    let arguments: Vec<&str> = calls.iter().map(|c| c.arguments.as_str()).collect();
    assert_eq!(
        arguments,
        [
            r#"{"b":1,"a":[true,null,1.5]}"#,
            r#"[1,"x"]"#,
            "5",
            r#"{"not json"#,
            "null"
        ]
    );
    let alias = find(&text, "- s:", 0).start + 2;
    assert_eq!(calls[0].alias.range, alias..alias + 1);
    let text = one_case("    model:\n      - calls:\n          - s: { ~: 1 }\n");
    assert_eq!(
        problems(&text),
        ["5:16 \"{ ~: 1 }\" this value cannot be turned into JSON text: key must be a string"]
    );
}

#[test]
fn a_tool_answer_holds_exactly_one_of_output_or_error() {
    let text = one_case(
        "    tools:\n      a/b/c:\n        - { output: x, error: y }\n        - {}\n        - output: { hits: [1, 2] }\n        - error: 5\n",
    );
    let (file, diagnostics) = parse(&text);
    assert_eq!(
        rendered(&text, &diagnostics),
        [
            "5:11 \"{ output: x, error: y }\" a tool answer holds exactly one of `output` or `error`",
            "6:11 \"{}\" a tool answer holds exactly one of `output` or `error`",
            "8:18 \"5\" invalid type: integer `5`, expected a string",
        ]
    );
    assert_eq!(
        file.cases[0].tools[0].answers,
        [Answer::Output(r#"{"hits":[1,2]}"#.to_owned())]
    );
}

#[test]
fn a_model_script_file_is_a_model_list_with_the_same_rules() {
    let (rounds, diagnostics) =
        parse_rounds("- calls:\n    - search: { query: rust }\n- text: done\n");
    assert_eq!(diagnostics, vec![]);
    assert_eq!(
        rounds,
        [
            Round::Calls(vec![ScriptedCall {
                alias: Spanned::new("search".to_owned(), 15..21),
                arguments: r#"{"query":"rust"}"#.to_owned(),
            }]),
            Round::Text("done".to_owned()),
        ]
    );
    assert_eq!(parse_rounds(""), (vec![], vec![]));
    assert_eq!(parse_rounds("# nothing yet\n"), (vec![], vec![]));
    let text = "text: x\n";
    assert_eq!(
        rendered(text, &parse_rounds(text).1),
        ["1:1 \"text: x\" invalid type: map, expected a sequence"]
    );
    let text = "- text: [\n";
    assert_eq!(
        rendered(text, &parse_rounds(text).1),
        ["2:1 \"\" invalid model script: while parsing a node, did not find expected node content"]
    );
    let text = "- {}\n- text: 3\n";
    assert_eq!(
        rendered(text, &parse_rounds(text).1),
        [
            "1:3 \"{}\" a model round holds exactly one of `text` or `calls`",
            "2:9 \"3\" invalid type: integer `3`, expected a string",
        ]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

    /// Hostile YAML-ish text never panics, and every range lies inside the text on
    /// character boundaries.
    #[test]
    fn hostile_text_never_panics(text in "(cases:|prompt:|- |name:|model:|tools:|calls:|text:|output:|error:|expect:|a/b/c:|\\{|\\}|\\[|\\]|,|: |&a |\\*a|!!str |\"|'|\\||>|#|~|-1|é|\n|  |[a-z0-9]{1,3})*") {
        let (_, diagnostics) = parse(&text);
        for d in &diagnostics {
            proptest::prop_assert!(text.get(d.range.clone()).is_some(), "{:?} in {:?}", d.range, text);
        }
        let starts: Vec<usize> = diagnostics.iter().map(|d| d.range.start).collect();
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        proptest::prop_assert_eq!(starts, sorted);
        let (_, diagnostics) = parse_rounds(&text);
        for d in &diagnostics {
            proptest::prop_assert!(text.get(d.range.clone()).is_some());
        }
    }
}
