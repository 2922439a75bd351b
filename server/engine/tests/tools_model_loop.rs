//! Tools chapter, "Model tool calls", "Calls outside the scope", "Tool failures" (model
//! side) and `language.md` §4's argument check: the tool loop of models.loop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::models::Role;
use promptforge_engine::run::identity::RunIdentity;
use promptforge_engine::testing::*;
use promptforge_engine::{RunOptions, Store};
use serde_json::json;

fn url_schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]})
}

/// "If the model calls fetch once and then replies, the list holds four records" linked by
/// tool_call_id, with the alias as the tool record's name.
#[test]
fn one_call_then_a_reply_leaves_four_linked_records() {
    let tool = TestTool::new("acme/web/fetch")
        .untrusted()
        .output("<h1>Rust</h1>")
        .schema(url_schema());
    let log = tool.log();
    let h = TestHost::new(
        "- calls:\n    - fetch: { url: \"https://www.rust-lang.org\" }\n- text: Rust is a systems language.\n",
        "acme/web",
        vec![tool],
    );
    let code = "tools.add('fetch')\nlocal msgs = messages.new():user('What is Rust?')\nlocal reply = models.loop(msgs)\nlocal call = msgs[2].tool_calls[1]\nreturn table.concat({ #msgs, reply, msgs[2].role, '[' .. msgs[2].content .. ']', call.id, call.name, call.arguments, msgs[3].role, msgs[3].tool_call_id, msgs[3].name, msgs[4].role, msgs[4].content }, '|') .. '|' .. msgs[3].content";
    let text = prompt(
        &web_frontmatter(&[("fetch", "acme/web/fetch")]),
        &section_body(code),
    );
    let outcome = run_on(&text, h.host, "", Some(1));
    assert_eq!(
        result(&outcome),
        Some(format!(
            "4|Rust is a systems language.|assistant|[]|call_1_1|fetch|{{\"url\":\"https://www.rust-lang.org\"}}|tool|call_1_1|fetch|assistant|Rust is a systems language.|{}",
            envelope(&nonce(), "<h1>Rust</h1>")
        ))
    );
    assert_eq!(
        *log.lock().unwrap(),
        [r#"{"url":"https://www.rust-lang.org"}"#]
    );
    // The second round carries the assistant record and the tool record.
    let requests = h.requests.lock().unwrap();
    let second = &requests[1].messages;
    assert_eq!(second.len(), 3);
    assert_eq!(second[1].role, Role::Assistant);
    assert_eq!(second[1].tool_calls.len(), 1);
    assert_eq!(second[2].role, Role::Tool);
    assert_eq!(second[2].tool_call_id.as_deref(), Some("call_1_1"));
    assert_eq!(second[2].name.as_deref(), Some("fetch"));
}

/// "Every call runs, in the order the model issued them, and each result goes back as its own
/// tool record. The assistant record and all its results land together, in call order" and
/// "Local and bound tools mix in one round".
#[test]
fn every_call_of_a_batch_runs_in_order_and_lands_together() {
    let search = TestTool::new("acme/web/search").output("results");
    let fetch = TestTool::new("acme/web/fetch");
    let (search_log, fetch_log) = (search.log(), fetch.log());
    let h = TestHost::new(
        "- calls:\n    - fetch: { n: 1 }\n    - note: { text: \"a\" }\n    - search: {}\n    - fetch: { n: 2 }\n- text: done\n",
        "acme/web",
        vec![search, fetch],
    );
    let code = "tools.add({'search', 'fetch'})\ntools.add_local('note', 'Note', { text = 'string' }, function(a) return 'noted ' .. a.text end)\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nlocal out = {}\nfor i = 1, #msgs do\n  local m = msgs[i]\n  out[#out + 1] = m.role .. ':' .. (m.name or '') .. ':' .. (m.tool_call_id or '') .. ':' .. m.content\nend\nreturn table.concat(out, '\\n')";
    let fm = web_frontmatter(&[("search", "acme/web/search"), ("fetch", "acme/web/fetch")]);
    let outcome = run_on(&prompt(&fm, &section_body(code)), h.host, "", Some(1));
    // The conversation, one `role:name:tool_call_id:content` record per line.
    insta::assert_snapshot!(
        "batch_records_in_call_order",
        result(&outcome).expect("a result")
    );
    assert_eq!(*fetch_log.lock().unwrap(), [r#"{"n":1}"#, r#"{"n":2}"#]);
    assert_eq!(search_log.lock().unwrap().len(), 1);
}

/// "The model loop always adds tool results to the conversation as text, whatever the tool's
/// output kind" and "Output from a trusted tool arrives exactly as the tool produced it ... in
/// the model's next round".
#[test]
fn structured_and_trusted_output_go_to_the_model_as_text() {
    let h = TestHost::new(
        "- calls:\n    - form: {}\n- text: done\n",
        "acme/web",
        vec![TestTool::new("acme/web/form")
            .structured()
            .output(r#"{"text":"typed","images":[]}"#)],
    );
    let code = "tools.add('form')\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nreturn msgs[3].content";
    let fm = web_frontmatter(&[("form", "acme/web/form")]);
    assert_eq!(
        result(&run_on(
            &prompt(&fm, &section_body(code)),
            h.host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some(r#"{"text":"typed","images":[]}"#)
    );
}

/// "When a bound tool fails inside models.loop, the run keeps going. The failure becomes that
/// call's tool record, with the tool's failure text wrapped as untrusted whatever its trust
/// marking ... The failed call still counts as answered."
#[test]
fn a_failing_bound_tool_becomes_wrapped_failure_text_and_the_loop_continues() {
    let h = TestHost::new(
        "- calls:\n    - fetch: {}\n- text: sorry\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").fails("timed out")],
    );
    let code = "tools.add('fetch')\nlocal msgs = messages.new():user('go')\nlocal reply = models.loop(msgs)\nreturn reply .. '|' .. tools.calls.fetch .. '|' .. msgs[3].content";
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch")]);
    let outcome = run_on(&prompt(&fm, &section_body(code)), h.host, "", Some(1));
    assert_eq!(
        result(&outcome),
        Some(format!("sorry|1|{}", envelope(&nonce(), "timed out")))
    );
    assert_eq!(outcome.calls.get("fetch"), Some(&1));
}

/// "if any name in the batch is out of scope, the whole round fails before any tool in it runs.
/// The failure is an error value of kind out_of_scope_tool whose name field holds the requested
/// name" and the pcall example.
#[test]
fn an_out_of_scope_name_fails_the_whole_batch_before_anything_runs() {
    let fetch = TestTool::new("acme/web/fetch");
    let log = fetch.log();
    let h = TestHost::new(
        "- calls:\n    - fetch: {}\n    - note: {}\n    - browse: {}\n",
        "acme/web",
        vec![fetch],
    );
    let code = "tools.add('fetch')\nlocal ran = false\ntools.add_local('note', 'd', {}, function() ran = true return 'x' end)\nlocal msgs = messages.new():user('go')\nlocal ok, err = pcall(models.loop, msgs)\nif not ok then\n  if err.kind == 'out_of_scope_tool' then\n    return 'the model asked for ' .. err.name .. ': ' .. tostring(err) .. '|' .. tostring(ran) .. '|' .. #msgs .. '|' .. tostring(tools.calls)\n  end\n  error(err)\nend";
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch")]);
    let outcome = run_on(&prompt(&fm, &section_body(code)), h.host, "", Some(1));
    assert_eq!(
        result(&outcome).as_deref(),
        Some("the model asked for browse: tool \"browse\" is not in this section's scope; in-scope aliases: [fetch, note]|false|1|nil")
    );
    assert!(log.lock().unwrap().is_empty());
    assert!(outcome.calls.is_empty());
}

/// "When the name is a bound tool slot in the run, the message ends with (alias is a bound tool
/// slot but was not added to this section's scope)"; uncaught: run error kind Tool.
#[test]
fn a_bound_alias_left_out_of_scope_gets_the_slot_ending() {
    let h = TestHost::new(
        "- calls:\n    - search: {}\n",
        "acme/web",
        vec![
            TestTool::new("acme/web/fetch"),
            TestTool::new("acme/web/search"),
        ],
    );
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch"), ("search", "acme/web/search")]);
    let code = "tools.always('fetch')\nmodels.loop(messages.new():user('go'))";
    assert_eq!(
        error(&run_on(&prompt(&fm, &section_body(code)), h.host, "", Some(1))),
        (
            "Tool".into(),
            "tool \"search\" is not in this section's scope; in-scope aliases: [fetch] (alias is a bound tool slot but was not added to this section's scope)".into()
        )
    );
}

/// `language.md` §4: "arguments that are not a JSON object, or that violate the tool's schema
/// (a missing required property, a wrong JSON type), never reach the tool; the model receives,
/// wrapped as untrusted, invalid arguments for tool "{alias}": {reason}, and the call still
/// counts."
#[test]
fn arguments_that_break_the_schema_never_reach_the_tool() {
    let tool = TestTool::new("acme/web/fetch").schema(url_schema());
    let log = tool.log();
    let h = TestHost::new(
        "- calls:\n    - fetch: \"not json\"\n    - fetch: [1, 2]\n    - fetch: {}\n    - fetch: { url: 5 }\n    - look: { q: 1 }\n- text: done\n",
        "acme/web",
        vec![tool],
    );
    let code = "tools.add('fetch')\nlocal ran = false\ntools.add_local('look', 'd', { q = 'string' }, function() ran = true return 'x' end)\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nlocal out = {}\nfor i = 3, 7 do out[#out + 1] = msgs[i].content end\nreturn table.concat(out, '\\n') .. '|' .. tools.calls.fetch .. tools.calls.look .. tostring(ran)";
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch")]);
    let outcome = run_on(&prompt(&fm, &section_body(code)), h.host, "", Some(1));
    let n = nonce();
    let lines = [
        envelope(&n, "invalid arguments for tool \"fetch\": the arguments are not valid JSON"),
        envelope(&n, "invalid arguments for tool \"fetch\": the arguments must be a JSON object, got array"),
        envelope(&n, "invalid arguments for tool \"fetch\": missing required property \"url\""),
        envelope(&n, "invalid arguments for tool \"fetch\": property \"url\" must be of type string, got integer"),
        envelope(&n, "invalid arguments for tool \"look\": property \"q\" must be of type string, got integer"),
    ];
    assert_eq!(
        result(&outcome),
        Some(format!("{}|41false", lines.join("\n")))
    );
    assert!(log.lock().unwrap().is_empty());
}

/// `language.md` §4: "Past max_tool_iterations rounds: tool loop reached its round cap of {n}
/// rounds without a final reply (kind tool)"; uncaught it ends the run with kind Tool.
#[test]
fn the_round_cap_ends_a_loop_that_never_replies() {
    let h = TestHost::new(
        "- calls:\n    - fetch: {}\n- calls:\n    - fetch: {}\n- text: too late\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch")],
    );
    let fm = format!(
        "{}max_tool_iterations: 2\n",
        web_frontmatter(&[("fetch", "acme/web/fetch")])
    );
    let code = "tools.add('fetch')\nlocal ok, e = pcall(models.loop, messages.new():user('go'))\nreturn e.kind .. '|' .. tostring(e) .. '|' .. tools.calls.fetch";
    assert_eq!(
        result(&run_on(
            &prompt(&fm, &section_body(code)),
            h.host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some("tool|tool loop reached its round cap of 2 rounds without a final reply|2")
    );
}

/// "Four names belong to tools the Engine itself offers the model ... They take precedence over
/// any alias of the same name": a local tool named task is never offered as an alias, so the
/// model's call to it is out of scope while tasks are not allowed.
#[test]
fn an_engine_tool_name_is_never_offered_as_a_local_alias() {
    let h = TestHost::new("- calls:\n    - task: {}\n", "acme/web", vec![]);
    let code = "tools.add_local('task', 'd', {}, function() return 'local' end)\ntools.add_local('other', 'd', {}, function() return 'o' end)\nlocal ok, e = pcall(models.loop, messages.new():user('go'))\nreturn e.kind .. '|' .. tostring(e)";
    let outcome = run_on(
        &prompt("models:\n  w: {}\n", &section_body(code)),
        h.host,
        "",
        Some(1),
    );
    assert_eq!(
        result(&outcome).as_deref(),
        Some("out_of_scope_tool|tool \"task\" is not in this section's scope; in-scope aliases: [other]")
    );
    assert_eq!(TestHost::offered(&h.requests), vec![vec!["other"]]);
}

/// `language.md` §7: cancelling the run stops a hanging model tool call at once; the run ends
/// Cancelled and no pcall catches it.
#[test]
fn cancelling_stops_a_hanging_tool_inside_models_loop() {
    let h = TestHost::new(
        "- calls:\n    - fetch: {}\n- text: never\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").delay(Duration::from_secs(30), true)],
    );
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch")]);
    let code = "tools.add('fetch')\npcall(models.loop, messages.new():user('go'))\nreturn 'caught'";
    let options = RunOptions::default();
    let cancel = options.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = run_with(
        &prompt(&fm, &section_body(code)),
        h.host,
        Arc::new(Store::in_memory()),
        options,
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(error(&outcome).0, "Cancelled");
}

/// "A bound tool ... the model never sees the tool path, and every call still runs the exact
/// tool the path names": calls through an alias reach the right tool, and the handle method
/// form (writer:loop) runs the same loop.
#[test]
fn a_handle_loop_runs_tool_calls_too() {
    let h = TestHost::new(
        "- calls:\n    - getter: { a: 1 }\n- text: done\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch")],
    );
    let fm = web_frontmatter(&[("getter", "acme/web/fetch")]);
    let code = "tools.add('getter')\nlocal msgs = messages.new():user('go')\nw:loop(msgs)\nreturn msgs[3].content";
    assert_eq!(
        result(&run_on(
            &prompt(&fm, &section_body(code)),
            h.host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some("output:{\"a\":1}")
    );
    let requests = h.requests.lock().unwrap();
    assert!(!serde_json::to_string(&requests[0].tools[0].parameters)
        .unwrap()
        .contains("acme/web"));
}

/// The researcher example, as the chapter writes it: "tools.add puts search and fetch in this
/// section's scope, and on every round models.loop offers the model every tool in scope".
#[test]
fn researcher_example_runs_as_written() {
    let text = "---\nname: researcher\ndescription: Answers a question from web sources\npromptforge: 0\nplugins:\n  - promptforge/web\ntools:\n  search: promptforge/web/search\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n---\n\n# Researcher\n\n## Research\n\n```lua\nmodels.use('writer')\ntools.add({'search', 'fetch'})\nlocal msgs = messages.new():user('Answer from web sources: ' .. args)\nmodels.loop(msgs)\nreturn msgs[#msgs].content\n```\n";
    let h = TestHost::new(
        "- calls:\n    - search: { query: \"rust\" }\n    - fetch: { url: \"https://www.rust-lang.org\" }\n- text: Rust is a systems language.\n",
        "promptforge/web",
        vec![
            TestTool::new("promptforge/web/search")
                .untrusted()
                .output("1. https://www.rust-lang.org"),
            TestTool::new("promptforge/web/fetch")
                .untrusted()
                .output("<h1>Rust</h1>"),
        ],
    );
    let outcome = run_on(text, h.host, "What is Rust?", Some(7));
    assert_eq!(
        result(&outcome).as_deref(),
        Some("Rust is a systems language.")
    );
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec!["search", "fetch"], vec!["search", "fetch"]]
    );
    assert_eq!(outcome.rounds, 2);
    assert_eq!(outcome.calls.get("search"), Some(&1));
    assert_eq!(outcome.calls.get("fetch"), Some(&1));
    let requests = h.requests.lock().unwrap();
    let nonce = RunIdentity::new(Some(7)).unwrap().nonce;
    assert_eq!(
        requests[1].messages[3].content,
        envelope(&nonce, "<h1>Rust</h1>")
    );
}
