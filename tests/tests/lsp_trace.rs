//! The trace of an editor run (issue 27) over stdio on the real binary: the last
//! event carries the trace's id, `promptforge/trace {runId}` gives the trace with
//! its sections, model rounds (the exact request) and tool calls, and a run the
//! server keeps no trace of gets a clear error.

mod lsp_run_support;

use lsp_run_support::*;
use promptforge_tests::lsp_client::file_uri;
use serde_json::json;

#[test]
fn a_run_s_trace_is_kept_and_given_by_run_id() {
    let scratch = workspace("lsp-trace", CONFIG);
    let lua = "log('asking')\ntools.add_local('grab', 'Grab things', {}, function() return 'x' end)\ntools.call('grab')\nlocal m = messages.new():user('hi ' .. args)\nmodels.loop(m)\nreturn m[#m].content";
    let text = prompt("models:\n  w: {}\n", lua);
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let run_id = start_run(
        &mut client,
        "promptforge.run",
        json!({ "uri": uri, "args": "world", "seed": 3 }),
    );
    let all = events(&mut client, &run_id);
    let finished = all.last().cloned().unwrap_or_default();
    assert_eq!(finished["type"], "finished", "{all:?}");
    let trace_id = finished["traceId"]
        .as_str()
        .expect("the trace's id")
        .to_owned();
    assert!(
        trace_id.starts_with("run-") && trace_id.len() == 20,
        "{trace_id}"
    );

    let trace = client
        .request("promptforge/trace", json!({ "runId": run_id }))
        .expect("the trace");
    assert_eq!(trace["runId"], trace_id);
    let spans = trace["spans"].as_array().expect("spans");
    let kinds: Vec<&str> = spans
        .iter()
        .map(|s| s["kind"]["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        kinds,
        ["run", "section", "section", "toolCall", "round"],
        "{trace}"
    );
    let section = &spans[2];
    assert_eq!(section["kind"]["heading"], "Go");
    assert!(section["line"].is_u64(), "{section}");
    assert_eq!(
        section["events"][0]["kind"],
        json!({ "type": "log", "line": "asking" })
    );
    let call = &spans[3];
    assert_eq!(call["parent"], section["id"]);
    assert_eq!(call["kind"]["alias"], "grab");
    assert_eq!(call["kind"]["caller"], "script");
    assert_eq!(call["kind"]["output"], "x");
    let round = &spans[4]["kind"];
    assert_eq!(round["label"], "w");
    assert_eq!(round["provider"], "echo");
    assert_eq!(
        round["request"]["messages"],
        json!([{ "role": "user", "content": "hi world" }])
    );
    assert_eq!(round["request"]["tools"][0]["name"], "grab");
    assert_eq!(round["request"]["tools"][0]["description"], "Grab things");
    assert_eq!(round["reply"]["content"], "hi world");

    let missing = client
        .request("promptforge/trace", json!({ "runId": "run-99" }))
        .expect_err("no such run");
    assert_eq!(missing["code"], -32602, "{missing}");
    assert_eq!(
        missing["message"],
        "no trace of run-99: the server keeps the traces of the last 20 prompt runs and failed test cases of this session"
    );
}

#[test]
fn an_offline_run_answers_every_label_with_echo_and_shows_the_requests() {
    // The label's Host model would call a server that is not there.
    let config = format!(
        "{CONFIG}\n[model.remote]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nretries = 0\n"
    );
    let scratch = workspace("lsp-trace-offline", &config);
    let lua = "local m = messages.new():system('Be brief.'):user('hi')\nreturn models.infer(m)";
    let text = prompt("models:\n  w: { model: remote }\n", lua);
    scratch.write("p.md", &text);
    let uri = file_uri(&scratch, "p.md");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, &text);
    let run_id = start_run(
        &mut client,
        "promptforge.run",
        json!({ "uri": uri, "offline": true }),
    );
    let all = events(&mut client, &run_id);
    let finished = all.last().cloned().unwrap_or_default();
    assert_eq!(finished["type"], "finished", "{all:?}");
    assert_eq!(finished["result"], "hi");
    let trace = client
        .request("promptforge/trace", json!({ "runId": run_id }))
        .expect("the trace");
    let round = trace["spans"]
        .as_array()
        .and_then(|spans| spans.iter().find(|s| s["kind"]["type"] == "round"))
        .cloned()
        .expect("a round");
    assert_eq!(round["kind"]["provider"], "echo");
    assert_eq!(
        round["kind"]["request"]["messages"],
        json!([{ "role": "system", "content": "Be brief." }, { "role": "user", "content": "hi" }])
    );
    let bad = execute(
        &mut client,
        "promptforge.run",
        json!({ "uri": uri, "offline": "yes" }),
    );
    assert!(bad.is_err(), "{bad:?}");
}

/// Issue 27, item 6: a test run traces its cases; a failed case's `caseFinished`
/// names the run id its trace is kept under (`RUN.N`), and `promptforge/trace`
/// gives it, with the round the script answered; a passed case names none.
#[test]
fn a_failed_test_case_s_trace_is_kept_under_its_own_run_id() {
    let scratch = workspace("lsp-trace-tests", CONFIG);
    let text = prompt(
        "models:\n  w: {}\n",
        "local m = messages.new():user(args)\nmodels.loop(m)\nreturn m[#m].content",
    );
    scratch.write("p.md", &text);
    let tests = "cases:\n  - name: greets\n    args: \"world\"\n    model:\n      - text: \"hi world\"\n    expect:\n      result: \"hi world\"\n  - name: fails on purpose\n    args: \"you\"\n    model:\n      - text: \"nope\"\n    expect:\n      result: \"something else\"\n";
    scratch.write("p.test.yaml", tests);
    let uri = file_uri(&scratch, "p.test.yaml");
    let mut client = start(&scratch, json!({}));
    client.open(&uri, 1, tests);
    let run_id = start_run(&mut client, "promptforge.test", json!({ "uri": uri }));
    let all = events(&mut client, &run_id);
    assert_eq!(all[0]["ok"], true, "{all:?}");
    assert!(all[0].get("traceRunId").is_none(), "{all:?}");
    assert_eq!(all[1]["ok"], false, "{all:?}");
    let case_run = format!("{run_id}.2");
    assert_eq!(all[1]["traceRunId"], case_run.as_str(), "{all:?}");
    assert_eq!(
        all[1]["promptUri"],
        file_uri(&scratch, "p.md").as_str(),
        "{all:?}"
    );

    let trace = client
        .request("promptforge/trace", json!({ "runId": case_run }))
        .expect("the failed case's trace");
    let spans = trace["spans"].as_array().expect("spans");
    let round = spans
        .iter()
        .find(|s| s["kind"]["type"] == "round")
        .expect("a model round");
    assert_eq!(
        round["kind"]["request"]["messages"],
        json!([{ "role": "user", "content": "you" }])
    );
    assert_eq!(round["kind"]["reply"]["content"], "nope");
    let passed = client.request(
        "promptforge/trace",
        json!({ "runId": format!("{run_id}.1") }),
    );
    assert!(passed.is_err(), "{passed:?}");
}
