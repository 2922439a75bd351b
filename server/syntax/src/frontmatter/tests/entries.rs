//! `plugins:` (Tools chapter, "Declaring Plugins", "Entry errors", "Name errors", §1.3).

use super::*;

const HEAD: &str = "name: p\ndescription: d\npromptforge: 0\n";

fn plugins(entries: &str) -> Checked {
    check(&format!("{HEAD}plugins:\n{entries}"))
}

#[test]
fn both_forms_mix_in_one_list_in_declaration_order() {
    let c = plugins("  - promptforge/web\n  - ref: io.github.corp/mcp\n    optional: true\n    config: {servers: [a, 1], on: true}\n  - {ref: acme/web-search}\n");
    c.assert_clean();
    let ids: Vec<&str> = c.fm.plugins.iter().map(|p| p.id.value.as_str()).collect();
    assert_eq!(
        ids,
        ["promptforge/web", "io.github.corp/mcp", "acme/web-search"]
    );
    let [web, mcp, search] = &c.fm.plugins[..] else {
        panic!("three plugins")
    };
    assert!(!web.optional && web.config.is_none() && web.valid);
    assert_eq!(&c.text[web.entry_range.clone()], "promptforge/web");
    assert!(mcp.optional);
    assert_eq!(
        mcp.optional_range.as_ref().map(|r| &c.text[r.clone()]),
        Some("true")
    );
    assert_eq!(
        &c.text[mcp.entry_range.clone()],
        "ref: io.github.corp/mcp\n    optional: true\n    config: {servers: [a, 1], on: true}"
    );
    let config: serde_yaml::Value =
        serde_yaml::from_str("{servers: [a, 1], on: true}").expect("yaml");
    assert_eq!(mcp.config, Some(config));
    assert_eq!(&c.text[search.id.range.clone()], "acme/web-search");
}

#[test]
fn a_map_without_ref_is_missing_field_ref_at_the_entry() {
    let c = plugins("  - optional: true\n");
    c.assert_one("missing field `ref`", (6, 5), "optional: true");
    assert!(c.fm.plugins.is_empty());
}

#[test]
fn a_key_written_twice_is_a_duplicate_field_at_the_entry() {
    let c = plugins("  - ref: a/b\n    optional: true\n    optional: false\n");
    c.assert_one(
        "duplicate field `optional`",
        (6, 5),
        "ref: a/b\n    optional: true\n    optional",
    );
    assert!(c.fm.plugins.first().is_some_and(|p| p.optional));
}

#[test]
fn any_other_key_is_an_unknown_field_at_the_entry() {
    let c = plugins("  - ref: a/b\n    version: 2\n");
    c.assert_one(
        "unknown field `version`, expected one of `ref`, `optional`, `config`",
        (6, 5),
        "ref: a/b\n    version",
    );
    let c = plugins("  - {ref: a/b, 7: x}\n");
    c.assert_one(
        "unknown field `7`, expected one of `ref`, `optional`, `config`",
        (6, 5),
        "{ref: a/b, 7",
    );
}

#[test]
fn an_entry_neither_string_nor_map_is_a_type_error_at_the_entry() {
    let expected = "expected a Plugin id string or a map with `ref`, `optional`, and `config`";
    let c = plugins("  - 5\n  - [a/b]\n  - true\n  -\n");
    assert_eq!(c.diags.len(), 4);
    c.assert_diag(
        0,
        &format!("invalid type: integer `5`, {expected}"),
        (6, 5),
        "5",
    );
    c.assert_diag(
        1,
        &format!("invalid type: sequence, {expected}"),
        (7, 5),
        "[a/b]",
    );
    c.assert_diag(
        2,
        &format!("invalid type: boolean `true`, {expected}"),
        (8, 5),
        "true",
    );
    c.assert_diag(
        3,
        &format!("invalid type: unit value, {expected}"),
        (9, 4),
        "",
    );
}

#[test]
fn ref_and_optional_value_types() {
    let c = plugins("  - ref: 5\n  - ref: a/b\n    optional: yes\n");
    assert_eq!(c.diags.len(), 2);
    c.assert_diag(
        0,
        "invalid type: integer `5`, expected a Plugin id string",
        (6, 10),
        "5",
    );
    c.assert_diag(
        1,
        "invalid type: string \"yes\", expected a boolean",
        (8, 15),
        "yes",
    );
    assert_eq!(c.fm.plugins.len(), 1);
}

#[test]
fn a_plugin_id_with_three_valid_segments_gets_the_first_message() {
    let c = plugins("  - promptforge/web/fetch\n");
    c.assert_one(
        "invalid Plugin id `promptforge/web/fetch`: a Plugin id has exactly 2 segments (namespace/plugin)",
        (6, 5),
        "promptforge/web/fetch",
    );
    let p = &c.fm.plugins[0];
    assert!(!p.valid);
}

#[test]
fn a_count_error_covers_the_whole_scalar() {
    let c = plugins("  - promptforge\n  - ref: a/b/c/d\n");
    c.assert_diag(0, "invalid Plugin id `promptforge`: invalid global name: expected 2 or 3 segments separated by /, found 1", (6, 5), "promptforge");
    c.assert_diag(1, "invalid Plugin id `a/b/c/d`: invalid global name: expected 2 or 3 segments separated by /, found 4", (7, 10), "a/b/c/d");
}

#[test]
fn a_segment_error_starts_at_the_scalar_and_runs_to_the_end_of_the_segment() {
    let c = plugins("  - promptforge/Web\n  - \"acme/w b\"\n  - 'x//y'\n");
    c.assert_diag(0, "invalid Plugin id `promptforge/Web`: invalid global name: segment 2 contains `W`; allowed are a-z, 0-9, -, _ and .", (6, 5), "Web");
    c.assert_diag(1, "invalid Plugin id `acme/w b`: invalid global name: segment 2 contains ` `; allowed are a-z, 0-9, -, _ and .", (7, 5), "w b");
    c.assert_diag(
        2,
        "invalid Plugin id `x//y`: invalid global name: segment 2 is empty",
        (8, 5),
        "",
    );
    let c = plugins("  - 'Acme/web'\n  - /web\n");
    c.assert_diag(0, "invalid Plugin id `Acme/web`: invalid global name: segment 1 contains `A`; allowed are a-z, 0-9, -, _ and .", (6, 5), "Acme");
    c.assert_diag(
        1,
        "invalid Plugin id `/web`: invalid global name: segment 1 is empty",
        (7, 5),
        "",
    );
}

#[test]
fn an_escaped_id_is_quoted_as_its_value_and_covers_the_scalar() {
    let c = plugins("  - \"acme/\\tweb\"\n");
    c.assert_one("invalid Plugin id `acme/\tweb`: invalid global name: segment 2 contains a control character", (6, 5), "\"acme/\\tweb\"");
}

#[test]
fn a_plugin_declared_twice_is_unlocated_at_the_second_with_the_first_related() {
    let c = plugins("  - promptforge/web\n  - ref: promptforge/web\n    optional: true\n  - {ref: promptforge/web, config: 1}\n");
    assert_eq!(c.diags.len(), 2);
    let first = c.find("promptforge/web", 0);
    for (i, line, col) in [(0, 7, 10), (1, 9, 11)] {
        let d = c.assert_diag(
            i,
            "invalid frontmatter: Plugin promptforge/web is declared more than once under plugins",
            (line, col),
            "promptforge/web",
        );
        assert!(!d.located);
        assert_eq!(d.related.len(), 1);
        assert_eq!(d.related[0].range, first);
        assert_eq!(d.related[0].message, "first declared here");
    }
    assert_eq!(c.fm.plugins.len(), 1);
    assert!(!c.fm.plugins[0].optional);
}

#[test]
fn only_valid_ids_take_part_in_duplicate_detection() {
    let c = plugins("  - Acme/web\n  - Acme/web\n");
    assert_eq!(c.diags.len(), 2);
    assert!(c
        .messages()
        .iter()
        .all(|m| m.starts_with("invalid Plugin id `Acme/web`")));
    assert!(c.fm.plugins.iter().all(|p| !p.valid));
}

#[test]
fn plugins_in_flow_style() {
    let c = plugins("");
    assert_eq!(
        c.messages(),
        ["invalid type: unit value, expected a sequence"]
    );
    let c = check(&format!("{HEAD}plugins: [promptforge/web, 'acme/mcp']\n"));
    c.assert_clean();
    assert_eq!(c.fm.plugins.len(), 2);
    assert_eq!(&c.text[c.fm.plugins[1].id.range.clone()], "'acme/mcp'");
}
