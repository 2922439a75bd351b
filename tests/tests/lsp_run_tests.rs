//! Running from the editor, part two (`editor.md` §2): a failed run's diagnostic
//! in place until the next edit, test-file runs (`caseFinished`, failures on the
//! cases' lines), test files' own diagnostics, the code lenses and their commands,
//! and the commands the server advertises.

mod lsp_run_support;

use lsp_run_support::*;
use promptforge_tests::lsp_client::{file_uri, LspClient};
use serde_json::{json, Value};

#[test]
fn a_failing_lua_line_gets_a_diagnostic_until_the_next_edit() {
    let scratch = workspace("lsp-run-failure", CONFIG);
    let text = prompt("", "log('before')\nerror('boom')");
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    assert!(client.diagnostics(&uri, 1).is_empty());
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let all = events(&mut client, &run_id);
    let failed = all.last().cloned().unwrap_or_default();
    assert_eq!(failed["kind"], "Lua", "{failed}");
    // `error('boom')` is line 12 (0-based) of the prompt.
    assert_eq!(failed["range"]["start"]["line"], 12, "{failed}");
    let shown = client.diagnostics_where(&uri, |d| !d.is_empty());
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["source"], "promptforge run");
    assert_eq!(shown[0]["code"], "Lua");
    assert_eq!(shown[0]["message"], failed["message"]);
    assert_eq!(
        shown[0]["range"]["start"],
        json!({ "line": 12, "character": 0 })
    );
    assert_eq!(
        shown[0]["range"]["end"],
        json!({ "line": 12, "character": 13 })
    );

    client.change(&uri, 2, json!([{ "text": text.replace("boom", "bang") }]));
    assert!(client.diagnostics(&uri, 2).is_empty());

    // A tool error raised by a call on a line (the static check saw it coming):
    // shown there too, beside the document's own diagnostics.
    let calling = text.replace("error('boom')", "tools.call('nope')");
    client.change(&uri, 3, json!([{ "text": calling }]));
    let own = client.diagnostics(&uri, 3);
    let run_id = start_run(&mut client, "promptforge.run", json!({ "uri": uri }));
    let failed = events(&mut client, &run_id).pop().unwrap_or_default();
    assert_eq!(failed["kind"], "Tool", "{failed}");
    let shown = client.diagnostics_where(&uri, |d| d.len() > own.len());
    assert_eq!(&shown[..own.len()], &own[..]);
    let ran = &shown[own.len()];
    assert_eq!(
        (&ran["source"], &ran["code"]),
        (&json!("promptforge run"), &json!("Tool"))
    );
    assert_eq!(ran["range"]["start"], json!({ "line": 12, "character": 0 }));
}

const TESTED: &str = "cases:\n  - name: greets\n    args: \"world\"\n    model:\n      - text: \"hi world\"\n    expect:\n      result: \"hi world\"\n  - name: fails on purpose\n    model:\n      - text: \"nope\"\n    expect:\n      result: \"something else\"\n";

#[test]
fn a_test_file_run_reports_each_case_and_its_failures_in_place() {
    let scratch = workspace("lsp-run-tests", CONFIG);
    let text = prompt(
        "models:\n  w: {}\n",
        "local m = messages.new():user(args)\nmodels.loop(m)\nreturn m[#m].content",
    );
    scratch.write("p.md", &text);
    scratch.write("p.test.yaml", TESTED);
    let (uri, tests) = (
        file_uri(&scratch, "p.md"),
        file_uri(&scratch, "p.test.yaml"),
    );
    let mut client = start(&scratch, json!({}));
    client.open(&tests, 1, TESTED);
    assert!(client.diagnostics(&tests, 1).is_empty());

    let run_id = start_run(&mut client, "promptforge.test", json!({ "uri": tests }));
    let all = events(&mut client, &run_id);
    assert_eq!(
        types(&all),
        ["caseFinished", "caseFinished", "finished"],
        "{all:?}"
    );
    assert_eq!(
        (&all[0]["name"], &all[0]["ok"], &all[0]["failures"]),
        (&json!("greets"), &json!(true), &json!([]))
    );
    assert_eq!(all[1]["name"], "fails on purpose");
    assert_eq!(all[1]["ok"], false);
    assert_eq!(
        all[1]["failures"],
        json!(["expect.result: the result differs\n  expected: \"something else\"\n  actual:   \"nope\""])
    );
    assert_eq!(all[2]["result"], "1 passed, 1 failed");
    let shown = client.diagnostics_where(&tests, |d| !d.is_empty());
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["source"], "promptforge test");
    assert_eq!(shown[0]["code"], "CaseFailed");
    assert_eq!(shown[0]["range"]["start"]["line"], 7);
    assert_eq!(shown[0]["message"], all[1]["failures"][0]);

    // One case, from the prompt's URI: only that case runs.
    let run_id = start_run(
        &mut client,
        "promptforge.test",
        json!({ "uri": uri, "case": "greets" }),
    );
    let all = events(&mut client, &run_id);
    assert_eq!(types(&all), ["caseFinished", "finished"], "{all:?}");
    assert_eq!(all[1]["result"], "1 passed, 0 failed");
    let run_id = start_run(
        &mut client,
        "promptforge.test",
        json!({ "uri": tests, "case": "absent" }),
    );
    let all = events(&mut client, &run_id);
    assert_eq!(
        all.last().map(|e| e["kind"].clone()),
        Some(json!("NoSuchCase")),
        "{all:?}"
    );

    // An edit of the test file drops the failure.
    client.change(
        &tests,
        2,
        json!([{ "text": TESTED.replace("nope", "something else") }]),
    );
    assert!(client.diagnostics(&tests, 2).is_empty());
}

#[test]
fn test_files_get_their_own_diagnostics() {
    let scratch = workspace("lsp-run-test-file", CONFIG);
    let tests = file_uri(&scratch, "gone.test.yaml");
    let mut client = start(&scratch, json!({}));
    client.open(&tests, 1, "cases:\n  - args: x\n");
    let shown = client.diagnostics(&tests, 1);
    let codes: Vec<&str> = shown.iter().filter_map(|d| d["code"].as_str()).collect();
    assert!(
        !codes.is_empty() && codes.iter().all(|c| *c == "TestFile"),
        "{shown:?}"
    );
    assert!(
        shown
            .iter()
            .any(|d| d["message"].as_str().unwrap_or("").contains("no such file")),
        "{shown:?}"
    );
}

#[test]
fn code_lenses_carry_their_commands() {
    let scratch = workspace("lsp-run-lenses", CONFIG);
    let text = prompt(
        "models:\n  w: {}\n",
        "local m = messages.new():user(args)\nmodels.loop(m)\nreturn m[#m].content",
    );
    scratch.write("p.md", &text);
    scratch.write("p.test.yaml", TESTED);
    scratch.write("q.md", &text);
    let (uri, tests, lone) = (
        file_uri(&scratch, "p.md"),
        file_uri(&scratch, "p.test.yaml"),
        file_uri(&scratch, "q.md"),
    );
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    client.open(&tests, 1, TESTED);
    client.open(&lone, 1, &text);
    let lenses = |client: &mut LspClient, uri: &str| {
        client
            .request(
                "textDocument/codeLens",
                json!({ "textDocument": { "uri": uri } }),
            )
            .expect("codeLens answers")
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let shown = |lenses: &[Value]| -> Vec<(u64, String, String, Value)> {
        lenses
            .iter()
            .map(|l| {
                (
                    l["range"]["start"]["line"].as_u64().unwrap_or(99),
                    l["command"]["title"].as_str().unwrap_or("").to_owned(),
                    l["command"]["command"].as_str().unwrap_or("").to_owned(),
                    l["command"]["arguments"].clone(),
                )
            })
            .collect()
    };
    let on_prompt = lenses(&mut client, &uri);
    assert_eq!(
        shown(&on_prompt),
        [
            (
                8,
                "Run".to_owned(),
                "promptforge.run".to_owned(),
                json!([{ "uri": uri }])
            ),
            (
                8,
                "Debug".to_owned(),
                "promptforge.debug".to_owned(),
                json!([{ "uri": uri }])
            ),
            (
                8,
                "Run with arguments…".to_owned(),
                "promptforge.runWithArguments".to_owned(),
                json!([{ "uri": uri }])
            ),
            (
                8,
                "Run tests".to_owned(),
                "promptforge.test".to_owned(),
                json!([{ "uri": uri }])
            ),
        ]
    );
    assert_eq!(lenses(&mut client, &lone).len(), 3);
    let on_tests = lenses(&mut client, &tests);
    assert_eq!(
        shown(&on_tests),
        [
            (
                0,
                "Run all tests".to_owned(),
                "promptforge.test".to_owned(),
                json!([{ "uri": tests }])
            ),
            (
                1,
                "Run test".to_owned(),
                "promptforge.test".to_owned(),
                json!([{ "uri": tests, "case": "greets" }])
            ),
            (
                7,
                "Run test".to_owned(),
                "promptforge.test".to_owned(),
                json!([{ "uri": tests, "case": "fails on purpose" }])
            ),
        ]
    );
    // The lens's command runs as it is.
    let lens = &on_tests[1]["command"];
    let run_id = start_run(
        &mut client,
        "promptforge.test",
        lens["arguments"][0].clone(),
    );
    let all = events(&mut client, &run_id);
    assert_eq!(
        all.last().map(|e| e["result"].clone()),
        Some(json!("1 passed, 0 failed")),
        "{all:?}"
    );
}

#[test]
fn the_server_advertises_its_commands() {
    let scratch = workspace("lsp-run-capabilities", CONFIG);
    let no_user = scratch.path().join(".no-user-config").display().to_string();
    let mut client = LspClient::start_with_env(&[("XDG_CONFIG_HOME", no_user.as_str())]);
    let result = client.initialize(json!({}));
    assert_eq!(
        result["capabilities"]["executeCommandProvider"]["commands"],
        json!(["promptforge.run", "promptforge.test", "promptforge.cancel"])
    );
    let unknown = execute(&mut client, "promptforge.nothing", json!({}));
    assert_eq!(
        unknown.err().map(|e| e["code"].clone()),
        Some(json!(-32602))
    );
}
