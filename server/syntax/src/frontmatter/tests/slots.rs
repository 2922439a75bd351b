//! `tools:` and `models:` (Tools chapter, "Tool slots and Tool objects"; §1.1 and §4).

use super::*;

const HEAD: &str = "name: p\ndescription: d\npromptforge: 0\n";

#[test]
fn an_alias_that_breaks_the_grammar_is_reported_at_the_key() {
    let c = check(&format!(
        "{HEAD}tools:\n  2fetch: a/b/c\n  \"my tool\": a/b/c\n  1: a/b/c\n"
    ));
    assert_eq!(c.diags.len(), 3);
    c.assert_diag(
        0,
        "invalid alias \"2fetch\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        (6, 3),
        "2fetch",
    );
    c.assert_diag(
        1,
        "invalid alias \"my tool\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        (7, 3),
        "\"my tool\"",
    );
    c.assert_diag(
        2,
        "invalid alias \"1\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        (8, 3),
        "1",
    );
    assert!(c.fm.tools.iter().all(|s| !s.valid));
}

#[test]
fn a_reserved_alias_or_label_is_reported_at_the_key() {
    let c = check(&format!(
        "{HEAD}tools:\n  store: a/b/c\nmodels:\n  math: {{}}\n  _G: {{}}\n"
    ));
    assert_eq!(c.diags.len(), 3);
    c.assert_diag(
        0,
        "invalid frontmatter: 'store' is a reserved name and cannot be an alias or a model label",
        (6, 3),
        "store",
    );
    c.assert_diag(
        1,
        "invalid frontmatter: 'math' is a reserved name and cannot be an alias or a model label",
        (8, 3),
        "math",
    );
    // The grammar comes first: `_G` fails it before the reserved check.
    c.assert_diag(
        2,
        "invalid alias \"_G\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        (9, 3),
        "_G",
    );
    assert!(c.fm.models.is_empty());
}

#[test]
fn tool_path_errors_at_the_value() {
    let c = check(&format!(
        "{HEAD}tools:\n  a: promptforge/web\n  b: promptforge/Web/fetch\n  c: 5\n  d:\n  e: [x]\n"
    ));
    assert_eq!(c.diags.len(), 5);
    c.assert_diag(0, "invalid exact tool path `promptforge/web`: invalid tool id: a tool id has exactly 3 segments (namespace/plugin/name)", (6, 6), "promptforge/web");
    c.assert_diag(1, "invalid exact tool path `promptforge/Web/fetch`: invalid tool id: segment 2 contains `W`; allowed are a-z, 0-9, -, _ and .", (7, 6), "Web");
    c.assert_diag(
        2,
        "invalid type: integer `5`, expected an exact tool path string",
        (8, 6),
        "5",
    );
    c.assert_diag(
        3,
        "invalid type: unit value, expected an exact tool path string",
        (9, 5),
        "",
    );
    c.assert_diag(
        4,
        "invalid type: sequence, expected an exact tool path string",
        (10, 6),
        "[x]",
    );
    assert_eq!(c.fm.tools.len(), 5);
    assert!(c.fm.tools.iter().all(|s| !s.valid));
    assert!(c.fm.tools[2].path.is_none());
}

#[test]
fn a_tool_path_with_four_segments_is_a_count_error() {
    let c = check(&format!("{HEAD}tools:\n  a: 'a/b/c/d'\n"));
    c.assert_one("invalid exact tool path `a/b/c/d`: invalid tool id: expected 2 or 3 segments separated by /, found 4", (6, 6), "'a/b/c/d'");
}

#[test]
fn a_duplicate_alias_is_reported_at_the_second_and_the_first_is_kept() {
    let c = check(&format!("{HEAD}tools:\n  fetch: a/b/c\n  fetch: a/b/d\n"));
    c.assert_one("duplicate field `fetch`", (7, 3), "fetch");
    assert_eq!(c.fm.tools.len(), 1);
    assert_eq!(
        c.fm.tools[0].path.as_ref().map(|p| p.value.as_str()),
        Some("a/b/c")
    );
}

#[test]
fn a_name_both_alias_and_label_is_reported_at_the_later_key() {
    let c = check(&format!(
        "{HEAD}tools:\n  writer: a/b/c\nmodels:\n  writer: {{}}\n"
    ));
    let d = c.assert_one(
        "invalid frontmatter: 'writer' is both a tool alias and a model label",
        (8, 3),
        "writer",
    );
    assert_eq!(d.related[0].range, c.find("writer", 0));
    assert!(c.fm.models.is_empty() && c.fm.tools[0].valid);
    let c = check(&format!(
        "{HEAD}models:\n  writer: {{}}\ntools:\n  writer: a/b/c\n"
    ));
    c.assert_one(
        "invalid frontmatter: 'writer' is both a tool alias and a model label",
        (8, 3),
        "writer",
    );
    assert!(c.fm.model("writer").is_some() && !c.fm.tools[0].valid);
}

#[test]
fn a_slot_of_an_optional_plugin_names_the_first_alias_bytewise_once() {
    let yaml = format!(
        "{HEAD}plugins:\n  - promptforge/web\n  - ref: acme/mcp\n    optional: true\ntools:\n  zeta: acme/mcp/run\n  alpha: acme/mcp/list\n  Zed: acme/mcp/list\n  fetch: promptforge/web/fetch\n"
    );
    let c = check(&yaml);
    let d = c.assert_one(
        "invalid frontmatter: tool alias 'Zed' names acme/mcp/list, whose Plugin acme/mcp is declared optional; a tool slot requires its Plugin",
        (12, 3),
        "Zed",
    );
    assert!(!d.located);
    assert_eq!(d.related[0].range, c.find("acme/mcp", 0));
    assert_eq!(d.related[0].message, "declared optional here");
}

#[test]
fn a_slot_of_an_undeclared_or_required_plugin_is_no_parse_error() {
    check(&format!("{HEAD}tools:\n  fetch: promptforge/web/fetch\n")).assert_clean();
    check(&format!("{HEAD}plugins:\n  - ref: promptforge/web\n    optional: false\ntools:\n  fetch: promptforge/web/fetch\n")).assert_clean();
}

#[test]
fn two_aliases_may_name_one_path() {
    let c = check(&format!(
        "{HEAD}tools:\n  fetch: promptforge/web/fetch\n  getter: promptforge/web/fetch\n"
    ));
    c.assert_clean();
    assert_eq!(c.fm.tools.len(), 2);
}

#[test]
fn model_options_are_checked_and_kept() {
    let c = check(&format!("{HEAD}models:\n  writer:\n    model: gpt\n    temperature: 0.5\n    max_tokens: 100\n  judge: {{temperature: 2}}\n  plain:\n"));
    c.assert_clean();
    let writer = c.fm.model("writer").expect("writer");
    assert_eq!(writer.model.as_ref().map(|m| m.value.as_str()), Some("gpt"));
    assert_eq!(writer.temperature.as_ref().map(|t| t.value), Some(0.5));
    assert_eq!(writer.max_tokens.as_ref().map(|t| t.value), Some(100));
    assert_eq!(
        &c.text[writer.options_range.clone()],
        "model: gpt\n    temperature: 0.5\n    max_tokens: 100"
    );
    assert_eq!(
        c.fm.model("judge")
            .and_then(|m| m.temperature.as_ref())
            .map(|t| t.value),
        Some(2.0)
    );
    let labels: Vec<&str> = c.fm.models.iter().map(|m| m.label.value.as_str()).collect();
    assert_eq!(labels, ["writer", "judge", "plain"]);
}

#[test]
fn model_option_errors() {
    let c = check(&format!(
        "{HEAD}models:\n  a:\n    temperature: 2.5\n    max_tokens: 0\n    model: 5\n    top_p: 1\n    temperature: 1\n  b: {{temperature: hot, max_tokens: 1.5}}\n  c: [x]\n  d: {{temperature: -1e0}}\n"
    ));
    let unknown = "unknown field `top_p`, expected one of `model`, `temperature`, `max_tokens`";
    assert_eq!(c.diags.len(), 9);
    c.assert_diag(
        0,
        "temperature must be between 0 and 2, got 2.5",
        (7, 18),
        "2.5",
    );
    c.assert_diag(1, "max_tokens must be at least 1, got 0", (8, 17), "0");
    c.assert_diag(
        2,
        "invalid type: integer `5`, expected a string",
        (9, 12),
        "5",
    );
    c.assert_diag(3, unknown, (10, 5), "top_p");
    c.assert_diag(4, "duplicate field `temperature`", (11, 5), "temperature");
    c.assert_diag(
        5,
        "invalid type: string \"hot\", expected a number",
        (12, 20),
        "hot",
    );
    c.assert_diag(
        6,
        "invalid type: floating point `1.5`, expected an integer",
        (12, 37),
        "1.5",
    );
    c.assert_diag(7, "invalid type: sequence, expected a map", (13, 6), "[x]");
    c.assert_diag(
        8,
        "temperature must be between 0 and 2, got -1e0",
        (14, 20),
        "-1e0",
    );
    let a = c.fm.model("a").expect("a");
    assert!(a.temperature.is_none() && a.max_tokens.is_none() && a.model.is_none());
    assert_eq!(c.fm.models.len(), 4);
}

#[test]
fn labels_follow_the_alias_grammar_and_are_unique() {
    let c = check(&format!(
        "{HEAD}models:\n  9lives: {{}}\n  w: {{}}\n  w: {{}}\n"
    ));
    assert_eq!(
        c.messages(),
        [
            "invalid alias \"9lives\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
            "duplicate field `w`"
        ]
    );
    c.assert_diag(1, "duplicate field `w`", (8, 3), "w");
    assert_eq!(c.fm.models.len(), 1);
}

#[test]
fn models_in_flow_style() {
    let c = check(&format!(
        "{HEAD}models: {{ writer: {{}}, judge: {{ max_tokens: 5 }} }}\n"
    ));
    c.assert_clean();
    assert_eq!(c.fm.models.len(), 2);
    assert_eq!(&c.text[c.fm.models[0].options_range.clone()], "{}");
}
