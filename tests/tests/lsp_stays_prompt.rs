//! A document that is a prompt stays one while it is open (`editor.md` §1), over
//! stdio on the real binary: an edit that breaks its frontmatter shows the
//! frontmatter error (no opening `---`) or the Version error (no `promptforge:`
//! key) instead of silence, and mending it brings the normal diagnostics back;
//! `*.pf.md` files and the language id `promptforge` are prompts from the start;
//! other Markdown stays silent. And a failed Plugin activation is retried when
//! the document is saved.

use promptforge_tests::lsp_client::{
    file_uri, prompt, range, uri, with_code, workspace, LspClient,
};
use serde_json::{json, Value};

/// The parse's error for text that does not open with frontmatter.
const NO_FRONTMATTER: &str = "a prompt starts with YAML frontmatter between two --- lines";

/// The Version error of a Markdown file without a `promptforge:` key.
const NOT_A_PROMPT: &str = "not a PromptForge prompt: the frontmatter has no promptforge: key";

/// A prompt whose body has a Lua syntax error: its normal diagnostics are not empty.
fn lua_error_prompt() -> String {
    prompt("", "\n## A\n\n```lua\nx = = 1\n```\n")
}

/// `(code, message, range)` of each diagnostic.
fn shape(diagnostics: &[Value]) -> Vec<(Value, Value, Value)> {
    diagnostics
        .iter()
        .map(|d| (d["code"].clone(), d["message"].clone(), d["range"].clone()))
        .collect()
}

fn open_as(client: &mut LspClient, uri: &str, language_id: &str, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": language_id, "version": 1, "text": text } }),
    );
}

#[test]
fn breaking_the_opening_line_shows_the_frontmatter_error_until_it_is_mended() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("stays.md");
    let text = lua_error_prompt();
    client.open(&doc, 1, &text);
    let normal = client.diagnostics(&doc, 1);
    assert!(
        !with_code(&normal, "Lua").is_empty(),
        "the Lua error: {normal:#?}"
    );
    // `---` -> `--`: the text opens with no frontmatter.
    client.change(&doc, 2, json!([{ "range": range(0, 0, 0, 1), "text": "" }]));
    let broken = client.diagnostics(&doc, 2);
    assert_eq!(
        shape(&broken),
        [(
            json!("Frontmatter"),
            json!(NO_FRONTMATTER),
            range(0, 0, 0, 2)
        )]
    );
    assert_eq!(broken[0]["severity"], 1);
    assert_eq!(broken[0]["source"], "promptforge");
    // Still a prompt: an edit elsewhere keeps the error.
    client.change(
        &doc,
        3,
        json!([{ "range": range(1, 0, 1, 0), "text": "x" }]),
    );
    assert_eq!(shape(&client.diagnostics(&doc, 3)), shape(&broken));
    // Mended: the normal diagnostics return.
    client.change(
        &doc,
        4,
        json!([
            { "range": range(1, 0, 1, 1), "text": "" },
            { "range": range(0, 0, 0, 0), "text": "-" }
        ]),
    );
    assert_eq!(shape(&client.diagnostics(&doc, 4)), shape(&normal));
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn removing_the_promptforge_key_shows_the_version_error_until_it_is_back() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("version.md");
    let text = lua_error_prompt();
    assert!(text.starts_with("---\nname: p\ndescription: d\npromptforge: 0\n---\n"));
    client.open(&doc, 1, &text);
    let normal = client.diagnostics(&doc, 1);
    // Line 3 is `promptforge: 0`.
    client.change(&doc, 2, json!([{ "range": range(3, 0, 4, 0), "text": "" }]));
    assert_eq!(
        shape(&client.diagnostics(&doc, 2)),
        [(json!("Version"), json!(NOT_A_PROMPT), range(0, 0, 0, 3))]
    );
    client.change(
        &doc,
        3,
        json!([{ "range": range(3, 0, 3, 0), "text": "promptforge: 0\n" }]),
    );
    assert_eq!(shape(&client.diagnostics(&doc, 3)), shape(&normal));
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn pf_md_files_and_the_promptforge_language_id_are_prompts_from_the_start() {
    let mut client = LspClient::start(json!({}));
    let named = uri("notes.pf.md");
    client.open(&named, 1, "# Notes\n");
    assert_eq!(
        shape(&client.diagnostics(&named, 1)),
        [(
            json!("Frontmatter"),
            json!(NO_FRONTMATTER),
            range(0, 0, 0, 7)
        )]
    );
    let by_language = uri("notes.md");
    open_as(&mut client, &by_language, "promptforge", "# Notes\n");
    assert_eq!(
        shape(&client.diagnostics(&by_language, 1)),
        [(
            json!("Frontmatter"),
            json!(NO_FRONTMATTER),
            range(0, 0, 0, 7)
        )]
    );
    // A frontmatter without the key: the Version error on its opening line.
    let keyless = uri("keyless.pf.md");
    client.open(&keyless, 1, "---\ntitle: x\n---\n# Notes\n");
    assert_eq!(
        shape(&client.diagnostics(&keyless, 1)),
        [(json!("Version"), json!(NOT_A_PROMPT), range(0, 0, 0, 3))]
    );
    // Given a prompt's text, it gets the normal diagnostics.
    let text = lua_error_prompt();
    client.change(&named, 2, json!([{ "text": text }]));
    let diagnostics = client.diagnostics(&named, 2);
    assert!(
        !with_code(&diagnostics, "Lua").is_empty(),
        "the Lua error: {diagnostics:#?}"
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn markdown_that_never_was_a_prompt_stays_silent_and_one_that_was_stays_a_prompt() {
    let mut client = LspClient::start(json!({}));
    let plain = uri("readme.md");
    client.open(&plain, 1, "# Notes\n");
    client.change(
        &plain,
        2,
        json!([{ "text": "---\ntitle: x\n---\n# Notes\n" }]),
    );
    client.change(
        &plain,
        3,
        json!([{ "range": range(0, 0, 0, 1), "text": "" }]),
    );
    // Became a prompt at version 2, so it stays one after version 3 breaks it.
    let became = uri("became.md");
    client.open(&became, 1, "# Notes\n");
    client.change(&became, 2, json!([{ "text": lua_error_prompt() }]));
    let first = client.wait_notification(|m| m["method"] == "textDocument/publishDiagnostics");
    assert_eq!(
        first["params"]["uri"], became,
        "nothing is published for a file that never was a prompt: {first:#?}"
    );
    assert_eq!(first["params"]["version"], 2);
    client.change(
        &became,
        3,
        json!([{ "range": range(0, 0, 0, 1), "text": "" }]),
    );
    assert_eq!(
        shape(&client.diagnostics(&became, 3)),
        [(
            json!("Frontmatter"),
            json!(NO_FRONTMATTER),
            range(0, 0, 0, 2)
        )]
    );
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": plain } }),
    );
    assert_eq!(symbols, Ok(Value::Null), "no prompt features for it");
    assert_eq!(client.shutdown(), Some(0));
}

/// A Plugin whose MCP command did not exist at first: saving the document
/// retries the activation (here the command now exists but exits at once, so the
/// reason changes).
#[test]
fn saving_a_document_retries_its_failed_plugin_activations() {
    use std::os::unix::fs::PermissionsExt;

    let scratch = promptforge_tests::Scratch::new("retry");
    let script = scratch.path().join("late.sh");
    let config = format!(
        "[plugin.\"acme/late\"]\ncommand = \"{}\"\n",
        script.display()
    );
    let scratch_config = workspace("retry-config", &config);
    let doc = file_uri(&scratch_config, "p.md");
    let text = prompt("plugins:\n  - acme/late\n", "");
    let mut client = LspClient::start(json!({}));
    client.open(&doc, 1, &text);
    let reason_of = |diagnostics: &[Value]| {
        with_code(diagnostics, "RequirementsUnmet")
            .first()
            .and_then(|d| d["relatedInformation"][0]["message"].as_str())
            .map(str::to_owned)
    };
    let first = client.diagnostics_where(&doc, |d| reason_of(d).is_some());
    let first_reason = reason_of(&first).unwrap_or_default();
    scratch.write("late.sh", "#!/bin/sh\nexit 7\n");
    let executable = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(&script, executable).expect("the script is executable");
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": { "uri": doc } }),
    );
    let retried = client.diagnostics_where(&doc, |d| {
        reason_of(d).is_some_and(|reason| reason != first_reason)
    });
    assert_eq!(
        with_code(&retried, "RequirementsUnmet")[0]["message"],
        "missing required Plugin: acme/late"
    );
    assert_eq!(client.shutdown(), Some(0));
}
