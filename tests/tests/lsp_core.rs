//! The language server's core over stdio: initialization, text sync (full and
//! incremental, bursts), diagnostics equal to `promptforge check --format json`,
//! prompts only (a prompt staying one while open), protocol errors, panics and
//! invalid positions.

use promptforge_tests::lsp_client::{position, range, uri, LspClient};
use promptforge_tests::{agreement, Scratch};
use serde_json::{json, Value};

const PROMPT: &str = "---\nname: Bad Name\ndescription: x\npromptforge: 0\nplugins: [promptforge/web, promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n---\n\n# Title 😀\n\n## A\n\n```lua\nx = = 1\n```\n\n#### Skip\n";

/// What `check --format json` prints for `text`, in the shape both front ends
/// are compared in ([`promptforge_tests::agreement`]).
fn check_json(text: &str) -> Vec<agreement::Agreed> {
    let scratch = Scratch::new("lsp");
    agreement::check_text(&scratch, "p.md", text).0
}

/// A publication's diagnostics in the same shape: every diagnostic, the static
/// Lua checks' and the catalog's included (the two front ends agree on all).
fn syntax_view(diagnostics: &[Value]) -> Vec<agreement::Agreed> {
    agreement::published(diagnostics)
}

/// `--stdio`, which `vscode-languageclient` and other clients pass, is accepted
/// and changes nothing (`editor.md`).
#[test]
fn the_stdio_flag_is_accepted() {
    let mut client = LspClient::start_with_args(&["lsp", "--stdio"]);
    let result = client.initialize(json!({}));
    assert_eq!(result["serverInfo"]["name"], "promptforge");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn initialize_announces_utf16_by_default_and_utf8_when_offered() {
    let mut client = LspClient::start_with_env(&[]);
    let result = client.initialize(json!({}));
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(result["capabilities"]["textDocumentSync"]["change"], 2);
    assert_eq!(
        result["capabilities"]["textDocumentSync"]["openClose"],
        true
    );
    assert_eq!(result["serverInfo"]["name"], "promptforge");
    assert_eq!(client.shutdown(), Some(0));

    let mut client = LspClient::start_with_env(&[]);
    let result =
        client.initialize(json!({ "general": { "positionEncodings": ["utf-16", "utf-8"] } }));
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-8");
}

#[test]
fn diagnostics_carry_kind_code_source_version_and_related_places() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("core.md");
    client.open(&doc, 7, PROMPT);
    let diagnostics = client.diagnostics(&doc, 7);
    assert_eq!(syntax_view(&diagnostics), check_json(PROMPT));
    let first = &diagnostics[0];
    assert_eq!(first["severity"], 1);
    assert_eq!(first["source"], "promptforge");
    assert_eq!(first["code"], "Frontmatter");
    assert_eq!(
        first["message"],
        "invalid prompt name `Bad Name`: expected [a-z0-9][a-z0-9_-]{0,63}"
    );
    assert_eq!(first["range"], range(1, 6, 1, 14));
    let twice = &diagnostics[1];
    assert_eq!(
        twice["message"],
        "invalid frontmatter: Plugin promptforge/web is declared more than once under plugins"
    );
    assert_eq!(twice["range"], range(4, 27, 4, 42));
    assert_eq!(
        twice["relatedInformation"],
        json!([{ "location": { "uri": doc, "range": range(4, 10, 4, 25) }, "message": "first declared here" }])
    );
    let lua = diagnostics
        .iter()
        .find(|d| d["code"] == "Lua")
        .expect("a Lua diagnostic");
    assert_eq!(lua["message"], "unexpected symbol near '='");
    let structure = diagnostics
        .iter()
        .find(|d| d["code"] == "Structure")
        .expect("a Structure diagnostic");
    assert_eq!(
        structure["message"],
        "heading level skipped: \"Skip\" is an H4 under an H2"
    );
    assert_eq!(structure["range"]["start"]["line"], 19);
}

#[test]
fn astral_characters_and_crlf_give_utf16_columns() {
    let text = "---\r\nname: ok\r\ndescription: \"😀😀\"\r\npromptforge: 0\r\ntools:\r\n  😀x: a/b/c\r\n---\r\n\r\n# T\r\n";
    let mut client = LspClient::start(json!({}));
    let doc = uri("crlf.md");
    client.open(&doc, 1, text);
    let diagnostics = client.diagnostics(&doc, 1);
    assert_eq!(syntax_view(&diagnostics), check_json(text));
    let alias = diagnostics
        .iter()
        .find(|d| {
            d["message"]
                .as_str()
                .unwrap_or("")
                .starts_with("invalid alias")
        })
        .expect("an alias error");
    assert_eq!(
        alias["message"],
        "invalid alias \"😀x\": expected [A-Za-z][A-Za-z0-9_-]{0,63}"
    );
    assert_eq!(alias["range"], range(5, 2, 5, 5));

    // The same document with UTF-8 columns: the alias spans 5 bytes.
    let mut client = LspClient::start(json!({ "general": { "positionEncodings": ["utf-8"] } }));
    client.open(&doc, 1, text);
    let diagnostics = client.diagnostics(&doc, 1);
    let alias = diagnostics
        .iter()
        .find(|d| {
            d["message"]
                .as_str()
                .unwrap_or("")
                .starts_with("invalid alias")
        })
        .expect("an alias error");
    assert_eq!(alias["range"], range(5, 2, 5, 7));
}

/// A small deterministic generator for the burst.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The nearest place at or before `at` that an LSP position can name: a char
/// boundary that does not split a CRLF.
fn char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at)
        || (at > 0 && text[..at].ends_with('\r') && text[at..].starts_with('\n'))
    {
        at -= 1;
    }
    at
}

/// Sends `count` random incremental edits in one burst, without waiting; returns
/// the text the client holds afterwards and the last version. One edit in
/// `opening` (never when 0) lands on the opening line instead, which breaks or
/// mends the frontmatter's `---`.
fn burst(
    client: &mut LspClient,
    doc: &str,
    text: &mut String,
    rng: &mut Rng,
    count: usize,
    first_version: i64,
    opening: usize,
) -> i64 {
    const PIECES: &[&str] = &[
        "",
        "x",
        "😀",
        "é",
        "\n",
        "\r\n",
        "---\n",
        "# H\n",
        "## S\n",
        "```lua\n",
        "```\n",
        "tools:\n  a: b/c/d\n",
        "= =",
        "jump('## S')\n",
        "models:\n  m: {}\n",
        "promptforge: 0\n",
    ];
    let mut version = first_version;
    for _ in 0..count {
        // The `promptforge: 0` line stays, so the text stays a prompt.
        let keep = text.find("promptforge: 0\n").map_or(0, |at| at + 15);
        let start = if opening > 0 && rng.below(opening) == 0 {
            char_boundary(text, rng.below(4).min(text.len()))
        } else {
            char_boundary(text, keep + rng.below(text.len() + 1 - keep))
        };
        let end = char_boundary(text, (start + rng.below(12)).min(text.len()));
        let piece = PIECES[rng.below(PIECES.len())];
        let (l1, c1) = position(text, start);
        let (l2, c2) = position(text, end);
        version += 1;
        client.change(
            doc,
            version,
            json!([{ "range": range(l1, c1, l2, c2), "text": piece }]),
        );
        text.replace_range(start..end, piece);
    }
    version
}

#[test]
fn a_burst_of_incremental_edits_ends_equal_to_check() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("burst.md");
    let mut text = PROMPT.to_owned();
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut version = 1;
    for _ in 0..5 {
        version = burst(&mut client, &doc, &mut text, &mut rng, 60, version, 0);
        // A request after the burst sees its last edit.
        let symbols = client.request(
            "textDocument/foldingRange",
            json!({ "textDocument": { "uri": doc } }),
        );
        assert!(symbols.is_ok());
        let diagnostics = client.diagnostics(&doc, version);
        assert_eq!(
            syntax_view(&diagnostics),
            check_json(&text),
            "after version {version}:\n{text}"
        );
    }
}

#[test]
fn full_sync_replaces_the_text() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("full.md");
    client.open(&doc, 1, PROMPT);
    client.diagnostics(&doc, 1);
    let fixed = "---\nname: ok\ndescription: d\npromptforge: 0\n---\n\n# T\n";
    client.change(&doc, 2, json!([{ "text": fixed }]));
    assert_eq!(client.diagnostics(&doc, 2), Vec::<Value>::new());
}

#[test]
fn only_prompts_are_served() {
    let mut client = LspClient::start(json!({}));
    let readme = uri("readme.md");
    let plain = "---\ntitle: notes\n---\n# Notes\n\n# Two H1s are fine here\n";
    client.open(&readme, 1, plain);
    let hover = client.at("textDocument/hover", &readme, 3, 3);
    assert_eq!(hover, Ok(Value::Null));
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": readme } }),
    );
    assert_eq!(symbols, Ok(Value::Null));

    // It becomes a prompt: diagnostics appear; an edit that makes its text no
    // prompt shows the error `check` gives (editor.md §1): it stays a prompt.
    client.change(
        &readme,
        2,
        json!([{ "range": range(1, 0, 1, 0), "text": "promptforge: 0\n" }]),
    );
    let diagnostics = client.diagnostics(&readme, 2);
    assert!(
        diagnostics
            .iter()
            .any(|d| d["message"] == "missing field `name`"),
        "{diagnostics:?}"
    );
    client.change(
        &readme,
        3,
        json!([{ "range": range(1, 0, 2, 0), "text": "" }]),
    );
    let diagnostics = client.diagnostics(&readme, 3);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "Version");
    assert_eq!(diagnostics[0]["range"], range(0, 0, 0, 3));
    client.change(
        &readme,
        4,
        json!([{ "range": range(0, 0, 0, 0), "text": "x" }]),
    );
    let diagnostics = client.diagnostics(&readme, 4);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "Frontmatter");
    assert_eq!(diagnostics[0]["range"], range(0, 0, 0, 4));

    // A Markdown file that never was a prompt gets nothing, edited or not.
    let notes = uri("notes.md");
    client.open(&notes, 1, plain);
    client.change(
        &notes,
        2,
        json!([{ "range": range(0, 0, 0, 0), "text": "x" }]),
    );
    let prompt = uri("after.md");
    client.open(&prompt, 1, PROMPT);
    client.diagnostics(&prompt, 1);
    let late = client
        .notifications
        .iter()
        .any(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == notes);
    assert!(!late, "a document that is not a prompt got diagnostics");
}

#[test]
fn a_version_that_does_not_increase_is_logged_as_a_protocol_error() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("versions.md");
    client.open(&doc, 5, PROMPT);
    client.diagnostics(&doc, 5);
    client.change(&doc, 5, json!([{ "range": range(0, 0, 0, 0), "text": "" }]));
    let log = client.wait_notification(|m| m["method"] == "window/logMessage");
    assert_eq!(log["params"]["type"], 1);
    assert_eq!(
        log["params"]["message"],
        format!("protocol error: didChange for {doc}: version 5 does not increase on version 5")
    );
}

#[test]
fn a_panicking_handler_is_answered_with_an_error_and_the_server_stays() {
    let mut client = LspClient::start_with_env(&[("PROMPTFORGE_LSP_PANIC", "hover")]);
    client.initialize(json!({}));
    let doc = uri("panic.md");
    client.open(&doc, 1, PROMPT);
    client.diagnostics(&doc, 1);
    let error = client
        .at("textDocument/hover", &doc, 11, 3)
        .expect_err("the hover panics");
    assert_eq!(error["code"], -32603);
    assert_eq!(
        error["message"],
        "hover failed: PROMPTFORGE_LSP_PANIC asked hover to panic"
    );
    let log = client.wait_notification(|m| m["method"] == "window/logMessage");
    assert_eq!(
        log["params"]["message"],
        format!("hover on {doc} panicked: PROMPTFORGE_LSP_PANIC asked hover to panic")
    );
    // Still serving: other requests, edits and diagnostics.
    let symbols = client
        .request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": doc } }),
        )
        .expect("symbols");
    assert_eq!(symbols[1]["name"], "Title 😀");
    client.change(
        &doc,
        2,
        json!([{ "range": range(16, 0, 16, 7), "text": "x = 1" }]),
    );
    let diagnostics = client.diagnostics(&doc, 2);
    assert!(diagnostics.iter().all(|d| d["code"] != "Lua"));
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn positions_and_edits_past_the_end_are_clamped() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("clamp.md");
    client.open(&doc, 1, PROMPT);
    client.diagnostics(&doc, 1);
    assert_eq!(
        client.at("textDocument/hover", &doc, 9999, 9999),
        Ok(Value::Null)
    );
    assert!(client.at("textDocument/completion", &doc, 2, 9999).is_ok());
    // An insertion past the end lands at the end; a range past the end deletes to it.
    client.change(
        &doc,
        2,
        json!([{ "range": range(500, 3, 600, 0), "text": "\n## B\n" }]),
    );
    let text = format!("{PROMPT}\n## B\n");
    assert_eq!(syntax_view(&client.diagnostics(&doc, 2)), check_json(&text));
    // A reversed range is applied in order.
    client.change(
        &doc,
        3,
        json!([{ "range": range(1, 14, 1, 6), "text": "ok" }]),
    );
    let text = text.replacen("Bad Name", "ok", 1);
    assert_eq!(syntax_view(&client.diagnostics(&doc, 3)), check_json(&text));
    assert!(client
        .log_messages()
        .iter()
        .any(|m| m.contains("ends before it starts")));
}

#[test]
fn a_huge_or_binary_document_is_still_served() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("huge.md");
    let mut text =
        String::from("---\nname: huge\ndescription: d\npromptforge: 0\n---\n\n# Huge\n\n");
    for i in 0..4000 {
        text.push_str(&format!(
            "## S{i}\n\n\u{0}\u{1}\u{7f} binary \u{fffd}\n\n```lua\nlocal x{i} = {i}\n```\n\n"
        ));
    }
    text.push_str("## S7\n");
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    assert_eq!(syntax_view(&diagnostics), check_json(&text));
    assert_eq!(diagnostics.len(), 1);
    client.change(
        &doc,
        2,
        json!([{ "range": range(0, 0, 0, 0), "text": "\u{0}" }]),
    );
    // A NUL before the frontmatter: the text opens with no frontmatter, and the
    // document stays a prompt (editor.md §1).
    let diagnostics = client.diagnostics(&doc, 2);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "Frontmatter");
    assert_eq!(diagnostics[0]["range"], range(0, 0, 0, 4));
}

/// The issue's edit storm: 10,000 random incremental edits (insertions and
/// deletions across frontmatter, headings, fences and Lua, multi-byte text, and
/// one in 200 on the opening line, which breaks the frontmatter; half the
/// broken texts are mended after their check) in
/// batches of 100 sent without waiting; after every batch the published
/// diagnostics equal `promptforge check --format json` on the same text, the
/// document staying a prompt while its text is none (`editor.md` §1).
#[test]
fn an_edit_storm_of_10000_edits_keeps_diagnostics_equal_to_check() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("storm.md");
    let mut text = PROMPT.to_owned();
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut version = 1;
    let mut broken = 0;
    for _ in 0..100 {
        version = burst(&mut client, &doc, &mut text, &mut rng, 100, version, 200);
        broken += usize::from(!text.starts_with("---\n"));
        let diagnostics = client.diagnostics(&doc, version);
        assert_eq!(
            syntax_view(&diagnostics),
            check_json(&text),
            "after version {version}:\n{text}"
        );
        if !text.starts_with("---\n") && rng.below(2) == 0 {
            // Mend the opening line: the next burst starts from a prompt again.
            let first = text.find('\n').map_or(text.len(), |at| at + 1);
            let (line, column) = position(&text, first);
            version += 1;
            client.change(
                &doc,
                version,
                json!([{ "range": range(0, 0, line, column), "text": "---\n" }]),
            );
            text.replace_range(..first, "---\n");
        }
        // Keep the text from growing without bound: trim it back to the prompt now and then.
        if text.len() > 8192 {
            version += 1;
            client.change(&doc, version, json!([{ "text": PROMPT }]));
            text = PROMPT.to_owned();
        }
    }
    assert!(
        (5..95).contains(&broken),
        "{broken} of 100 bursts ended with the opening line broken"
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn closing_a_prompt_clears_its_diagnostics_and_its_requests() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("close.md");
    client.open(&doc, 1, PROMPT);
    assert!(!client.diagnostics(&doc, 1).is_empty());
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": doc } }),
    );
    let cleared = client.wait_notification(|m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == doc
    });
    assert_eq!(cleared["params"]["diagnostics"], json!([]));
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": doc } }),
    );
    assert_eq!(symbols, Ok(Value::Null));
    client.change(&doc, 2, json!([{ "text": PROMPT }]));
    let log = client.wait_notification(|m| m["method"] == "window/logMessage");
    assert_eq!(
        log["params"]["message"],
        format!("protocol error: didChange for {doc}, which is not open")
    );
}

#[test]
fn a_request_right_after_a_change_sees_the_change() {
    let mut client = LspClient::start(json!({}));
    let doc = uri("order.md");
    client.open(&doc, 1, PROMPT);
    // No waiting between the edits and the request.
    for (version, name) in [(2, "B"), (3, "C"), (4, "D")] {
        let line = 12 + 2 * (version as u32 - 2);
        client.change(
            &doc,
            version,
            json!([{ "range": range(line, 0, line, 0), "text": format!("\n## {name}\n") }]),
        );
    }
    let symbols = client
        .request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": doc } }),
        )
        .expect("symbols");
    let names: Vec<&str> = symbols[1]["children"]
        .as_array()
        .expect("sections")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["B", "C", "D", "A"]);
}
