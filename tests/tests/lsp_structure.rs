//! The body's structure rules in the editor (`language.md` §1.4): a lua block
//! never closed and a heading without a title, with their ranges, the quick fix
//! that closes the block, and the outline of an untitled heading.

use promptforge_tests::lsp_client::{
    code_actions, file_uri, only_edit, prompt, range, start, with_code, workspace, LspClient,
};
use serde_json::{json, Value};

fn symbols(client: &mut LspClient, doc: &str) -> Value {
    client
        .request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": doc } }),
        )
        .expect("symbols")
}

/// The names of the title's children in the outline.
fn sections(client: &mut LspClient, doc: &str) -> Vec<String> {
    let symbols = symbols(client, doc);
    let title = symbols
        .as_array()
        .and_then(|all| all.iter().find(|s| s["kind"] == 2))
        .cloned()
        .unwrap_or_default();
    title["children"]
        .as_array()
        .map(|children| {
            children
                .iter()
                .filter_map(|c| c["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_lua_block_never_closed_is_marked_at_its_opener_and_closed_by_its_fix() {
    let scratch = workspace("unclosed", "");
    let doc = file_uri(&scratch, "p.md");
    // Line 10 (0-based) opens the block; `## Write` is its code.
    let text = prompt(
        "",
        "\n## Fetch\n\n```lua\nreturn 'fetched'\n\n## Write\n\nProse.\n",
    );
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let structure = with_code(&diagnostics, "Structure");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        structure[0]["message"],
        "the lua block opened at line 11 is never closed"
    );
    assert_eq!(structure[0]["severity"], 1);
    assert_eq!(structure[0]["range"], range(10, 0, 10, 6));
    assert_eq!(sections(&mut client, &doc), ["Fetch"]);

    let actions = code_actions(&mut client, &doc, range(10, 2, 10, 2));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(actions[0]["title"], "Close the block with ``` at line 13");
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(
        actions[0]["diagnostics"][0]["message"],
        structure[0]["message"]
    );
    let (at, new_text) = only_edit(&actions[0], &doc);
    assert_eq!((at, new_text.as_str()), (range(12, 0, 12, 0), "```\n"));
    client.change(
        &doc,
        2,
        json!([{ "range": range(12, 0, 12, 0), "text": new_text }]),
    );
    assert_eq!(client.diagnostics(&doc, 2), Vec::<Value>::new());
    assert_eq!(sections(&mut client, &doc), ["Fetch", "Write"]);

    // Deleting the closing line while editing opens it again; typing it back closes it.
    client.change(
        &doc,
        3,
        json!([{ "range": range(12, 0, 13, 0), "text": "" }]),
    );
    let reopened = client.diagnostics(&doc, 3);
    assert_eq!(reopened.len(), 1, "{reopened:#?}");
    assert_eq!(reopened[0]["range"], range(10, 0, 10, 6));
    client.change(
        &doc,
        4,
        json!([{ "range": range(12, 0, 12, 0), "text": "``" }]),
    );
    assert_eq!(client.diagnostics(&doc, 4).len(), 1);
    client.change(
        &doc,
        5,
        json!([{ "range": range(12, 2, 12, 2), "text": "`\n" }]),
    );
    assert_eq!(client.diagnostics(&doc, 5), Vec::<Value>::new());
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_lua_block_never_closed_at_the_end_of_the_file_is_closed_there() {
    let scratch = workspace("unclosed-end", "");
    let doc = file_uri(&scratch, "p.md");
    // No line ending after the code: the fix adds one before the fence.
    let text = prompt("", "\n```lua shared \nfunction f() end");
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(
        diagnostics[0]["message"],
        "the lua block opened at line 9 is never closed"
    );
    assert_eq!(diagnostics[0]["range"], range(8, 0, 8, 14));
    let actions = code_actions(&mut client, &doc, range(8, 0, 8, 14));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(actions[0]["title"], "Close the block with ``` at line 11");
    assert_eq!(
        only_edit(&actions[0], &doc),
        (range(9, 16, 9, 16), "\n```".to_owned())
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_heading_without_a_title_is_marked_on_its_line_and_named_by_its_marks() {
    let scratch = workspace("untitled", "");
    let doc = file_uri(&scratch, "p.md");
    let text = prompt("", "\n## \n\n### Child\n\n##\t\n");
    let mut client = start();
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let ranges: Vec<(&Value, &Value)> = diagnostics
        .iter()
        .map(|d| (&d["message"], &d["range"]))
        .collect();
    let untitled = json!("a heading needs a title");
    assert_eq!(
        ranges,
        [
            (&untitled, &range(8, 0, 8, 3)),
            (&untitled, &range(12, 0, 12, 3)),
        ]
    );
    assert!(with_code(&diagnostics, "Structure").len() == 2);
    // The outline still shows them, named by their marks (an empty name is
    // refused by clients).
    assert_eq!(sections(&mut client, &doc), ["##", "##"]);
    let outline = symbols(&mut client, &doc);
    let title = &outline[1];
    assert_eq!(title["children"][0]["children"][0]["name"], "Child");
    // A lone `#` as the only H1 is still the title.
    let only = file_uri(&scratch, "q.md");
    let text = "---\nname: q\ndescription: d\npromptforge: 0\n---\n\n#\n\n## A\n";
    client.open(&only, 1, text);
    let diagnostics = client.diagnostics(&only, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["message"], "a heading needs a title");
    assert_eq!(diagnostics[0]["range"], range(6, 0, 6, 1));
    let outline = symbols(&mut client, &only);
    assert_eq!(outline[1]["name"], "#");
    assert_eq!(outline[1]["children"][0]["name"], "A");
    assert_eq!(client.shutdown(), Some(0));
}
