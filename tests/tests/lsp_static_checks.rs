//! Static Lua checks over stdio: what the engine would refuse at run time, with
//! the engine's own messages, a stable code and the literal's exact range.

use promptforge_tests::lsp_client::{range, range_of, uri, LspClient};
use serde_json::{json, Value};

const DOC: &str = "---
name: checks
description: Static checks
promptforge: 0
plugins: [promptforge/web]
tools:
  fetch: promptforge/web/fetch
models:
  writer: {}
---

# Checks

```lua
models.default('editor')
tools.always('serch')
jump('### Child')
```

## First

```lua
tools.add({'fetch', 'nope'})
tools.call('missing', {})
tools.call('task', {})
tools.add_local('fetch', 'd', {}, function() return '' end)
tools.add_local('mine', 'd', {}, function() return '' end)
tools.call('mine', {})
tools.add_local('lookup', 'd', { query = 'text', limit = { 'integer', 'max' }, n = 5 }, function() end)
tools.add('bad alias')
log('😀') jump('## Nowhere')
call('### Child')
tools.bind('x', 'y')
models.need('writer')
tools.need('promptforge/web')
```

## Second

```lua
call('### Child', '')
fanout('## First', {1})
models.use('writer')
tools.call(fetch, {})
```

### Child
";

fn checks(diagnostics: &[Value]) -> Vec<(String, String, Value)> {
    diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d["severity"], 1);
            assert_eq!(d["source"], "promptforge");
            (
                d["code"].as_str().unwrap_or("").to_owned(),
                d["message"].as_str().unwrap_or("").to_owned(),
                d["range"].clone(),
            )
        })
        .collect()
}

fn expect(code: &str, message: &str, needle: &str, nth: usize) -> (String, String, Value) {
    (
        code.to_owned(),
        message.to_owned(),
        range_of(DOC, needle, nth),
    )
}

#[test]
fn every_check_reports_the_engine_message_at_the_literal() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("checks.md");
    client.open(&doc, 1, DOC);
    let diagnostics = client.diagnostics(&doc, 1);
    let older_bind = "tools.bind is the older API and does not exist: bind the tool under tools: in the frontmatter (alias: namespace/plugin/name), then offer it with tools.add or tools.always";
    let older_models = "models.need is the older API and does not exist: declare the label under models: in the frontmatter, then select it with models.use or models.default";
    let older_tools = "tools.need is the older API and does not exist: declare the Plugin under plugins: in the frontmatter";
    assert_eq!(
        checks(&diagnostics),
        [
            expect("UndeclaredModelLabel", "model label \"editor\" is not declared under models; declared: [writer]", "'editor'", 0),
            expect("UnboundToolSlot", "tools.always alias \"serch\" is not a bound tool slot", "'serch'", 0),
            expect("InvisibleTarget", "no section \"### Child\" is visible from \"# Checks\"; visible: [## First, ## Second]", "'### Child'", 0),
            expect("UnboundToolSlot", "tools.add alias \"nope\" is not a bound tool slot", "'nope'", 0),
            expect("UnboundTool", "tool \"missing\" is not bound in this run; bound aliases: [fetch]", "'missing'", 0),
            expect("UnboundTool", "tool \"task\" is not bound in this run; bound aliases: [fetch]", "'task'", 0),
            expect("LocalToolClash", "tools.add_local alias \"fetch\" duplicates a bound tool slot", "'fetch'", 1),
            expect("LocalToolParam", "tools.add_local param \"query\" has unsupported type \"text\": expected \"string\", \"integer\", \"number\", or \"boolean\"", "'text'", 0),
            expect("LocalToolParam", "tools.add_local param \"n\" must be a type string or a {type, description} array", "n = 5", 0),
            expect("InvalidAlias", "invalid alias \"bad alias\": expected [A-Za-z][A-Za-z0-9_-]{0,63}", "'bad alias'", 0),
            expect("InvisibleTarget", "no section \"## Nowhere\" is visible from \"## First\"; visible: [## First, ## Second]", "'## Nowhere'", 0),
            expect("InvisibleTarget", "no section \"### Child\" is visible from \"## First\"; visible: [## First, ## Second]", "'### Child'", 1),
            expect("OlderApi", older_bind, "tools.bind", 0),
            expect("OlderApi", older_models, "models.need", 0),
            expect("OlderApi", older_tools, "tools.need", 0),
        ]
    );
    // The clash points at the slot it clashes with.
    let clash = diagnostics
        .iter()
        .find(|d| d["code"] == "LocalToolClash")
        .expect("a clash");
    assert_eq!(
        clash["relatedInformation"],
        json!([{ "location": { "uri": doc, "range": range_of(DOC, "fetch", 0) }, "message": "the tool slot" }])
    );
    // The astral character before `jump` counts two UTF-16 units.
    let nowhere = diagnostics
        .iter()
        .find(|d| d["message"].as_str().is_some_and(|m| m.contains("Nowhere")))
        .expect("nowhere");
    assert_eq!(nowhere["range"], range(30, 15, 30, 27));
}

#[test]
fn checks_follow_edits() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("checks-edit.md");
    client.open(&doc, 1, DOC);
    assert_eq!(client.diagnostics(&doc, 1).len(), 15);
    // Declaring the label `editor` and the slot `nope` removes their problems.
    client.change(
        &doc,
        2,
        json!([
            { "range": range(8, 0, 8, 0), "text": "  editor: {}\n" },
            { "range": range(6, 0, 6, 0), "text": "  nope: promptforge/web/fetch\n" },
        ]),
    );
    let diagnostics = client.diagnostics(&doc, 2);
    let messages: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert_eq!(diagnostics.len(), 13, "{messages:#?}");
    assert!(messages
        .contains(&"tool \"missing\" is not bound in this run; bound aliases: [nope, fetch]"));
    assert!(!messages
        .iter()
        .any(|m| m.contains("editor") || m.contains("\"nope\"")));
}
