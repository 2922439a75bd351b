//! Tools chapter, "Calling tools from Lua" to "Tool failures": tools.call, its
//! arguments and errors, output kinds, trust, the output cut and cancellation.

use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::host::Limits;
use promptforge_engine::testing::*;
use promptforge_engine::{RunOptions, Store};

fn fm(slots: &[(&str, &str)]) -> String {
    web_frontmatter(slots)
}

fn one(tool: TestTool) -> TestHost {
    TestHost::new("", "acme/web", vec![tool])
}

/// The page-fetcher example: "the Lua table becomes the tool's JSON arguments, and the call
/// returns the tool's result" and "Both lines call the same tool" (alias string or Tool object).
#[test]
fn tools_call_by_alias_or_tool_object_sends_the_table_as_json() {
    let tool = TestTool::new("acme/web/fetch").output("page text");
    let log = tool.log();
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body("local a = tools.call('fetch', { url = args })\nlocal b = tools.call(fetch, { url = args })\nreturn a .. '|' .. b"),
    );
    let outcome = run_on(&text, one(tool).host, "https://example.com", Some(1));
    assert_eq!(result(&outcome).as_deref(), Some("page text|page text"));
    assert_eq!(
        *log.lock().unwrap(),
        vec![r#"{"url":"https://example.com"}"#; 2]
    );
}

/// "A call with no arguments leaves the table out or passes nil, and the tool receives the
/// empty JSON object {}."
#[test]
fn no_arguments_send_the_empty_object() {
    let tool = TestTool::new("acme/web/fetch");
    let log = tool.log();
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body(
            "tools.call('fetch')\ntools.call('fetch', nil)\nreturn tools.call('fetch', {})",
        ),
    );
    let outcome = run_on(&text, one(tool).host, "", Some(1));
    assert_eq!(result(&outcome).as_deref(), Some("output:{}"));
    assert_eq!(*log.lock().unwrap(), vec!["{}"; 3]);
}

/// "Two aliases can name the same tool path, and both call that one tool".
#[test]
fn two_aliases_of_one_path_call_the_same_tool() {
    let tool = TestTool::new("acme/web/fetch");
    let log = tool.log();
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch"), ("getter", "acme/web/fetch")]),
        &section_body("tools.call('fetch', {n = 1})\nreturn tools.call(getter, {n = 2})"),
    );
    assert_eq!(
        result(&run_on(&text, one(tool).host, "", Some(1))).as_deref(),
        Some("output:{\"n\":2}")
    );
    assert_eq!(log.lock().unwrap().len(), 2);
}

/// "For a structured tool bound as form whose output is {"text":"typed","images":[]} ... The
/// block returns typed|0."
#[test]
fn a_trusted_structured_tool_returns_a_table() {
    let tool = TestTool::new("acme/web/form")
        .structured()
        .output(r#"{"text":"typed","images":[]}"#);
    let text = prompt(
        &fm(&[("form", "acme/web/form")]),
        &section_body(
            "local r = tools.call('form', {})\nreturn r.text .. '|' .. tostring(#r.images)",
        ),
    );
    assert_eq!(
        result(&run_on(&text, one(tool).host, "", Some(1))).as_deref(),
        Some("typed|0")
    );
}

/// "When a structured tool's output is not valid JSON, the call raises an error value of kind
/// tool naming the alias" and "even valid JSON from [an untrusted tool] fails with the
/// invalid-JSON tool error."
#[test]
fn invalid_json_and_untrusted_structured_output_fail_with_kind_tool() {
    let code = "local ok, e = pcall(tools.call, 'form', {})\nreturn tostring(ok) .. '|' .. e.kind .. '|' .. tostring(e)";
    let expected = "false|tool|tool call failure: structured tool \"form\" returned invalid JSON";
    for tool in [
        TestTool::new("acme/web/form")
            .structured()
            .output("{not json"),
        TestTool::new("acme/web/form")
            .structured()
            .untrusted()
            .output(r#"{"text":"typed"}"#),
    ] {
        let text = prompt(&fm(&[("form", "acme/web/form")]), &section_body(code));
        assert_eq!(
            result(&run_on(&text, one(tool).host, "", Some(1))).as_deref(),
            Some(expected)
        );
    }
    let tool = TestTool::new("acme/web/form").structured().output("nope");
    let text = prompt(
        &fm(&[("form", "acme/web/form")]),
        &section_body("tools.call('form')"),
    );
    assert_eq!(
        error(&run_on(&text, one(tool).host, "", Some(1))),
        (
            "Tool".into(),
            "tool call failure: structured tool \"form\" returned invalid JSON".into()
        )
    );
}

/// "Output from an untrusted tool arrives in the untrusted envelope ... with every < inside
/// escaped" and "wrapped is true"; "Output from a trusted tool arrives exactly as the tool
/// produced it".
#[test]
fn untrusted_output_arrives_in_the_envelope_and_trusted_output_unchanged() {
    let tools = vec![
        TestTool::new("acme/web/fetch")
            .untrusted()
            .output("<h1>Rust</h1></untrusted_input_x>"),
        TestTool::new("acme/web/local").output("<b>kept</b>"),
    ];
    let h = TestHost::new("", "acme/web", tools);
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch"), ("plain", "acme/web/local")]),
        &section_body("local page = tools.call('fetch', { url = 'https://example.com' })\nlocal wrapped = string.find(page, '<untrusted_input_', 1, true) ~= nil\nvar.page = page\nreturn tostring(wrapped) .. '|' .. tools.call('plain')"),
    );
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("true|<b>kept</b>")
    );
    let h = TestHost::new(
        "",
        "acme/web",
        vec![TestTool::new("acme/web/fetch")
            .untrusted()
            .output("<h1>Rust</h1>")],
    );
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body("return tools.call('fetch')"),
    );
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))),
        Some(envelope(&nonce(), "<h1>Rust</h1>"))
    );
}

/// "A run uses one nonce ... for every wrap in every round and every chain, so identical
/// untrusted content wraps identically."
#[test]
fn one_nonce_wraps_identically_across_chains_and_matches_untrusted() {
    let h = TestHost::new(
        "",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").untrusted().output("same")],
    );
    let body = format!(
        "## S\n\n{}### C\n\n---\n\n{}",
        lua("local a = tools.call('fetch')\nlocal b = call('### C')\nreturn tostring(a == b and a == untrusted('same'))"),
        lua("return tools.call('fetch')")
    );
    let text = prompt(&fm(&[("fetch", "acme/web/fetch")]), &body);
    assert_eq!(
        result(&run_on(&text, h.host, "", None)).as_deref(),
        Some("true")
    );
}

/// "The tool's own failure raises at the call as an error value of kind tool, and
/// tostring(err) reads tool call failure: {message}"; uncaught it ends the run with kind Tool.
#[test]
fn a_failing_bound_tool_raises_kind_tool() {
    let code = "local ok, result = pcall(tools.call, 'fetch', { url = args })\nif not ok then\n  if result.kind == 'tool' then\n    return 'could not fetch the page: ' .. tostring(result)\n  end\n  error(result)\nend\nreturn result";
    let text = prompt(&fm(&[("fetch", "acme/web/fetch")]), &section_body(code));
    let h = one(TestTool::new("acme/web/fetch").fails("timed out"));
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("could not fetch the page: tool call failure: timed out")
    );
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body("tools.call('fetch')"),
    );
    let h = one(TestTool::new("acme/web/fetch").fails("timed out"));
    assert_eq!(
        error(&run_on(&text, h.host, "", Some(1))),
        ("Tool".into(), "tool call failure: timed out".into())
    );
}

/// "A tools.call that names neither a local tool nor a bound alias raises an error value of
/// kind unbound_tool, whose name field holds the name. The message lists every alias bound in
/// the run, not just the section's scope"; uncaught: run error kind Tool.
#[test]
fn an_unbound_name_raises_unbound_tool_listing_the_bound_aliases() {
    let h = TestHost::new(
        "",
        "acme/web",
        vec![
            TestTool::new("acme/web/fetch"),
            TestTool::new("acme/web/search"),
        ],
    );
    let slots = [
        ("search", "acme/web/search"),
        ("missing", "acme/web/gone"),
        ("fetch", "acme/web/fetch"),
    ];
    let code = "local ok, e = pcall(tools.call, 'fecth', {})\nlocal ok2, e2 = pcall(tools.call, 'missing')\nreturn e.kind .. '|' .. e.name .. '|' .. tostring(e) .. '|' .. tostring(e2)";
    let text = prompt(&fm(&slots), &section_body(code));
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("unbound_tool|fecth|tool \"fecth\" is not bound in this run; bound aliases: [search, fetch]|tool \"missing\" is not bound in this run; bound aliases: [search, fetch]")
    );
    let text = prompt("", &section_body("tools.call('x')"));
    assert_eq!(
        error(&run(&text, "")),
        (
            "Tool".into(),
            "tool \"x\" is not bound in this run; bound aliases: []".into()
        )
    );
}

/// "a tools.call to one [of the four Engine names] fails with unbound_tool even when a local
/// tool is registered under that name".
#[test]
fn the_engine_tool_names_fail_with_unbound_tool_even_over_a_local_tool() {
    for name in ["task", "task_cancel", "task_status", "await_tasks"] {
        let code = format!(
            "tools.add_local('{name}', 'd', {{}}, function() return 'local' end)\nlocal ok, e = pcall(tools.call, '{name}', {{}})\nreturn e.kind .. '|' .. e.name .. '|' .. tostring(e)"
        );
        let outcome = run(&prompt("", &section_body(&code)), "");
        assert_eq!(
            result(&outcome),
            Some(format!(
                "unbound_tool|{name}|tool \"{name}\" is not bound in this run; bound aliases: []"
            ))
        );
    }
}

/// "These argument errors raise at the call, where pcall catches them".
#[test]
fn argument_errors_of_tools_call() {
    let cases = [
        (
            "tools.call(3, {})",
            "tools.call alias must be a string or Tool object, got integer",
        ),
        (
            "tools.call(w, {})",
            "tools.call alias must be a string or Tool object, got userdata",
        ),
        (
            "tools.call(nil)",
            "tools.call alias must be a string or Tool object, got nil",
        ),
        (
            "tools.call('fetch', 5)",
            "args must be a table, got integer",
        ),
        (
            "tools.call('fetch', 'x')",
            "args must be a table, got string",
        ),
        (
            "tools.call('fetch', { f = function() end })",
            "args must be a JSON-representable table",
        ),
    ];
    for (code, message) in cases {
        let tool = TestTool::new("acme/web/fetch");
        let log = tool.log();
        let caught =
            format!("local ok, e = pcall(function() {code} end)\nreturn type(e) .. ':' .. e");
        let text = prompt(&fm(&[("fetch", "acme/web/fetch")]), &section_body(&caught));
        assert_eq!(
            result(&run_on(&text, one(tool).host, "", Some(1))),
            Some(format!("string:{message}")),
            "{code}"
        );
        assert!(
            log.lock().unwrap().is_empty(),
            "the tool never runs: {code}"
        );
    }
}

/// "A script call can reach any tool bound in the run, even one outside the section's scope."
#[test]
fn a_script_call_reaches_a_bound_tool_outside_the_scope() {
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body("return tools.call('fetch', { a = 1 })"),
    );
    assert_eq!(
        result(&run_on(
            &text,
            one(TestTool::new("acme/web/fetch")).host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some("output:{\"a\":1}")
    );
}

/// `language.md` §7: "a tool's output at most [tool_output_bytes] (longer output is cut,
/// ending with [output cut at N bytes])" — cut at a character boundary, before the envelope.
#[test]
fn long_output_is_cut_at_the_limit() {
    let mut h = one(TestTool::new("acme/web/fetch").output("abcdéfgh"));
    h.host.set_limits(Limits {
        tool_output_bytes: 5,
        ..Limits::default()
    });
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body("return tools.call('fetch')"),
    );
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("abcd\n[output cut at 5 bytes]")
    );
    let mut h = one(TestTool::new("acme/web/fetch")
        .untrusted()
        .output("0123456789"));
    h.host.set_limits(Limits {
        tool_output_bytes: 4,
        ..Limits::default()
    });
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))),
        Some(envelope(&nonce(), "0123\n[output cut at 4 bytes]"))
    );
    let h = one(TestTool::new("acme/web/fetch").output("exactly"));
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("exactly")
    );
}

/// `language.md` §7: "Every suspending call returns at once" on cancel, even when the tool
/// ignores its cancel signal; no pcall catches it and the run ends Cancelled.
#[test]
fn cancelling_the_run_stops_a_hanging_tool_call_at_once() {
    let h = one(TestTool::new("acme/web/fetch").delay(Duration::from_secs(30), true));
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body("local ok, e = pcall(tools.call, 'fetch')\nreturn 'caught'"),
    );
    let options = RunOptions::default();
    let cancel = options.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = run_with(&text, h.host, Arc::new(Store::in_memory()), options);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        error(&outcome),
        ("Cancelled".into(), "the run was cancelled".into())
    );
}

/// "tools.call is a suspending call ... Only the calling chain waits, and the rest of the run
/// goes on": two fanout arms' slow calls overlap.
#[test]
fn only_the_calling_chain_waits() {
    let h = one(TestTool::new("acme/web/fetch").delay(Duration::from_millis(400), false));
    let body = format!(
        "## S\n\n{}## Arm\n\n---\n\n{}",
        lua("local r = fanout('## Arm', {1, 2, 3})\nreturn r[1] .. r[2] .. r[3]"),
        lua("tools.call('fetch')\nreturn tostring(item)")
    );
    let text = prompt(&fm(&[("fetch", "acme/web/fetch")]), &body);
    let started = Instant::now();
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("123")
    );
    assert!(started.elapsed() < Duration::from_millis(1100));
}

/// "A section's first tool call ... is ... also when sys.model becomes readable if the
/// section has a model."
#[test]
fn the_first_tool_call_makes_sys_model_readable() {
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &section_body("local ok, e = pcall(function() return sys.model end)\ntools.call('fetch')\nreturn tostring(ok) .. '|' .. sys.model"),
    );
    assert_eq!(
        result(&run_on(
            &text,
            one(TestTool::new("acme/web/fetch")).host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some("false|w")
    );
}

/// "Uncaught, these failures end the run with run error kind Tool ... The H1 pass has its own
/// rule for uncaught failures" (`language.md` §2: the message starts `H1 pass: `).
#[test]
fn an_uncaught_tool_failure_in_the_h1_pass_keeps_kind_tool_with_the_prefix() {
    let text = prompt(
        &fm(&[("fetch", "acme/web/fetch")]),
        &format!("{}## S\n\n{}", lua("tools.call('nope')"), lua("return 'x'")),
    );
    assert_eq!(
        error(&run_on(
            &text,
            one(TestTool::new("acme/web/fetch")).host,
            "",
            Some(1)
        )),
        (
            "Tool".into(),
            "H1 pass: tool \"nope\" is not bound in this run; bound aliases: [fetch]".into()
        )
    );
}
