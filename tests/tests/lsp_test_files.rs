//! The language server's features in a prompt test file (`*.test.yaml`) over
//! stdio: key completion at each level, alias and tool path completion, hover on
//! a tool path and an alias, definition from an alias and from `prompt:`, and a
//! `prompt:` that is a pipe refused without opening it.

use promptforge_tests::lsp_client::{
    file_uri, position, prompt, range_of, start, workspace, LspClient, FETCH_DESCRIPTION,
};
use serde_json::{json, Value};

const WEB_SEARCH_CONFIG: &str = "[web]\nsearch_endpoint = \"https://search.invalid/api\"\n";

const TEST_FILE: &str = "prompt: p.md
cases:
  - name: one
    model:
      - calls:
          - fetch: {url: \"https://x.invalid\"}
      - text: done
    tools:
      promptforge/web/fetch:
        - output: page
    expect:
      calls:
        fetch: 1
      result: done
";

fn web_prompt() -> String {
    prompt(
        "plugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\n  find: promptforge/web/search\n",
        "\n## A\n\n```lua\ntools.add_local('mine', 'mine', {}, function() return 'x' end)\nlocal n = tools.call('find', { query = 'x' })\n```\n",
    )
}

/// A server with the prompt `p.md` open (its Plugins activated) and its test
/// file `p.test.yaml` open: the client, the test file's URI and the prompt's.
fn session(label: &str) -> (LspClient, String, String, promptforge_tests::Scratch) {
    let scratch = workspace(label, WEB_SEARCH_CONFIG);
    let prompt_text = web_prompt();
    scratch.write("p.md", &prompt_text);
    scratch.write("p.test.yaml", TEST_FILE);
    let prompt_uri = file_uri(&scratch, "p.md");
    let test_uri = file_uri(&scratch, "p.test.yaml");
    let mut client = start();
    client.open(&prompt_uri, 1, &prompt_text);
    client.diagnostics(&prompt_uri, 1);
    client.open(&test_uri, 1, TEST_FILE);
    client.diagnostics(&test_uri, 1);
    (client, test_uri, prompt_uri, scratch)
}

/// The labels of the completion `chars` characters into the first `needle`.
fn labels(client: &mut LspClient, uri: &str, needle: &str, chars: usize) -> Vec<String> {
    let offset = TEST_FILE.find(needle).unwrap_or(0) + chars;
    let (line, character) = position(TEST_FILE, offset);
    let items = client
        .at("textDocument/completion", uri, line, character)
        .expect("completion answers");
    items
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["label"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The answer of `method` one character into the first `needle`.
fn at(client: &mut LspClient, method: &str, uri: &str, needle: &str) -> Value {
    let offset = TEST_FILE.find(needle).unwrap_or(0) + 1;
    let (line, character) = position(TEST_FILE, offset);
    client
        .at(method, uri, line, character)
        .expect("the request answers")
}

#[test]
fn completion_offers_the_keys_of_each_level() {
    let (mut client, uri, _, _scratch) = session("test-keys");
    assert_eq!(labels(&mut client, &uri, "prompt:", 3), ["prompt", "cases"]);
    let case = labels(&mut client, &uri, "  - name: one", 6);
    assert_eq!(
        case,
        [
            "name", "args", "seed", "store", "model", "tools", "input", "live", "repeat",
            "min_pass", "expect"
        ]
    );
    let expect = labels(&mut client, &uri, "      result: done", 8);
    assert_eq!(
        expect,
        [
            "result",
            "result_contains",
            "result_matches",
            "no_result",
            "error",
            "calls",
            "store",
            "log_contains",
            "rounds",
            "requests",
            "tool_args",
            "judge"
        ]
    );
    assert_eq!(
        labels(&mut client, &uri, "      - text: done", 9),
        ["text", "calls"]
    );
    assert_eq!(
        labels(&mut client, &uri, "        - output: page", 12),
        ["output", "error"]
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn completion_offers_aliases_and_tool_paths() {
    let (mut client, uri, _, _scratch) = session("test-aliases");
    assert_eq!(
        labels(&mut client, &uri, "        fetch: 1", 9),
        ["fetch", "find", "mine"]
    );
    assert_eq!(
        labels(&mut client, &uri, "          - fetch:", 13),
        ["fetch", "find", "mine"]
    );
    assert_eq!(
        labels(&mut client, &uri, "      promptforge/web/fetch:", 10),
        ["promptforge/web/fetch", "promptforge/web/search"]
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn hover_describes_a_tool_path_and_an_alias() {
    let (mut client, uri, _, _scratch) = session("test-hover");
    let tool = at(
        &mut client,
        "textDocument/hover",
        &uri,
        "promptforge/web/fetch:",
    );
    let text = tool["contents"]["value"].as_str().unwrap_or("");
    assert!(text.starts_with(FETCH_DESCRIPTION), "{text}");
    assert!(text.contains("**tool** `promptforge/web/fetch`"), "{text}");
    assert!(
        text.contains("parameters:\n- url: string (required)"),
        "{text}"
    );
    assert_eq!(
        tool["range"],
        range_of(TEST_FILE, "promptforge/web/fetch", 0)
    );
    let alias = at(&mut client, "textDocument/hover", &uri, "fetch: 1");
    let text = alias["contents"]["value"].as_str().unwrap_or("");
    assert!(text.contains("**tool slot** `fetch`"), "{text}");
    assert!(text.contains("tool path `promptforge/web/fetch`"), "{text}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn definition_goes_from_an_alias_and_from_prompt_to_the_prompt() {
    let (mut client, uri, prompt_uri, _scratch) = session("test-definition");
    let prompt_text = web_prompt();
    let from_alias = at(&mut client, "textDocument/definition", &uri, "fetch: 1");
    assert_eq!(
        from_alias,
        json!({ "uri": prompt_uri, "range": range_of(&prompt_text, "fetch", 0) })
    );
    let from_scripted = at(&mut client, "textDocument/definition", &uri, "fetch: {");
    assert_eq!(from_scripted, from_alias);
    let from_prompt = at(&mut client, "textDocument/definition", &uri, "p.md");
    assert_eq!(
        from_prompt,
        json!({ "uri": prompt_uri, "range": {
            "start": { "line": 0, "character": 0 },
            "end": { "line": 0, "character": 0 }
        } })
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// A test file's diagnostics read its prompt's open text: an edit of the prompt
/// that drops the alias the test names publishes the test file again with the
/// unknown-alias warning, and mending the prompt takes the warning away.
#[test]
fn a_test_file_is_published_again_when_its_prompt_changes() {
    let (mut client, test_uri, prompt_uri, _scratch) = session("test-republish");
    let unknown = |diagnostics: &[Value]| {
        diagnostics
            .iter()
            .filter(|d| d["code"] == "UnknownAlias")
            .count()
    };
    let without_fetch = web_prompt().replace("  fetch: promptforge/web/fetch\n", "");
    client.change(&prompt_uri, 2, json!([{ "text": without_fetch }]));
    let warned = client.diagnostics_where(&test_uri, |d| unknown(d) > 0);
    assert_eq!(unknown(&warned), 2, "{warned:?}");
    assert!(warned.iter().all(|d| d["message"]
        == "the prompt neither binds nor registers a tool named \"fetch\"; the engine decides at run time"));
    client.change(&prompt_uri, 3, json!([{ "text": web_prompt() }]));
    let mended = client.diagnostics_where(&test_uri, |d| unknown(d) == 0);
    assert!(mended.is_empty(), "{mended:?}");
    assert_eq!(client.shutdown(), Some(0));
}

/// The prompt a test file names is read from its text once per version: when an
/// edit points it at another prompt, that prompt's edits publish it again, with
/// the new prompt's text.
#[test]
fn a_test_file_pointed_at_another_prompt_follows_that_prompt() {
    let (mut client, test_uri, _prompt_uri, scratch) = session("test-repoint");
    let unknown = |diagnostics: &[Value]| {
        diagnostics
            .iter()
            .filter(|d| d["code"] == "UnknownAlias")
            .count()
    };
    scratch.write("q.md", web_prompt());
    let q_uri = file_uri(&scratch, "q.md");
    client.open(&q_uri, 1, &web_prompt());
    client.diagnostics(&q_uri, 1);
    let pointed = TEST_FILE.replace("prompt: p.md", "prompt: q.md");
    client.change(&test_uri, 2, json!([{ "text": pointed }]));
    assert_eq!(unknown(&client.diagnostics(&test_uri, 2)), 0);
    let without_fetch = web_prompt().replace("  fetch: promptforge/web/fetch\n", "");
    client.change(&q_uri, 2, json!([{ "text": without_fetch }]));
    let warned = client.diagnostics_where(&test_uri, |d| unknown(d) > 0);
    assert_eq!(unknown(&warned), 2, "{warned:?}");
    assert_eq!(client.shutdown(), Some(0));
}

/// A test file whose `prompt:` names a pipe, or the server's own stdin: the server
/// refuses it without opening it (opening a pipe waits for a writer; reading
/// `/dev/stdin` would eat the client's messages), says why at the value, and goes
/// on answering.
#[test]
#[cfg(unix)]
fn a_prompt_that_is_a_pipe_is_refused_and_the_server_goes_on() {
    let scratch = workspace("test-pipe", "");
    let pipe = scratch.path().join("pipe.md");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo makes a pipe");
    let uri = file_uri(&scratch, "p.test.yaml");
    let mut client = start();
    let versions = [
        (1, "/dev/stdin".to_owned()),
        (2, pipe.display().to_string()),
    ];
    for (version, prompt) in versions {
        let text = format!("prompt: {prompt}\ncases:\n  - name: a\n");
        if version == 1 {
            client.open(&uri, version, &text);
        } else {
            client.change(&uri, version, json!([{ "text": text }]));
        }
        let diagnostics = client.diagnostics(&uri, version);
        let shown: Vec<(&Value, &Value)> = diagnostics
            .iter()
            .map(|d| (&d["message"], &d["range"]))
            .collect();
        assert_eq!(
            shown,
            [(
                &json!(format!(
                    "the prompt {prompt} cannot be read: not a regular file"
                )),
                &range_of(&text, &prompt, 0)
            )]
        );
    }
    assert_eq!(client.shutdown(), Some(0));
}
