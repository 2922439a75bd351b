//! The language server's prepare diagnostics against the Host's catalog, over
//! stdio: missing, optional, failed and conflicting Plugins, slots whose Plugin
//! is undeclared or whose path the catalog lacks, their quick fixes (and those of
//! duplicate, optional and capitalised declarations), an unusable configuration,
//! and MCP servers that are slow or never answer, which never block the server.
//!
//! Each test works in a scratch folder with its own `promptforge.toml`, which the
//! server finds upward from the document's folder (`host.md` §1).

use std::time::{Duration, Instant};

use promptforge_tests::agreement;
use promptforge_tests::lsp_client::{
    code_actions, file_uri, hover_text, only_edit, prompt, range_of, start, with_code, workspace,
    LspClient,
};
use serde_json::json;

#[test]
fn a_built_in_plugin_left_out_of_plugins_is_said_at_the_slot_and_added_by_its_fix() {
    // Issue 23, trap 2: the likeliest first mistake.
    let scratch = workspace("undeclared", "# no Plugins beyond the built-in ones\n");
    let doc = file_uri(&scratch, "p.md");
    let text = prompt("tools:\n  fetch: promptforge/web/fetch\n", "");
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let unmet = with_code(&diagnostics, "RequirementsUnmet");
    assert_eq!(unmet.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        unmet[0]["message"],
        "tool alias 'fetch' names promptforge/web/fetch, but this prompt does not declare its Plugin promptforge/web: add `- promptforge/web` under plugins:"
    );
    assert_eq!(
        unmet[0]["range"],
        range_of(&text, "promptforge/web/fetch", 0)
    );
    let actions = code_actions(
        &mut client,
        &doc,
        range_of(&text, "promptforge/web/fetch", 0),
    );
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(
        actions[0]["title"],
        "Add Plugin promptforge/web to plugins:"
    );
    let (_, new_text) = only_edit(&actions[0], &doc);
    let fixed = text.replacen("tools:", &format!("{new_text}tools:"), 1);
    assert!(
        fixed.contains("plugins:\n  - promptforge/web\ntools:"),
        "{fixed}"
    );
    client.change(&doc, 2, json!([{ "text": fixed }]));
    let after = client.diagnostics(&doc, 2);
    assert!(
        with_code(&after, "RequirementsUnmet").is_empty(),
        "{after:#?}"
    );
}

#[test]
fn missing_optional_and_undeclared_plugins_and_unknown_paths_are_placed_exactly() {
    let scratch = workspace("missing", "# no Plugins beyond the built-in ones\n");
    let doc = file_uri(&scratch, "p.md");
    let text = prompt(
        "plugins:\n  - promptforge/web\n  - acme/fs\n  - ref: acme/extra\n    optional: true\ntools:\n  fetch: promptforge/web/fecth\n  read: acme/fs/read\n  other: acme/gone/x\n",
        "",
    );
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let unmet = with_code(&diagnostics, "RequirementsUnmet");
    assert_eq!(unmet.len(), 4, "{diagnostics:#?}");
    assert_eq!(unmet[0]["message"], "missing required Plugin: acme/fs");
    assert_eq!(unmet[0]["severity"], 1);
    assert_eq!(unmet[0]["range"], range_of(&text, "acme/fs", 0));
    assert_eq!(
        unmet[0]["relatedInformation"],
        json!([{ "location": { "uri": doc, "range": range_of(&text, "acme/fs", 0) }, "message": "the Host registers no Plugin with this id" }])
    );
    assert_eq!(
        unmet[1]["message"],
        "skipped optional Plugin acme/extra: the Host registers no Plugin with this id"
    );
    assert_eq!(unmet[1]["severity"], 2);
    assert_eq!(unmet[1]["range"], range_of(&text, "acme/extra", 0));
    assert_eq!(
        unmet[2]["message"],
        "the catalog has no tool promptforge/web/fecth, so the slot \"fetch\" stays unbound; did you mean promptforge/web/fetch?"
    );
    assert_eq!(unmet[2]["severity"], 2);
    assert_eq!(
        unmet[2]["range"],
        range_of(&text, "promptforge/web/fecth", 0)
    );
    assert_eq!(
        unmet[3]["message"],
        "tool alias 'other' names acme/gone/x, but this prompt does not declare its Plugin acme/gone: declare it under plugins: (the Host registers no Plugin acme/gone yet)"
    );
    assert_eq!(unmet[3]["severity"], 1);
    assert_eq!(unmet[3]["range"], range_of(&text, "acme/gone/x", 0));

    // The nearest catalog path replaces the unknown one.
    let actions = code_actions(&mut client, &doc, range_of(&text, "fecth", 0));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(actions[0]["title"], "Replace with promptforge/web/fetch");
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(
        actions[0]["diagnostics"][0]["message"],
        unmet[2]["message"].clone()
    );
    assert_eq!(
        only_edit(&actions[0], &doc),
        (
            range_of(&text, "promptforge/web/fecth", 0),
            "promptforge/web/fetch".to_owned()
        )
    );
    // The slot's undeclared Plugin joins plugins:, after its last entry.
    let actions = code_actions(&mut client, &doc, range_of(&text, "acme/gone/x", 0));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(actions[0]["title"], "Add Plugin acme/gone to plugins:");
    let tools_line = range_of(&text, "tools:", 0)["start"].clone();
    assert_eq!(
        only_edit(&actions[0], &doc),
        (
            json!({ "start": tools_line, "end": tools_line }),
            "  - acme/gone\n".to_owned()
        )
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn an_undeclared_plugin_is_added_to_a_flow_list_or_a_new_key() {
    let scratch = workspace("add", "");
    let mut client = start();
    let flow = file_uri(&scratch, "flow.md");
    let text = prompt("plugins: [promptforge/web]\ntools:\n  x: acme/gone/x\n", "");
    client.open(&flow, 1, &text);
    client.diagnostics(&flow, 1);
    let actions = code_actions(&mut client, &flow, range_of(&text, "acme/gone/x", 0));
    let end = range_of(&text, "]", 0)["start"].clone();
    assert_eq!(
        only_edit(&actions[0], &flow),
        (
            json!({ "start": end, "end": end }),
            ", acme/gone".to_owned()
        )
    );
    let none = file_uri(&scratch, "none.md");
    let text = prompt("tools:\n  x: acme/gone/x\n", "");
    client.open(&none, 1, &text);
    client.diagnostics(&none, 1);
    let actions = code_actions(&mut client, &none, range_of(&text, "acme/gone/x", 0));
    let tools_line = range_of(&text, "tools:", 0)["start"].clone();
    assert_eq!(
        only_edit(&actions[0], &none),
        (
            json!({ "start": tools_line, "end": tools_line }),
            "plugins:\n  - acme/gone\n".to_owned()
        )
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn conflicting_plugins_are_reported_on_the_later_entry() {
    let scratch = workspace(
        "conflicts",
        "[plugin.\"acme/a\"]\ncommand = \"/nonexistent/a\"\nconflicts = [\"acme/b\"]\n\n[plugin.\"acme/b\"]\ncommand = \"/nonexistent/b\"\n",
    );
    let doc = file_uri(&scratch, "p.md");
    let text = prompt("plugins: [acme/a, promptforge/web, acme/b]\n", "");
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let unmet = with_code(&diagnostics, "RequirementsUnmet");
    assert_eq!(unmet.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        unmet[0]["message"],
        "conflicting Plugins: acme/a and acme/b cannot be activated together; declare one or the other"
    );
    assert_eq!(unmet[0]["severity"], 1);
    assert_eq!(unmet[0]["range"], range_of(&text, "acme/b", 0));
    assert_eq!(
        unmet[0]["relatedInformation"],
        json!([{ "location": { "uri": doc, "range": range_of(&text, "acme/a", 0) }, "message": "conflicts with this earlier declaration" }])
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_plugin_that_fails_to_activate_is_reported_when_its_activation_ends() {
    let scratch = workspace(
        "failed",
        "[plugin.\"acme/broken\"]\ncommand = \"/nonexistent/server\"\n",
    );
    let doc = file_uri(&scratch, "p.md");
    let text = prompt("plugins:\n  - acme/broken\n  - ref: promptforge/web\n", "");
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics =
        client.diagnostics_where(&doc, |d| d.iter().any(|d| d["code"] == "RequirementsUnmet"));
    let unmet = with_code(&diagnostics, "RequirementsUnmet");
    assert_eq!(unmet.len(), 1, "{diagnostics:#?}");
    assert_eq!(unmet[0]["message"], "missing required Plugin: acme/broken");
    assert_eq!(unmet[0]["range"], range_of(&text, "acme/broken", 0));
    let reason = unmet[0]["relatedInformation"][0]["message"]
        .as_str()
        .unwrap_or("");
    assert!(!reason.is_empty(), "the reason is given: {diagnostics:#?}");
    let hover = hover_text(&mut client, &doc, &text, "acme/broken");
    assert_eq!(
        hover,
        format!("**Plugin** `acme/broken` (required)\n\nit failed to activate: {reason}")
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// An MCP server that never answers: diagnostics and hover come at once, and the
/// Plugin stays "pending" (no catalog diagnostic for it) meanwhile.
#[test]
fn a_slow_mcp_server_never_delays_diagnostics_or_requests() {
    let scratch = workspace(
        "slow",
        "[plugin.\"acme/slow\"]\ncommand = \"sleep\"\nargs = [\"30\"]\n",
    );
    let doc = file_uri(&scratch, "p.md");
    let text = prompt(
        "plugins: [acme/slow]\ntools:\n  go: acme/slow/go\n",
        "\n## A\n\n```lua\nx = = 1\n```\n",
    );
    let mut client = start();
    let started = Instant::now();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "diagnostics took {:?}",
        started.elapsed()
    );
    assert_eq!(with_code(&diagnostics, "Lua").len(), 1, "{diagnostics:#?}");
    assert!(
        with_code(&diagnostics, "RequirementsUnmet").is_empty(),
        "{diagnostics:#?}"
    );
    let asked = Instant::now();
    let hover = hover_text(&mut client, &doc, &text, "acme/slow");
    assert!(asked.elapsed() < Duration::from_secs(2));
    assert_eq!(
        hover,
        "**Plugin** `acme/slow` (required)\n\nbacks the tool slots `go`\n\nits tools are still being listed"
    );
    let hover = hover_text(&mut client, &doc, &text, "go:");
    assert_eq!(
        hover,
        "**tool slot** `go`\n\ntool path `acme/slow/go`\n\nPlugin `acme/slow`\n\nthe Plugin's tools are still being listed"
    );
    let stopping = Instant::now();
    assert_eq!(client.shutdown(), Some(0));
    assert!(stopping.elapsed() < Duration::from_secs(5));
}

#[test]
fn duplicate_optional_and_capitalised_declarations_have_quick_fixes() {
    let scratch = workspace("fixes", "");
    let mut client = start();

    let flow = file_uri(&scratch, "flow.md");
    let text = prompt("plugins: [promptforge/web, promptforge/web]\n", "");
    client.open(&flow, 1, &text);
    client.diagnostics(&flow, 1);
    let twice = range_of(&text, "promptforge/web", 1);
    let actions = code_actions(&mut client, &flow, twice.clone());
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(
        actions[0]["title"],
        "Remove the duplicate declaration of promptforge/web"
    );
    let start = range_of(&text, ", promptforge/web]", 0)["start"].clone();
    assert_eq!(
        only_edit(&actions[0], &flow),
        (
            json!({ "start": start, "end": twice["end"] }),
            String::new()
        )
    );

    let block = file_uri(&scratch, "block.md");
    let text = prompt(
        "plugins:\n  - promptforge/web\n  - ref: promptforge/web\n    optional: true\n",
        "",
    );
    client.open(&block, 1, &text);
    client.diagnostics(&block, 1);
    let actions = code_actions(&mut client, &block, range_of(&text, "promptforge/web", 1));
    let first = range_of(&text, "  - ref:", 0)["start"].clone();
    let end = range_of(&text, "---\n\n# T", 0)["start"].clone();
    assert_eq!(
        only_edit(&actions[0], &block),
        (json!({ "start": first, "end": end }), String::new())
    );

    let optional = file_uri(&scratch, "optional.md");
    let text = prompt(
        "plugins:\n  - ref: promptforge/web\n    optional: true\ntools:\n  fetch: promptforge/web/fetch\n",
        "",
    );
    client.open(&optional, 1, &text);
    let diagnostics = client.diagnostics(&optional, 1);
    let frontmatter = with_code(&diagnostics, "Frontmatter");
    assert_eq!(frontmatter.len(), 1, "{diagnostics:#?}");
    let actions = code_actions(&mut client, &optional, frontmatter[0]["range"].clone());
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(
        actions[0]["title"],
        "Drop `optional: true` from promptforge/web"
    );
    let line = range_of(&text, "    optional", 0)["start"].clone();
    let next = range_of(&text, "tools:", 0)["start"].clone();
    assert_eq!(
        only_edit(&actions[0], &optional),
        (json!({ "start": line, "end": next }), String::new())
    );

    let upper = file_uri(&scratch, "upper.md");
    let text = "---\nname: Pager\ndescription: d\npromptforge: 0\n---\n\n# T\n".to_owned();
    client.open(&upper, 1, &text);
    client.diagnostics(&upper, 1);
    let actions = code_actions(&mut client, &upper, range_of(&text, "Pager", 0));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(actions[0]["title"], "Lowercase to pager");
    assert_eq!(
        only_edit(&actions[0], &upper),
        (range_of(&text, "Pager", 0), "pager".to_owned())
    );

    let id = file_uri(&scratch, "id.md");
    let text = prompt("plugins: [Acme/fs]\n", "");
    client.open(&id, 1, &text);
    let diagnostics = client.diagnostics(&id, 1);
    let frontmatter = with_code(&diagnostics, "Frontmatter");
    assert_eq!(frontmatter.len(), 1, "{diagnostics:#?}");
    let actions = code_actions(&mut client, &id, range_of(&text, "Acme/fs", 0));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(actions[0]["title"], "Lowercase to acme");
    assert_eq!(
        only_edit(&actions[0], &id),
        (range_of(&text, "Acme", 0), "acme".to_owned())
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// An MCP server that never lists its tools fails to activate when the timeout
/// (shortened here) passes; the documents declaring it are published again.
#[test]
fn an_mcp_server_that_never_answers_times_out() {
    let scratch = workspace(
        "timeout",
        "[plugin.\"acme/slow\"]\ncommand = \"sleep\"\nargs = [\"30\"]\n",
    );
    let doc = file_uri(&scratch, "p.md");
    let text = prompt("plugins: [acme/slow]\n", "");
    let mut client = LspClient::start_with_env(&[]);
    client.initialize_with(
        json!({}),
        json!({ "activationTimeoutMs": 1500, "trusted": true }),
    );
    client.open(&doc, 1, &text);
    assert!(with_code(&client.diagnostics(&doc, 1), "RequirementsUnmet").is_empty());
    let diagnostics =
        client.diagnostics_where(&doc, |d| d.iter().any(|d| d["code"] == "RequirementsUnmet"));
    assert_eq!(
        diagnostics,
        [json!({
            "range": range_of(&text, "acme/slow", 0),
            "severity": 1,
            "code": "RequirementsUnmet",
            "source": "promptforge",
            "message": "missing required Plugin: acme/slow",
            "relatedInformation": [{
                "location": { "uri": doc, "range": range_of(&text, "acme/slow", 0) },
                "message": "it did not list its tools within 1.5 s"
            }]
        })]
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_configuration_that_gives_no_host_is_one_warning() {
    let scratch = workspace("config-error", "bogus = 1\n");
    let doc = file_uri(&scratch, "p.md");
    let text = prompt("plugins: [promptforge/web]\n", "");
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["code"], "Configuration");
    assert_eq!(diagnostics[0]["severity"], 2);
    assert_eq!(diagnostics[0]["range"], range_of(&text, "---", 0));
    let message = diagnostics[0]["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("the Host configuration cannot be used: ") && message.contains("bogus"),
        "{message}"
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// The server's prepare problems are `promptforge check --format json`'s for the
/// same file and Host: the refusing ones are the related places of check's one
/// notice, the rest (warnings) its own problems.
#[test]
fn prepare_problems_agree_with_check() {
    let scratch = workspace(
        "versus-check",
        "[plugin.\"acme/a\"]\ncommand = \"/nonexistent/a\"\nconflicts = [\"acme/b\"]\n\n[plugin.\"acme/b\"]\ncommand = \"/nonexistent/b\"\n",
    );
    let texts = [
        prompt(
            "plugins:\n  - promptforge/web\n  - acme/fs\n  - ref: acme/extra\n    optional: true\ntools:\n  fetch: promptforge/web/fecth\n  other: acme/gone/x\n",
            "",
        ),
        prompt("plugins: [acme/a, zzz/none, acme/b]\n", ""),
    ];
    let mut client = start();
    for (n, text) in texts.iter().enumerate() {
        let name = format!("p{n}.md");
        let doc = file_uri(&scratch, &name);
        let (checked, code) = agreement::check_text(&scratch, &name, text);
        client.open(&doc, 1, text);
        let diagnostics = client.diagnostics(&doc, 1);
        assert!(
            !with_code(&diagnostics, "RequirementsUnmet").is_empty(),
            "{diagnostics:?}"
        );
        assert_eq!(agreement::published(&diagnostics), checked, "{text}");
        assert_eq!(code, Some(1));
    }
    assert_eq!(client.shutdown(), Some(0));
}
