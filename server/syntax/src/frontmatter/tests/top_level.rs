//! The top level (`language.md` §1.1): the seed examples, required, unknown, duplicate and
//! mistyped keys, the scalar fields, and YAML that does not parse.

use super::*;

const HEAD: &str = "name: p\ndescription: d\npromptforge: 0\n";

#[test]
fn the_seed_examples_are_valid() {
    let examples = [
        "name: page-fetcher\ndescription: Fetches the page named in the argument string\npromptforge: 0\nplugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n",
        "name: page-fetcher\ndescription: Fetches the page named in the argument string\npromptforge: 0\nplugins:\n  - promptforge/web\ntools:\n  fetch: promptforge/web/fetch\n",
        "name: researcher\ndescription: Answers a question from web sources\npromptforge: 0\nplugins:\n  - promptforge/web\ntools:\n  search: promptforge/web/search\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n",
        "name: tool-inspector\ndescription: Reads the fields of a Tool object\npromptforge: 0\nplugins:\n  - promptforge/web\ntools:\n  page: promptforge/web/fetch\n",
        "name: two-step-research\ndescription: Finds sources in one section and writes in the next\npromptforge: 0\nplugins:\n  - promptforge/web\ntools:\n  search: promptforge/web/search\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n",
        "name: p\ndescription: d\npromptforge: 0\nplugins:\n  - promptforge/web\n  - ref: io.github.corp/mcp\n    optional: true\ntools:\n  fetch: promptforge/web/fetch\n  getter: promptforge/web/fetch\n",
    ];
    for yaml in examples {
        let c = check(yaml);
        c.assert_clean();
        assert!(c.fm.name.is_some() && c.fm.description.is_some());
        assert_eq!(c.fm.version.as_ref().map(|v| v.value), Some(0));
        assert!(c.fm.tools.iter().all(|s| s.valid) && c.fm.plugins.iter().all(|p| p.valid));
    }
}

#[test]
fn the_model_holds_every_valid_value_with_its_range() {
    let c = check(&format!("{HEAD}plugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {{}}\nmax_tool_iterations: 5\n"));
    c.assert_clean();
    let fm = &c.fm;
    assert_eq!(
        fm.range,
        0..c.text.find("---\n\n").map(|i| i + 4).unwrap_or(0)
    );
    assert_eq!(fm.yaml_range.start, 4);
    let name = fm
        .name
        .as_ref()
        .map(|n| (n.value.as_str(), n.range.clone()));
    let at = c.find("name: p", 0).start + 6;
    assert_eq!(name, Some(("p", at..at + 1)));
    assert_eq!(fm.description.as_ref().map(|d| d.value.as_str()), Some("d"));
    assert_eq!(fm.max_tool_iterations.as_ref().map(|m| m.value), Some(5));
    assert_eq!(fm.round_cap(), 5);
    let keys: Vec<&str> = fm.keys.iter().map(|k| k.key.value.as_str()).collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "promptforge",
            "plugins",
            "tools",
            "models",
            "max_tool_iterations"
        ]
    );
    assert_eq!(&c.text[fm.keys[3].value_range.clone()], "[promptforge/web]");
    assert_eq!(
        &c.text[fm.keys[4].value_range.clone()],
        "fetch: promptforge/web/fetch"
    );
    let slot = fm.slot("fetch").expect("slot");
    assert_eq!(slot.plugin_id(), Some("promptforge/web"));
    assert_eq!(&c.text[slot.alias.range.clone()], "fetch");
    assert!(fm.model("writer").is_some());
}

#[test]
fn missing_keys_are_reported_at_the_opening_line_in_order() {
    for yaml in ["", "# only a comment\n", "~\n"] {
        let c = check(yaml);
        assert_eq!(
            c.messages(),
            [
                "missing field `name`",
                "missing field `description`",
                "missing field `promptforge`"
            ]
        );
        for (i, key) in ["name", "description", "promptforge"].iter().enumerate() {
            c.assert_diag(i, &format!("missing field `{key}`"), (1, 1), "---");
        }
    }
    let c = check("name: p\npromptforge: 0\n");
    c.assert_one("missing field `description`", (1, 1), "---");
}

#[test]
fn a_top_level_that_is_not_a_map_is_a_type_error() {
    check("- a\n- b\n").assert_one("invalid type: sequence, expected a map", (2, 1), "- a\n- b");
    check("hello\n").assert_one(
        "invalid type: string \"hello\", expected a map",
        (2, 1),
        "hello",
    );
}

#[test]
fn an_unknown_key_is_reported_at_the_key() {
    let c = check(&format!("{HEAD}  \nmodel: x\n1: y\n"));
    let list = "expected one of `name`, `description`, `promptforge`, `plugins`, `tools`, `models`, `max_tool_iterations`";
    assert_eq!(c.diags.len(), 2);
    c.assert_diag(
        0,
        &format!("unknown field `model`, {list}"),
        (6, 1),
        "model",
    );
    c.assert_diag(1, &format!("unknown field `1`, {list}"), (7, 1), "1");
    assert_eq!(c.fm.keys.len(), 5);
}

#[test]
fn a_duplicate_key_is_reported_at_the_second_and_the_first_is_used() {
    let c = check(&format!("{HEAD}name: Other\n"));
    c.assert_one("duplicate field `name`", (5, 1), "name");
    assert_eq!(c.fm.name.as_ref().map(|n| n.value.as_str()), Some("p"));
}

#[test]
fn type_errors_use_serde_wording_at_the_value() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "name: 5\ndescription: d\npromptforge: 0\n",
            "invalid type: integer `5`, expected a string",
            "5",
            "name",
        ),
        (
            "name: p\ndescription: true\npromptforge: 0\n",
            "invalid type: boolean `true`, expected a string",
            "true",
            "description",
        ),
        (
            "name: p\ndescription: d\npromptforge: \"0\"\n",
            "invalid type: string \"0\", expected an integer",
            "\"0\"",
            "promptforge",
        ),
        (
            "name: p\ndescription: d\npromptforge: 1.0\n",
            "invalid type: floating point `1.0`, expected an integer",
            "1.0",
            "promptforge",
        ),
        (
            "name: p\ndescription: d\npromptforge: 1e3\n",
            "invalid type: floating point `1000.0`, expected an integer",
            "1e3",
            "promptforge",
        ),
        (
            "name: p\ndescription: d\npromptforge: .inf\n",
            "invalid type: floating point `inf`, expected an integer",
            ".inf",
            "promptforge",
        ),
        (
            "name: [a]\ndescription: d\npromptforge: 0\n",
            "invalid type: sequence, expected a string",
            "[a]",
            "name",
        ),
        (
            "name: p\ndescription: {a: 1}\npromptforge: 0\n",
            "invalid type: map, expected a string",
            "{a: 1}",
            "description",
        ),
    ];
    for (yaml, message, covers, key) in cases {
        let c = check(yaml);
        let line = 2 + ["name", "description", "promptforge"]
            .iter()
            .position(|k| k == key)
            .unwrap_or(0);
        c.assert_one(message, (line, key.len() + 3), covers);
    }
    let c = check(&format!(
        "{HEAD}max_tool_iterations: [1]\nplugins: {{}}\ntools: x\nmodels: 5\n"
    ));
    c.assert_diag(
        0,
        "invalid type: sequence, expected an integer",
        (5, 22),
        "[1]",
    );
    c.assert_diag(1, "invalid type: map, expected a sequence", (6, 10), "{}");
    c.assert_diag(2, "invalid type: string \"x\", expected a map", (7, 8), "x");
    c.assert_diag(3, "invalid type: integer `5`, expected a map", (8, 9), "5");
}

#[test]
fn a_null_value_is_a_unit_value_placed_after_the_colon() {
    let c = check("name:\ndescription: ~\npromptforge: null\nplugins:   \n");
    assert_eq!(c.diags.len(), 4);
    c.assert_diag(0, "invalid type: unit value, expected a string", (2, 6), "");
    c.assert_diag(
        1,
        "invalid type: unit value, expected a string",
        (3, 14),
        "~",
    );
    c.assert_diag(
        2,
        "invalid type: unit value, expected an integer",
        (4, 14),
        "null",
    );
    c.assert_diag(
        3,
        "invalid type: unit value, expected a sequence",
        (5, 12),
        "",
    );
}

#[test]
fn another_version_is_a_version_error() {
    let c = check("name: p\ndescription: d\npromptforge: 1\n");
    let d = c.assert_one(
        "unsupported promptforge version 1: this engine reads version 0",
        (4, 14),
        "1",
    );
    assert_kind(d, ParseKind::Version);
    assert_eq!(c.fm.version.as_ref().map(|v| v.value), Some(1));
    let c = check("name: p\ndescription: d\npromptforge: -3\n");
    c.assert_one(
        "unsupported promptforge version -3: this engine reads version 0",
        (4, 14),
        "-3",
    );
    let c = check("name: p\ndescription: d\npromptforge: \"1\"\n");
    assert_kind(&c.diags[0], ParseKind::Frontmatter);
}

#[test]
fn the_prompt_name_grammar() {
    let c = check("name: Page\ndescription: d\npromptforge: 0\n");
    c.assert_one(
        "invalid prompt name `Page`: expected [a-z0-9][a-z0-9_-]{0,63}",
        (2, 7),
        "Page",
    );
    assert!(c.fm.name.is_none());
    let c = check("name: \"bad name\"\ndescription: d\npromptforge: 0\n");
    c.assert_one(
        "invalid prompt name `bad name`: expected [a-z0-9][a-z0-9_-]{0,63}",
        (2, 7),
        "\"bad name\"",
    );
    let long = "a".repeat(65);
    let c = check(&format!("name: {long}\ndescription: d\npromptforge: 0\n"));
    c.assert_one(
        &format!("invalid prompt name `{long}`: expected [a-z0-9][a-z0-9_-]{{0,63}}"),
        (2, 7),
        &long,
    );
    check(&format!(
        "name: '{}'\ndescription: d\npromptforge: 0\n",
        "a".repeat(64)
    ))
    .assert_clean();
}

#[test]
fn an_empty_description_is_an_error_at_the_value() {
    let c = check("name: p\ndescription: \"\"\npromptforge: 0\n");
    c.assert_one("description must not be empty", (3, 14), "\"\"");
    let c = check("name: p\ndescription: '   '\npromptforge: 0\n");
    c.assert_one("description must not be empty", (3, 14), "'   '");
    let c = check("name: p\ndescription: |\n\npromptforge: 0\n");
    c.assert_one("description must not be empty", (3, 14), "|");
    let c = check("name: p\ndescription: >\n  two\n  lines\npromptforge: 0\n");
    c.assert_clean();
    assert_eq!(
        c.fm.description.as_ref().map(|d| &c.text[d.range.clone()]),
        Some(">\n  two\n  lines")
    );
}

#[test]
fn max_tool_iterations_is_between_1_and_1000() {
    for (written, ok) in [
        ("1", true),
        ("1000", true),
        ("0", false),
        ("1001", false),
        ("-1", false),
        ("99999999999", false),
    ] {
        let c = check(&format!("{HEAD}max_tool_iterations: {written}\n"));
        if ok {
            c.assert_clean();
            assert_eq!(
                c.fm.max_tool_iterations
                    .as_ref()
                    .map(|m| m.value.to_string()),
                Some(written.to_owned())
            );
        } else {
            c.assert_one(
                &format!("max_tool_iterations must be between 1 and 1000, got {written}"),
                (5, 22),
                written,
            );
            assert_eq!(c.fm.round_cap(), 24);
        }
    }
}

#[test]
fn invalid_yaml_is_one_diagnostic_without_the_parsers_position() {
    // The error hides every other problem (the unknown key, the missing fields).
    let c = check("bogus: 1\nname: a: b\n");
    c.assert_one(
        "invalid frontmatter: mapping values are not allowed in this context",
        (3, 8),
        ": b",
    );
    assert!(c.fm.keys.is_empty());
    // At the end of the YAML text: an empty range there.
    let c = check("name: [a, b\n");
    let d = c.assert_one(
        "invalid frontmatter: while parsing a flow sequence, expected ',' or ']'",
        (3, 1),
        "",
    );
    assert_eq!(d.range.start, c.fm.yaml_range.end);
    let c = check_with_newline("description: «日本»\r\nname: ĉu: b\r\n", "\r\n");
    let d = c.assert_one(
        "invalid frontmatter: mapping values are not allowed in this context",
        (3, 9),
        ": b",
    );
    assert_eq!(d.range, 39..42);
    let c = check("name: \"open\n");
    c.assert_one(
        "invalid frontmatter: while scanning a quoted scalar, found unexpected end of stream",
        (2, 7),
        "\"open",
    );
}

#[test]
fn duplicate_keys_are_not_yaml_errors() {
    let c = check(&format!(
        "{HEAD}tools:\n  a: x/y/z\n  a: x/y/w\ntools: {{}}\n"
    ));
    assert_eq!(
        c.messages(),
        ["duplicate field `a`", "duplicate field `tools`"]
    );
}
