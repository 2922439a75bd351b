//! The editor features over stdio: hover, completion, signature help, definition,
//! references, rename, document symbols, folding, semantic tokens and code lens,
//! with exact ranges in UTF-16 columns (astral characters before the names).

use promptforge_tests::lsp_client::{
    offset_of, position, range, range_of, uri, LspClient, FETCH_DESCRIPTION,
};
use serde_json::{json, Value};

const DOC: &str = "---
name: demo
description: Demo
promptforge: 0
plugins:
  - promptforge/web
tools:
  fetch: promptforge/web/fetch
  search: promptforge/web/search
models:
  writer: {model: gpt, temperature: 0.5}
  critic: {}
---

# Demo 😀

```lua
models.default('writer')
tools.always('search')
```

## Fetch

Fetches the page.

```lua
tools.add('fetch')
local page = tools.call('fetch', { url = args })
log('😀') jump('## Write')
```

## Write

Writes the answer.

```lua
return models.use('writer'):infer(fetch.name)
```

### Helper

```lua
call('### Helper')
```
";

/// A configuration with web search, so both slots of the document bind; written
/// under a fixed name in the temporary folder and named by `PROMPTFORGE_CONFIG`.
/// Written once per process, through a rename, so no server reads it half-written.
fn config() -> String {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::temp_dir().join("promptforge-tests-lsp-features.toml");
        let fresh = path.with_extension(format!("{}.toml", std::process::id()));
        std::fs::write(
            &fresh,
            "[web]\nsearch_endpoint = \"https://search.invalid/api\"\n",
        )
        .expect("the configuration can be written");
        std::fs::rename(&fresh, &path).expect("the configuration can be renamed");
        path.display().to_string()
    })
    .clone()
}

fn open() -> (LspClient, String) {
    let config = config();
    let mut client = LspClient::start_with_env(&[("PROMPTFORGE_CONFIG", &config)]);
    client.initialize(json!({}));
    let doc = uri("features.md");
    client.open(&doc, 1, DOC);
    let diagnostics = client.diagnostics(&doc, 1);
    assert_eq!(
        diagnostics,
        Vec::<Value>::new(),
        "the feature document is clean"
    );
    (client, doc)
}

/// The position of byte `offset + delta` inside the `nth` occurrence of `needle`.
fn at(needle: &str, nth: usize, delta: usize) -> (u32, u32) {
    position(DOC, offset_of(DOC, needle, nth) + delta)
}

fn hover(client: &mut LspClient, doc: &str, (line, col): (u32, u32)) -> Value {
    client
        .at("textDocument/hover", doc, line, col)
        .expect("hover answers")
}

#[test]
fn hover_shows_aliases_labels_sections_and_the_lua_api() {
    let (mut client, doc) = open();
    let alias = hover(&mut client, &doc, at("'fetch', {", 0, 2));
    assert_eq!(alias["contents"]["kind"], "markdown", "{alias}");
    insta::assert_snapshot!(
        "fetch_slot_hover",
        alias["contents"]["value"].as_str().unwrap_or_default()
    );
    assert_eq!(alias["range"], range_of(DOC, "fetch", 3));
    let label = hover(&mut client, &doc, at("writer')", 1, 1));
    assert_eq!(
        label["contents"]["value"],
        "**model label** `writer`\n\n- model: `gpt`\n- temperature: 0.5"
    );
    let target = hover(&mut client, &doc, at("## Write'", 0, 4));
    assert_eq!(
        target["contents"]["value"],
        "**## Write**\n\nWrites the answer."
    );
    // The target's range counts the astral character before it as two UTF-16 units.
    let (line, col) = at("## Write'", 0, 0);
    assert_eq!(target["range"], range(line, col, line, col + 8));
    assert_eq!(col, 16);
    let api = hover(&mut client, &doc, at("tools.call", 0, 7));
    assert_eq!(api["range"], range_of(DOC, "tools.call", 0));
    let text = api["contents"]["value"].as_str().unwrap_or("");
    assert!(
        text.starts_with("```lua\ntools.call(alias, args)\n```\n\nCalls a bound tool"),
        "{text}"
    );
    let plugin = hover(&mut client, &doc, at("promptforge/web\n", 0, 3));
    let text = plugin["contents"]["value"].as_str().unwrap_or("");
    assert!(
        text.starts_with(&format!("**Plugin** `promptforge/web` (required)\n\nbacks the tool slots `fetch`, `search`\n\ntools:\n- `promptforge/web/fetch` - {FETCH_DESCRIPTION}\n- `promptforge/web/search` - ")),
        "{text}"
    );
    let key = hover(&mut client, &doc, at("models:", 0, 2));
    assert_eq!(key["contents"]["value"], "**`models`**\n\nModel labels: `label: { model, temperature, max_tokens }`. Each label becomes a Lua global; select one with `models.use` or `models.default`.");
    // Prose has no hover.
    assert_eq!(hover(&mut client, &doc, at("Fetches", 0, 2)), Value::Null);
}

fn labels(items: &Value) -> Vec<String> {
    items
        .as_array()
        .expect("a completion list")
        .iter()
        .map(|i| i["label"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn completion_knows_the_context() {
    let (mut client, doc) = open();
    let (line, col) = at("fetch', {", 0, 0);
    let aliases = client
        .at("textDocument/completion", &doc, line, col)
        .expect("completion");
    assert_eq!(labels(&aliases), ["fetch", "search"]);
    assert_eq!(aliases[0]["textEdit"]["range"], range(line, col, line, col));
    assert_eq!(aliases[0]["detail"], "promptforge/web/fetch");
    let (line, col) = at("writer')", 1, 2);
    let models = client
        .at("textDocument/completion", &doc, line, col)
        .expect("completion");
    assert_eq!(labels(&models), ["writer", "critic"]);
    assert_eq!(
        models[0]["textEdit"]["range"],
        range(line, col - 2, line, col)
    );
    // From `## Fetch`: its siblings; from `### Helper`: its siblings (itself).
    let (line, col) = at("## Write'", 0, 3);
    let targets = client
        .at("textDocument/completion", &doc, line, col)
        .expect("completion");
    assert_eq!(labels(&targets), ["## Fetch", "## Write"]);
    assert_eq!(
        targets[1]["textEdit"],
        json!({ "range": range(line, col - 3, line, col), "newText": "## Write" })
    );
    let (line, col) = at("### Helper'", 0, 0);
    assert_eq!(
        labels(
            &client
                .at("textDocument/completion", &doc, line, col)
                .expect("completion")
        ),
        ["### Helper"]
    );
    // After `tools.`: the members with their signatures.
    let (line, col) = at("tools.add(", 0, 6);
    let members = client
        .at("textDocument/completion", &doc, line, col)
        .expect("completion");
    assert_eq!(
        labels(&members),
        ["call", "add", "always", "add_local", "allow_tasks", "calls"]
    );
    assert_eq!(members[0]["detail"], "tools.call(alias, args)");
    // Prose gets nothing.
    let (line, col) = at("Fetches", 0, 3);
    assert_eq!(
        client.at("textDocument/completion", &doc, line, col),
        Ok(json!([]))
    );
}

#[test]
fn completion_offers_the_missing_top_level_keys() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("keys.md");
    let text = "---\nname: k\nma\npromptforge: 0\n---\n\n# K\n";
    client.open(&doc, 1, text);
    client.diagnostics(&doc, 1);
    let items = client
        .at("textDocument/completion", &doc, 2, 2)
        .expect("completion");
    assert_eq!(
        labels(&items),
        [
            "description",
            "plugins",
            "tools",
            "models",
            "max_tool_iterations"
        ]
    );
    assert_eq!(
        items[4]["textEdit"],
        json!({ "range": range(2, 0, 2, 2), "newText": "max_tool_iterations: " })
    );
}

#[test]
fn signature_help_follows_the_argument() {
    let (mut client, doc) = open();
    let (line, col) = at("{ url", 0, 2);
    let help = client
        .at("textDocument/signatureHelp", &doc, line, col)
        .expect("signature help");
    assert_eq!(help["signatures"][0]["label"], "tools.call(alias, args)");
    assert_eq!(help["activeParameter"], 1);
    assert_eq!(
        help["signatures"][0]["parameters"],
        json!([{ "label": [11, 16] }, { "label": [18, 22] }])
    );
    let (line, col) = at("'fetch', {", 0, 1);
    let help = client
        .at("textDocument/signatureHelp", &doc, line, col)
        .expect("signature help");
    assert_eq!(help["activeParameter"], 0);
    let (line, col) = at("Fetches", 0, 1);
    assert_eq!(
        client.at("textDocument/signatureHelp", &doc, line, col),
        Ok(Value::Null)
    );
}

#[test]
fn definition_and_references_link_names_to_their_declarations() {
    let (mut client, doc) = open();
    let (line, col) = at("'fetch')", 0, 2);
    let definition = client
        .at("textDocument/definition", &doc, line, col)
        .expect("definition");
    assert_eq!(
        definition,
        json!({ "uri": doc, "range": range_of(DOC, "fetch", 0) })
    );
    let (line, col) = at("## Write'", 0, 5);
    let definition = client
        .at("textDocument/definition", &doc, line, col)
        .expect("definition");
    assert_eq!(
        definition,
        json!({ "uri": doc, "range": range_of(DOC, "Write", 1) })
    );
    // The alias global `fetch.name` is a use too.
    let references = client
        .request(
            "textDocument/references",
            json!({ "textDocument": { "uri": doc }, "position": { "line": 7, "character": 3 }, "context": { "includeDeclaration": true } }),
        )
        .expect("references");
    let ranges: Vec<Value> = references
        .as_array()
        .expect("a list")
        .iter()
        .map(|l| l["range"].clone())
        .collect();
    let expected: Vec<Value> = [0, 2, 3, 4]
        .iter()
        .map(|&n| range_of(DOC, "fetch", n))
        .collect();
    assert_eq!(ranges, expected);
    assert_eq!(
        DOC.match_indices("fetch")
            .nth(4)
            .map(|(at, _)| &DOC[at..at + 10]),
        Some("fetch.name")
    );
}

#[test]
fn rename_rewrites_every_use() {
    let (mut client, doc) = open();
    let (line, col) = at("writer", 0, 1);
    let prepared = client
        .at("textDocument/prepareRename", &doc, line, col)
        .expect("prepare");
    assert_eq!(
        prepared,
        json!({ "range": range_of(DOC, "writer", 0), "placeholder": "writer" })
    );
    let edit = client
        .request(
            "textDocument/rename",
            json!({ "textDocument": { "uri": doc }, "position": { "line": line, "character": col }, "newName": "author" }),
        )
        .expect("rename");
    let edits = &edit["changes"][doc.as_str()];
    let expected: Vec<Value> = (0..3)
        .map(|n| json!({ "range": range_of(DOC, "writer", n), "newText": "author" }))
        .collect();
    assert_eq!(edits, &json!(expected));
    let refused = client
        .request(
            "textDocument/rename",
            json!({ "textDocument": { "uri": doc }, "position": { "line": line, "character": col }, "newName": "store" }),
        )
        .expect_err("a reserved name");
    assert_eq!(refused["code"], -32602);
    assert_eq!(
        refused["message"],
        "invalid frontmatter: 'store' is a reserved name and cannot be an alias or a model label"
    );
    // A heading and its target.
    let (line, col) = at("## Write\n", 0, 4);
    let edit = client
        .request(
            "textDocument/rename",
            json!({ "textDocument": { "uri": doc }, "position": { "line": line, "character": col }, "newName": "Compose" }),
        )
        .expect("rename");
    let expected = json!([
        { "range": range_of(DOC, "Write", 1), "newText": "Compose" },
        { "range": range_of(DOC, "Write", 0), "newText": "Compose" },
    ]);
    let mut got = edit["changes"][doc.as_str()]
        .as_array()
        .cloned()
        .unwrap_or_default();
    got.sort_by_key(|e| e["range"]["start"]["line"].as_u64());
    let mut want = expected.as_array().cloned().unwrap_or_default();
    want.sort_by_key(|e| e["range"]["start"]["line"].as_u64());
    assert_eq!(got, want);
}

#[test]
fn outline_folding_tokens_and_the_run_lens() {
    let (mut client, doc) = open();
    let symbols = client
        .request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": doc } }),
        )
        .expect("symbols");
    assert_eq!(symbols[0]["name"], "frontmatter");
    let keys: Vec<&str> = symbols[0]["children"]
        .as_array()
        .expect("keys")
        .iter()
        .filter_map(|k| k["name"].as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "promptforge",
            "plugins",
            "tools",
            "models"
        ]
    );
    assert_eq!(symbols[1]["name"], "Demo 😀");
    assert_eq!(symbols[1]["selectionRange"], range(14, 2, 14, 9));
    let sections: Vec<&str> = symbols[1]["children"]
        .as_array()
        .expect("sections")
        .iter()
        .filter_map(|k| k["name"].as_str())
        .collect();
    assert_eq!(sections, ["Fetch", "Write"]);
    assert_eq!(symbols[1]["children"][1]["children"][0]["name"], "Helper");

    let folds = client
        .request(
            "textDocument/foldingRange",
            json!({ "textDocument": { "uri": doc } }),
        )
        .expect("folds");
    let spans: Vec<(u64, u64)> = folds
        .as_array()
        .expect("folds")
        .iter()
        .map(|f| {
            (
                f["startLine"].as_u64().unwrap_or(0),
                f["endLine"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        spans,
        [
            (0, 12),
            (16, 19),
            (21, 29),
            (25, 29),
            (31, 43),
            (35, 37),
            (39, 43),
            (41, 43)
        ]
    );

    let tokens = client
        .request(
            "textDocument/semanticTokens/full",
            json!({ "textDocument": { "uri": doc } }),
        )
        .expect("tokens");
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let mut decoded = Vec::new();
    let (mut line, mut col) = (0, 0);
    for chunk in data.chunks(5) {
        line += chunk[0];
        col = if chunk[0] == 0 {
            col + chunk[1]
        } else {
            chunk[1]
        };
        decoded.push((line, col, chunk[2], chunk[3], chunk[4]));
    }
    assert_eq!(
        decoded,
        [
            (5, 4, 15, 0, 0),
            (7, 2, 5, 2, 1),
            (7, 9, 21, 1, 0),
            (8, 2, 6, 2, 1),
            (8, 10, 22, 1, 0),
            (10, 2, 6, 3, 1),
            (11, 2, 6, 3, 1),
            (17, 16, 6, 3, 0),
            (18, 14, 6, 2, 0),
            (26, 11, 5, 2, 0),
            (27, 25, 5, 2, 0),
            (28, 16, 8, 4, 0),
            (36, 19, 6, 3, 0),
            (36, 34, 5, 2, 0),
            (42, 6, 10, 4, 0),
        ]
    );

    let lenses = client
        .request(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": doc } }),
        )
        .expect("lenses");
    assert_eq!(
        lenses,
        json!([
            { "range": range(14, 0, 14, 9), "command": { "title": "Run", "command": "promptforge.run", "arguments": [{ "uri": doc }] } },
            { "range": range(14, 0, 14, 9), "command": { "title": "Debug", "command": "promptforge.debug", "arguments": [{ "uri": doc }] } },
            { "range": range(14, 0, 14, 9), "command": { "title": "Run with arguments…", "command": "promptforge.runWithArguments", "arguments": [{ "uri": doc }] } },
        ])
    );
}
