//! Documents built to cost the analysis (the trust issue), over stdio on the
//! real binary: a Lua block past the size the analysis reads is checked for
//! syntax only, and one Information diagnostic on its fence says so; the
//! language server and `promptforge check` agree on it.

use promptforge_tests::lsp_client::{prompt, range, start, uri};
use promptforge_tests::{agreement, Scratch};
use serde_json::{json, Value};

/// A prompt whose `## Go` holds a Lua block of at least `bytes` bytes and a
/// small one; and the big block's code. The big block's first line calls an
/// alias never bound (a static problem), it registers `helper` as a local tool,
/// and its last line is a syntax error; the small block calls `helper`.
fn hostile(bytes: usize) -> (String, String) {
    let mut code = String::from(
        "tools.call('nosuch')\ntools.add_local('helper', 'h', {}, function() return 1 end)\n",
    );
    while code.len() < bytes {
        code.push_str("x = { 1, 2, 3, 'some text to read' }\n");
    }
    code.push_str("local = 1\n");
    let body =
        format!("\n## Go\n\n```lua\n{code}```\n\n```lua\nreturn tools.call('helper')\n```\n");
    (prompt("", &body), code)
}

#[test]
fn a_lua_block_past_the_read_budget_is_checked_for_syntax_only_and_said_so() {
    let (text, code) = hostile(300 * 1024);
    let mut client = start();
    let doc = uri("hostile.md");
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let codes: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["Lua", "LuaBlockNotRead"], "{diagnostics:?}");
    // The syntax error on the block's last line (file lines: 0 `---` .. 6 `# T`,
    // 8 `## Go`, 10 the fence) is still found.
    let fence = 10;
    let last = fence + code.lines().count() as u32;
    assert_eq!(diagnostics[0]["range"]["start"]["line"], last);
    let info: &Value = &diagnostics[1];
    assert_eq!(info["severity"], 3);
    assert_eq!(
        info["message"],
        format!(
            "this Lua block is {} bytes, past the 262144 bytes the analysis reads of one block: only its syntax is checked (no static checks, and no hover, completion or other Lua features in it)",
            code.len()
        )
    );
    assert_eq!(info["range"], range(fence, 0, fence, 6));
    // Nothing is said of `helper`, which the unread block may register.
    let scratch = Scratch::new("lsp-hostile");
    let (checked, exit) = agreement::check_text(&scratch, "hostile.md", &text);
    assert_eq!(agreement::published(&diagnostics), checked);
    assert_eq!(exit, Some(1), "the syntax error fails the check");
    // A rename would miss the uses in the unread block: refused.
    let renamed = client.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": doc }, "position": { "line": 8, "character": 4 }, "newName": "Other" }),
    );
    assert_eq!(
        renamed.err().map(|e| e["message"].clone()),
        Some(json!("cannot rename here: this prompt has Lua blocks too large to analyse (see their LuaBlockNotRead information), and their uses would not be renamed"))
    );
}
