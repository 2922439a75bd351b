//! The language server's catalog features over stdio: hover, completion and
//! inlay hints from the Host's catalog, the static `tools.calls` check and the
//! Lua uses of slots left unbound, a changed `promptforge.toml`, and
//! `$/cancelRequest`.
//!
//! Each test works in a scratch folder with its own `promptforge.toml`, which the
//! server finds upward from the document's folder (`host.md` §1).

use std::time::{Duration, Instant};

use promptforge_tests::lsp_client::{
    file_uri, hover_text, prompt, range_of, start, with_code, workspace, LspClient,
    FETCH_DESCRIPTION,
};
use serde_json::{json, Value};

const WEB_SEARCH_CONFIG: &str = "[web]\nsearch_endpoint = \"https://search.invalid/api\"\n";

fn web_prompt() -> String {
    prompt(
        "plugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\n  find: promptforge/web/search\n",
        "\n## A\n\n```lua\ntools.add('fetch')\nlocal n = tools.call('find', { query = 'x' })\nlocal c = tools.calls.fetch + tools.calls['find'] + tools.calls.nope\n```\n",
    )
}

#[test]
fn hover_describes_the_tool_of_an_alias_and_the_tools_of_a_plugin() {
    let scratch = workspace("hover", WEB_SEARCH_CONFIG);
    let doc = file_uri(&scratch, "p.md");
    let text = web_prompt();
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    assert!(
        with_code(&diagnostics, "RequirementsUnmet").is_empty(),
        "{diagnostics:#?}"
    );
    let expected = hover_text(&mut client, &doc, &text, "fetch:");
    insta::assert_snapshot!("fetch_slot_hover", expected);
    // The key, the string naming it and the tool path give the same text.
    assert_eq!(hover_text(&mut client, &doc, &text, "fetch')"), expected);
    assert_eq!(
        hover_text(&mut client, &doc, &text, "promptforge/web/fetch"),
        expected
    );
    let plugin = hover_text(&mut client, &doc, &text, "promptforge/web]");
    let first = FETCH_DESCRIPTION.lines().next().unwrap_or("");
    assert!(
        plugin.starts_with(&format!(
            "**Plugin** `promptforge/web` (required)\n\nbacks the tool slots `fetch`, `find`\n\ntools:\n- `promptforge/web/fetch` - {first}\n- `promptforge/web/search` - "
        )),
        "{plugin}"
    );
    let search = hover_text(&mut client, &doc, &text, "find:");
    assert!(search.contains("- query: string (required)"), "{search}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn completion_offers_registered_plugins_and_declared_tool_paths() {
    let scratch = workspace(
        "completion",
        &format!("{WEB_SEARCH_CONFIG}\n[plugin.\"acme/other\"]\ncommand = \"/nonexistent/x\"\n"),
    );
    let doc = file_uri(&scratch, "p.md");
    let text = prompt(
        "plugins:\n  - promptforge/web\n  - acm\ntools:\n  f: promptforge/web/f\n",
        "",
    );
    let mut client = start();
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let end_of = |needle: &str| range_of(&text, needle, 0)["end"].clone();
    let at = end_of("- acm");
    let items = client
        .at(
            "textDocument/completion",
            &doc,
            at["line"].as_u64().unwrap_or(0) as u32,
            at["character"].as_u64().unwrap_or(0) as u32,
        )
        .expect("completion answers");
    let labels: Vec<&str> = items
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["acme/other"], "declared ids are left out");
    assert_eq!(items[0]["textEdit"]["range"], range_of(&text, "acm", 0));
    let at = end_of("f: promptforge/web/f");
    let items = client
        .at(
            "textDocument/completion",
            &doc,
            at["line"].as_u64().unwrap_or(0) as u32,
            at["character"].as_u64().unwrap_or(0) as u32,
        )
        .expect("completion answers");
    let labels: Vec<&str> = items
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["promptforge/web/fetch", "promptforge/web/search"]);
    assert_eq!(
        items[0]["textEdit"]["range"],
        range_of(&text, "promptforge/web/f", 0)
    );
    assert_eq!(
        items[0]["detail"],
        FETCH_DESCRIPTION.lines().next().unwrap_or("")
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn inlay_hints_show_the_tool_path_after_an_alias_string() {
    let scratch = workspace("inlay", WEB_SEARCH_CONFIG);
    let doc = file_uri(&scratch, "p.md");
    let text = web_prompt();
    let mut client = start();
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let hints = client
        .request(
            "textDocument/inlayHint",
            json!({ "textDocument": { "uri": doc }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 100, "character": 0 } } }),
        )
        .expect("inlayHint answers");
    let hints = hints.as_array().cloned().unwrap_or_default();
    assert_eq!(hints.len(), 2, "{hints:#?}");
    assert_eq!(hints[0]["label"], "promptforge/web/fetch");
    assert_eq!(hints[0]["position"], range_of(&text, "'fetch'", 0)["end"]);
    assert_eq!(hints[0]["paddingLeft"], true);
    assert_eq!(hints[0]["tooltip"]["value"], FETCH_DESCRIPTION);
    assert_eq!(hints[1]["label"], "promptforge/web/search");
    assert_eq!(hints[1]["position"], range_of(&text, "'find'", 0)["end"]);
    assert_eq!(client.shutdown(), Some(0));
}

/// Issue 27: `≈ N tokens` after each text that goes to a model, counted with
/// the one label's model's encoding (`gpt-4` uses cl100k_base), only in range.
#[test]
fn inlay_hints_count_the_tokens_of_what_goes_to_a_model() {
    let config = "[model.old]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"gpt-4\"\n";
    let scratch = workspace("tokens", config);
    let doc = file_uri(&scratch, "p.md");
    let text = prompt(
        "models:\n  w: { model: old }\n",
        "\n## A\n\n```lua\nlocal m = messages.new():system('hello world'):user([[one two three]])\nlog('not to a model')\nreturn models.infer('hello')\n```\n",
    );
    let mut client = start();
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let all =
        json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 100, "character": 0 } });
    let hints = client
        .request(
            "textDocument/inlayHint",
            json!({ "textDocument": { "uri": doc }, "range": all }),
        )
        .expect("inlayHint answers");
    let hints = hints.as_array().cloned().unwrap_or_default();
    let labels: Vec<&str> = hints.iter().filter_map(|h| h["label"].as_str()).collect();
    assert_eq!(
        labels,
        ["≈ 2 tokens", "≈ 3 tokens", "≈ 1 token"],
        "{hints:#?}"
    );
    assert_eq!(
        hints[0]["position"],
        range_of(&text, "'hello world'", 0)["end"]
    );
    assert_eq!(
        hints[1]["position"],
        range_of(&text, "[[one two three]]", 0)["end"]
    );
    assert_eq!(
        hints[0]["tooltip"],
        "Estimated with cl100k_base; the model's own count may differ."
    );
    // Only the texts in the range asked for.
    let line = range_of(&text, "return models.infer", 0)["start"]["line"].clone();
    let one_line = json!({ "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 80 } });
    let hints = client
        .request(
            "textDocument/inlayHint",
            json!({ "textDocument": { "uri": doc }, "range": one_line }),
        )
        .expect("inlayHint answers");
    assert_eq!(hints.as_array().map(Vec::len), Some(1), "{hints:#?}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn tools_calls_of_an_alias_neither_bound_nor_local_is_reported() {
    let scratch = workspace("calls", WEB_SEARCH_CONFIG);
    let doc = file_uri(&scratch, "p.md");
    let text = prompt(
        "plugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\n",
        "\n## A\n\n```lua\ntools.add_local('loc', 'd', {}, function() return 1 end)\nlocal a = tools.calls.fetch + tools.calls['loc'] + tools.calls.nope\n```\n\n## B\n\n```lua\nlocal b = tools.calls['loc']\n```\n",
    );
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let found = with_code(&diagnostics, "UnknownCallsKey");
    assert_eq!(found.len(), 2, "{diagnostics:#?}");
    assert_eq!(
        found[0]["message"],
        "tools.calls: \"nope\" is neither a bound tool slot nor a local tool of this section"
    );
    assert_eq!(found[0]["range"], range_of(&text, "nope", 0));
    assert_eq!(
        found[1]["message"],
        "tools.calls: \"loc\" is neither a bound tool slot nor a local tool of this section"
    );
    let quoted = range_of(&text, "'loc']", 1);
    let start = &quoted["start"];
    let line = start["line"].clone();
    let column = start["character"].as_u64().unwrap_or(0);
    assert_eq!(
        found[1]["range"],
        json!({ "start": { "line": line, "character": column + 1 }, "end": { "line": line, "character": column + 4 } })
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_changed_promptforge_toml_is_read_again() {
    let scratch = workspace("watch", "");
    let doc = file_uri(&scratch, "p.md");
    let text = prompt(
        "plugins: [promptforge/web]\ntools:\n  find: promptforge/web/search\n",
        "",
    );
    let mut client = LspClient::start_with_env(&[]);
    client.initialize(
        json!({ "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } } }),
    );
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let unmet = with_code(&diagnostics, "RequirementsUnmet");
    assert_eq!(unmet.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        unmet[0]["message"],
        "the catalog has no tool promptforge/web/search, so the slot \"find\" stays unbound; did you mean promptforge/web/fetch?"
    );
    // The registration is sent from `initialized`, which runs beside didOpen: it
    // may come after the first diagnostics.
    let registers = |c: &LspClient| {
        c.server_requests
            .iter()
            .any(|r| r["method"] == "client/registerCapability")
    };
    client.pump_until(registers);
    let registration = client
        .server_requests
        .iter()
        .find(|r| r["method"] == "client/registerCapability")
        .cloned()
        .expect("the server registers its file watcher");
    assert_eq!(
        registration["params"]["registrations"][0]["method"],
        "workspace/didChangeWatchedFiles"
    );
    assert_eq!(
        registration["params"]["registrations"][0]["registerOptions"]["watchers"][0]["globPattern"],
        "**/promptforge.toml"
    );
    let config = scratch.write("promptforge.toml", WEB_SEARCH_CONFIG);
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": format!("file://{}", config.display()), "type": 2 }] }),
    );
    let diagnostics = client.diagnostics_where(&doc, |d| d.is_empty());
    assert!(diagnostics.is_empty());
    // didChangeConfiguration reads it again too.
    scratch.write("promptforge.toml", "");
    client.notify(
        "workspace/didChangeConfiguration",
        json!({ "settings": {} }),
    );
    let diagnostics = client.diagnostics_where(&doc, |d| !d.is_empty());
    assert_eq!(with_code(&diagnostics, "RequirementsUnmet").len(), 1);
    assert_eq!(client.shutdown(), Some(0));
}

/// tower-lsp drops a cancelled request's handler and answers RequestCancelled.
#[test]
fn a_cancelled_request_is_answered_with_request_cancelled() {
    let scratch = workspace("cancel", "");
    let doc = file_uri(&scratch, "p.md");
    let text = prompt("", "");
    let mut client = LspClient::start_with_env(&[("PROMPTFORGE_LSP_SLOW", "hover")]);
    client.initialize(json!({}));
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let asked = Instant::now();
    let id = client.send_request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": doc }, "position": { "line": 1, "character": 1 } }),
    );
    client.notify("$/cancelRequest", json!({ "id": id }));
    let error = client.response(id).expect_err("the request is cancelled");
    assert_eq!(error["code"], -32800, "{error}");
    assert!(asked.elapsed() < Duration::from_secs(4));
    assert_eq!(client.shutdown(), Some(0));
}

/// A slot whose Plugin activated without its path stays unbound: offering or
/// calling it fails at run time with the engine's message, shown where it is named.
#[test]
fn naming_a_slot_left_unbound_in_lua_is_reported_with_the_engine_message() {
    let scratch = workspace("unbound", "");
    let doc = file_uri(&scratch, "p.md");
    let text = prompt(
        "plugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\n  find: promptforge/web/search\n",
        "\n## A\n\n```lua\ntools.add('fetch')\ntools.always('find')\nlocal r = tools.call('find', {})\n```\n",
    );
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let view: Vec<(&str, &str, Value)> = diagnostics
        .iter()
        .filter(|d| d["code"] == "UnboundToolSlot" || d["code"] == "UnboundTool")
        .map(|d| {
            (
                d["code"].as_str().unwrap_or(""),
                d["message"].as_str().unwrap_or(""),
                d["range"].clone(),
            )
        })
        .collect();
    assert_eq!(
        view,
        [
            (
                "UnboundToolSlot",
                "tools.always alias \"find\" is not a bound tool slot",
                range_of(&text, "'find'", 0)
            ),
            (
                "UnboundTool",
                "tool \"find\" is not bound in this run; bound aliases: [fetch]",
                range_of(&text, "'find'", 1)
            ),
        ]
    );
    assert_eq!(
        hover_text(&mut client, &doc, &text, "find:"),
        "**tool slot** `find`\n\ntool path `promptforge/web/search`\n\nPlugin `promptforge/web`\n\nthe catalog has no tool with this path: the slot stays unbound"
    );
    assert_eq!(client.shutdown(), Some(0));
}
