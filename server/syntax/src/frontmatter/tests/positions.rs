//! Positions (`language.md` §1.2): document order, CRLF and lone CR, multi-byte characters,
//! quoted scalars, flow style, anchors, block scalars, limits, and no panic on any input.

use super::*;

const HEAD: &str = "name: p\ndescription: d\npromptforge: 0\n";

#[test]
fn every_error_is_reported_in_one_pass_in_document_order() {
    let c = check("name: Bad\ndescription: ''\nextra: 1\nplugins:\n  - Acme/x\n  - {optional: true}\ntools:\n  9: a/b\nmodels:\n  w: {temperature: 9}\n");
    assert_eq!(
        c.messages(),
        [
            "missing field `promptforge`",
            "invalid prompt name `Bad`: expected [a-z0-9][a-z0-9_-]{0,63}",
            "description must not be empty",
            "unknown field `extra`, expected one of `name`, `description`, `promptforge`, `plugins`, `tools`, `models`, `max_tool_iterations`",
            "invalid Plugin id `Acme/x`: invalid global name: segment 1 contains `A`; allowed are a-z, 0-9, -, _ and .",
            "missing field `ref`",
            "invalid alias \"9\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
            "invalid exact tool path `a/b`: invalid tool id: a tool id has exactly 3 segments (namespace/plugin/name)",
            "temperature must be between 0 and 2, got 9",
        ]
    );
    let lines: Vec<usize> = c
        .diags
        .iter()
        .map(|d| line_col(&c.text, d.offset).0)
        .collect();
    assert_eq!(lines, [1, 2, 3, 4, 6, 7, 9, 9, 11]);
}

#[test]
fn crlf_line_ends_give_exact_byte_ranges() {
    let yaml = "name: p\r\ndescription: d\r\npromptforge: 0\r\nplugins:\r\n  - promptforge/Web\r\ntools:\r\n  x: a/b\r\n";
    let c = check_with_newline(yaml, "\r\n");
    assert_eq!(c.diags.len(), 2);
    let d = c.assert_diag(0, "invalid Plugin id `promptforge/Web`: invalid global name: segment 2 contains `W`; allowed are a-z, 0-9, -, _ and .", (6, 5), "Web");
    // "---\r\n" 5 + "name: p\r\n" 9 + "description: d\r\n" 16 + "promptforge: 0\r\n" 16 + "plugins:\r\n" 10 + "  - " 4,
    // reported there; the range covers segment 2, `Web`, after "promptforge/".
    assert_eq!(d.offset, 60);
    assert_eq!(d.range, 72..75);
    let d = c.assert_diag(1, "invalid exact tool path `a/b`: invalid tool id: a tool id has exactly 3 segments (namespace/plugin/name)", (8, 6), "a/b");
    assert_eq!(d.range, 90..93);
    assert_eq!(c.fm.yaml_range, 5..5 + yaml.len());
    assert_eq!(
        &c.text[c.fm.keys[3].value_range.clone()],
        "- promptforge/Web"
    );
}

#[test]
fn a_lone_cr_ends_a_line() {
    let c = check_with_newline(
        "name: p\rdescription: d\rpromptforge: 0\rtools:\r  x: 5\r",
        "\r",
    );
    let d = c.assert_one(
        "invalid type: integer `5`, expected an exact tool path string",
        (6, 6),
        "5",
    );
    assert_eq!(d.range, 54..55);
}

#[test]
fn columns_count_characters_and_ranges_count_bytes() {
    let c = check(&format!("{HEAD}tools: {{ ĉu: a/b/c, ŝi: 'ĝ/b/c' }}\n"));
    assert_eq!(c.diags.len(), 3);
    let d = c.assert_diag(
        0,
        "invalid alias \"ĉu\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        (5, 10),
        "ĉu",
    );
    assert_eq!(d.range.len(), 3);
    c.assert_diag(
        1,
        "invalid alias \"ŝi\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        (5, 21),
        "ŝi",
    );
    let d = c.assert_diag(2, "invalid exact tool path `ĝ/b/c`: invalid tool id: segment 1 contains `ĝ`; allowed are a-z, 0-9, -, _ and .", (5, 25), "ĝ");
    assert_eq!(d.range.len(), 2);
    let c = check("description: «é»\nname: p\npromptforge: 0\nmodels: { 日本: {} }\n");
    let d = c.assert_one(
        "invalid alias \"日本\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        (5, 11),
        "日本",
    );
    assert_eq!(d.range.len(), 6);
}

#[test]
fn quoted_scalars_are_placed_at_their_quote() {
    let c = check(&format!(
        "{HEAD}tools:\n  'a': \"promptforge/web/Fetch\"\n  b: 'it''s/a/b'\n"
    ));
    assert_eq!(c.diags.len(), 2);
    c.assert_diag(0, "invalid exact tool path `promptforge/web/Fetch`: invalid tool id: segment 3 contains `F`; allowed are a-z, 0-9, -, _ and .", (6, 8), "Fetch");
    // `''` is an escape: the written text is not the value, so the whole scalar is covered.
    c.assert_diag(1, "invalid exact tool path `it's/a/b`: invalid tool id: segment 1 contains `'`; allowed are a-z, 0-9, -, _ and .", (7, 6), "'it''s/a/b'");
    assert_eq!(&c.text[c.fm.tools[0].alias.range.clone()], "'a'");
    // A comment after a quoted scalar is not part of it.
    let c = check("name: 'Bad'  # a comment\ndescription: \"d \\\" q\" # c\npromptforge: 0\n");
    c.assert_one(
        "invalid prompt name `Bad`: expected [a-z0-9][a-z0-9_-]{0,63}",
        (2, 7),
        "'Bad'",
    );
    assert_eq!(
        c.fm.description.as_ref().map(|d| &c.text[d.range.clone()]),
        Some("\"d \\\" q\"")
    );
    assert_eq!(
        c.fm.description.as_ref().map(|d| d.value.as_str()),
        Some("d \" q")
    );
}

#[test]
fn flow_style_plugins_and_models() {
    let c = check(&format!("{HEAD}plugins: [promptforge/web]\ntools: {{fetch: promptforge/web/fetch}}\nmodels: {{ writer: {{}} }}\n"));
    c.assert_clean();
    assert_eq!(c.fm.plugins.len(), 1);
    assert!(c.fm.tools[0].valid);
    assert_eq!(c.fm.models[0].label.value, "writer");
    let c = check(&format!(
        "{HEAD}plugins: [ 'acme/x' , acme/y ]  # two\nmodels: {{ writer: {{ }} , judge: ~ }}\n"
    ));
    c.assert_clean();
    assert_eq!(
        &c.text[c.fm.keys[3].value_range.clone()],
        "[ 'acme/x' , acme/y ]"
    );
    assert_eq!(&c.text[c.fm.plugins[0].id.range.clone()], "'acme/x'");
    assert_eq!(
        &c.text[c.fm.keys[4].value_range.clone()],
        "{ writer: { } , judge: ~ }"
    );
    assert_eq!(&c.text[c.fm.models[0].options_range.clone()], "{ }");
    let c = check(&format!(
        "{HEAD}plugins: [ \"acme/X\" , \"acme/y\"\n  , 'b' ]\n"
    ));
    c.assert_diag(0, "invalid Plugin id `acme/X`: invalid global name: segment 2 contains `X`; allowed are a-z, 0-9, -, _ and .", (5, 12), "X");
    c.assert_diag(1, "invalid Plugin id `b`: invalid global name: expected 2 or 3 segments separated by /, found 1", (6, 5), "'b'");
    let c = check(&format!(
        "{HEAD}plugins: [promptforge/web, promptforge/web]\n"
    ));
    let d = c.assert_one(
        "invalid frontmatter: Plugin promptforge/web is declared more than once under plugins",
        (5, 28),
        "promptforge/web",
    );
    assert_eq!(d.related[0].range, c.find("promptforge/web", 0));
}

#[test]
fn block_values_run_to_the_end_of_their_last_content() {
    let c = check(&format!("{HEAD}plugins:\n  - a/b\n  - ref: c/d\n    optional: true   \n\n# trailing comment\nname2: 1\n"));
    assert_eq!(
        &c.text[c.fm.keys[3].value_range.clone()],
        "- a/b\n  - ref: c/d\n    optional: true"
    );
    assert_eq!(
        &c.text[c.fm.plugins[1].entry_range.clone()],
        "ref: c/d\n    optional: true"
    );
    let empty = &c
        .fm
        .keys
        .iter()
        .find(|k| k.key.value == "name")
        .expect("name")
        .value_range;
    assert_eq!(&c.text[empty.clone()], "p");
}

#[test]
fn anchors_and_aliases_resolve_and_place_at_the_alias() {
    let c = check(&format!("{HEAD}plugins: [&w promptforge/web]\ntools:\n  a: &p promptforge/web/fetch\n  b: *p\n  c: *w\n"));
    let d = c.assert_one("invalid exact tool path `promptforge/web`: invalid tool id: a tool id has exactly 3 segments (namespace/plugin/name)", (9, 6), "*w");
    assert_eq!(d.range.len(), 2);
    assert!(c.fm.tools[1].valid);
}

#[test]
fn limits_and_several_documents_are_yaml_errors() {
    let deep = format!(
        "{HEAD}plugins:\n{}",
        (0..200)
            .map(|i| format!("{}- \n", "  ".repeat(i + 1)))
            .collect::<String>()
    );
    let c = check(&deep);
    assert_eq!(
        c.messages(),
        ["invalid frontmatter: recursion limit exceeded"]
    );
    let mut laughs = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..8 {
        let p = i - 1;
        laughs.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    assert_eq!(
        check(&laughs).messages(),
        ["invalid frontmatter: repetition limit exceeded"]
    );
    let c = check("a: &x [*x]\n");
    assert_eq!(
        c.messages(),
        ["invalid frontmatter: while parsing node, found a recursive alias"]
    );
    let c = check("name: p\n...\n--- b\n");
    c.assert_one("invalid frontmatter: deserializing from YAML containing more than one document is not supported", (4, 1), "--- b");
}

/// A tiny deterministic generator (xorshift) for the no-panic sweep.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn no_input_panics_and_every_range_is_inside_the_text_on_char_boundaries() {
    let pieces = [
        "name",
        "tools",
        "plugins",
        "models",
        "ref",
        "optional",
        "config",
        "description",
        "promptforge",
        "max_tool_iterations",
        "temperature",
        "max_tokens",
        ":",
        ": ",
        "- ",
        "\n",
        "\r\n",
        "\r",
        "  ",
        "\t",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        "\"",
        "\\",
        "&a",
        "*a",
        "!!str ",
        "|",
        ">",
        "#",
        "?",
        "a/b",
        "/",
        "é",
        "日",
        "0",
        "1.5",
        "-1",
        "true",
        "~",
        "store",
        "---",
        "...",
        "%",
        "@",
        "`",
        "x",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..4000 {
        let len = (rng.next() % 40) as usize;
        let yaml: String = (0..len)
            .map(|_| pieces[(rng.next() % pieces.len() as u64) as usize])
            .collect();
        let c = check(&yaml);
        for d in &c.diags {
            assert!(
                d.range.start <= d.range.end && d.range.end <= c.text.len(),
                "{yaml:?}: {d:?}"
            );
            assert!(c.text.get(d.range.clone()).is_some(), "{yaml:?}: {d:?}");
            for r in &d.related {
                assert!(c.text.get(r.range.clone()).is_some(), "{yaml:?}: {d:?}");
            }
        }
    }
}

#[test]
fn block_scalars_start_at_their_indicator_and_tags_resolve() {
    let c = check(&format!(
        "{HEAD}plugins:\n  - |\n    a/b\ntools:\n  'k': >-  # folded\n    a/b\n"
    ));
    assert_eq!(c.diags.len(), 2);
    c.assert_diag(
        0,
        "invalid Plugin id `a/b\n`: invalid global name: segment 2 contains a control character",
        (6, 5),
        "|\n    a/b",
    );
    c.assert_diag(1, "invalid exact tool path `a/b`: invalid tool id: a tool id has exactly 3 segments (namespace/plugin/name)", (9, 8), ">-  # folded\n    a/b");
    let c = check("name: !!str 5\ndescription: !!str\npromptforge: !!int '0'\n");
    c.assert_one("description must not be empty", (3, 14), "!!str");
    assert_eq!(c.fm.name.as_ref().map(|n| n.value.as_str()), Some("5"));
    assert_eq!(c.fm.version.as_ref().map(|v| v.value), Some(0));
}
