//! Tools chapter, continued (see `tests/TOOLS_CHAPTER.md`): the sentences about scopes
//! across sections, model rounds, counting calls and handlers that no other suite
//! checked. Each test quotes the sentence it checks and was written from that sentence
//! first.

use std::sync::Arc;
use std::time::{Duration, Instant};

use promptforge_engine::input::ScriptedInput;
use promptforge_engine::testing::*;
use promptforge_engine::{RunOptions, Store};

fn web_pair(turns: &str) -> TestHost {
    TestHost::new(
        turns,
        "acme/web",
        vec![
            TestTool::new("acme/web/search").description("catalog search"),
            TestTool::new("acme/web/fetch").description("catalog fetch"),
        ],
    )
}

fn pair_slots() -> String {
    web_frontmatter(&[("search", "acme/web/search"), ("fetch", "acme/web/fetch")])
}

/// Advertising tools to the model: "tools.always(alias) offers a bound tool in every section of
/// the run. It is usually called from the H1 body ... but it works from any section: it records
/// the alias in one prompt-wide list that every later section sees."
#[test]
fn tools_always_from_a_walked_section_reaches_every_later_section() {
    let h = web_pair("- text: a\n- text: b\n- text: c\n");
    let looped = "models.loop(messages.new():user('go'))";
    let body = format!(
        "## A\n\n{}## B\n\n{}## C\n\n{}",
        lua(looped),
        lua(&format!("tools.always('fetch', 'always fetch')\n{looped}")),
        lua(&format!("{looped}\nreturn 'done'"))
    );
    result(&run_on(&prompt(&pair_slots(), &body), h.host, "", Some(1)));
    let offered: Vec<Vec<(String, String)>> = h
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| {
            r.tools
                .iter()
                .map(|t| (t.name.clone(), t.description.clone()))
                .collect()
        })
        .collect();
    let fetch = ("fetch".to_owned(), "always fetch".to_owned());
    assert_eq!(offered, vec![vec![], vec![fetch.clone()], vec![fetch]]);
}

/// What each round offers: "a tools.add or tools.add_local call reaches the next round" and
/// Local tools: "the tool is offered on the next model call without a separate tools.add."
#[test]
fn a_local_tool_registered_between_loops_reaches_the_next_round() {
    let h = web_pair("- text: a\n- text: b\n");
    let code = "local msgs = messages.new():user('go')\nmodels.loop(msgs)\ntools.add_local('note', 'Note', {}, function() return 'n' end)\nmsgs:user('again')\nmodels.loop(msgs)";
    result(&run_on(
        &prompt(&pair_slots(), &section_body(code)),
        h.host,
        "",
        Some(1),
    ));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![Vec::<String>::new(), vec!["note".to_owned()]]
    );
}

/// Trusted and untrusted output: "A run uses one nonce, 32 hex digits, for every wrap in every
/// round and every chain, so identical untrusted content wraps identically" — across two walked
/// sections and a model tool record of a third round.
#[test]
fn one_nonce_wraps_identically_across_sections_and_model_rounds() {
    let h = TestHost::new(
        "- calls:\n    - fetch: {}\n- calls:\n    - fetch: {}\n- text: done\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").untrusted().output("same")],
    );
    let body = format!(
        "## A\n\n{}## B\n\n{}",
        lua("var.a = tools.call('fetch')"),
        lua("tools.add('fetch')\nlocal b = tools.call('fetch')\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nreturn tostring(var.a == b and b == msgs[3].content and b == msgs[5].content) .. '|' .. b")
    );
    let text = prompt(&web_frontmatter(&[("fetch", "acme/web/fetch")]), &body);
    let out = result(&run_on(&text, h.host, "", Some(1))).unwrap();
    let n = nonce();
    assert_eq!(n.len(), 32);
    assert!(n.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(out, format!("true|{}", envelope(&n, "same")));
    // The model read the same wrap in its later rounds.
    let requests = h.requests.lock().unwrap();
    assert_eq!(requests[2].messages[2].content, envelope(&n, "same"));
    assert_eq!(requests[2].messages[4].content, envelope(&n, "same"));
}

/// Counting calls: "The count goes to the calling section, under the alias the tool is bound
/// to." — two aliases of one path count apart, and a call target's calls count in the target.
#[test]
fn counts_go_to_the_calling_section_under_the_alias_used() {
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let body = format!(
        "## S\n\n{}### C\n\n---\n\n{}",
        lua("tools.call('fetch')\ntools.call(getter)\ntools.call('getter')\nlocal inner = call('### C')\nreturn tools.calls.fetch .. tools.calls.getter .. '|' .. inner"),
        lua("tools.call('fetch')\nreturn tools.calls.fetch .. tostring((pcall(function() return tools.calls.getter end)))")
    );
    let text = prompt(
        &web_frontmatter(&[("fetch", "acme/web/fetch"), ("getter", "acme/web/fetch")]),
        &body,
    );
    let outcome = run_on(&text, h.host, "", Some(1));
    assert_eq!(result(&outcome).as_deref(), Some("12|1false"));
}

/// Calls outside the scope: the pcall example exactly as the chapter writes it, and "err.kind
/// is out_of_scope_tool, err.name is the requested name, and tostring(err) lists the section's
/// in-scope aliases."
#[test]
fn the_out_of_scope_pcall_example_as_written() {
    let example = "local ok, err = pcall(models.loop, msgs)\nif not ok then\n  if err.kind == 'out_of_scope_tool' then\n    return 'the model asked for ' .. err.name .. ': ' .. tostring(err)\n  end\n  error(err)\nend";
    let code = format!("tools.add('fetch')\nlocal msgs = messages.new():user('go')\n{example}");
    let h = web_pair("- calls:\n    - search: {}\n");
    assert_eq!(
        result(&run_on(&prompt(&pair_slots(), &section_body(&code)), h.host, "", Some(1))).as_deref(),
        Some("the model asked for search: tool \"search\" is not in this section's scope; in-scope aliases: [fetch] (alias is a bound tool slot but was not added to this section's scope)")
    );
    // Any other failure is raised again by error(err) and keeps its kind.
    let h = web_pair("- calls:\n    - note: {}\n- text: x\n");
    let code = format!(
        "tools.add_local('note', 'd', {{}}, function() error({{ kind = 'mine' }}) end)\nlocal msgs = messages.new():user('go')\n{example}"
    );
    let outcome = run_on(
        &prompt(&pair_slots(), &section_body(&code)),
        h.host,
        "",
        Some(1),
    );
    assert!(outcome.error.is_some(), "{:?}", outcome.result);
}

/// What a handler can do: "it can use the store and every other suspending call, such as
/// tools.call, models.infer, call, and input.ask, whether the model or a script called the
/// tool."
#[test]
fn a_handler_can_use_models_infer_call_and_input_ask() {
    let mut h = TestHost::new(
        "- calls:\n    - helper: {}\n- text: inner1\n- text: done\n- text: inner2\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").untrusted().output("page")],
    );
    h.host.set_input(Some(Arc::new(ScriptedInput::new([
        "yes1".to_owned(),
        "yes2".to_owned(),
    ]))));
    let code = "tools.add_local('helper', 'Helps', {}, function()\n  local m = models.infer('inner?')\n  local c = call('### C', 'x')\n  local a = input.ask('ok?')\n  store.append('log.md', m .. ';')\n  local f = tools.call('fetch')\n  return m .. ',' .. c .. ',' .. a .. ',' .. tostring(f == untrusted('page'))\nend)\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nlocal by_script = tools.call('helper')\nreturn msgs[3].content .. '|' .. by_script .. '|' .. store.read('log.md')";
    let body = format!(
        "## S\n\n{}### C\n\n---\n\n{}",
        lua(code),
        lua("return 'callee ' .. args")
    );
    let text = prompt(&web_frontmatter(&[("fetch", "acme/web/fetch")]), &body);
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("inner1,callee x,yes1,true|inner2,callee x,yes2,true|inner1;inner2;")
    );
}

/// What a handler can do: "A handler that never returns still stops when the run is
/// cancelled" — also when the model called it inside models.loop, and promptly.
#[test]
fn a_model_called_handler_that_never_returns_stops_on_cancel() {
    let h = TestHost::new(
        "- calls:\n    - spin: {}\n- text: never\n",
        "acme/web",
        vec![],
    );
    let code = "tools.add_local('spin', 'd', {}, function() while true do end end)\npcall(models.loop, messages.new():user('go'))\nreturn 'caught'";
    let text = prompt("models:\n  w: {}\n", &section_body(code));
    let options = RunOptions::default();
    let cancel = options.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = run_with(&text, h.host, Arc::new(Store::in_memory()), options);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        outcome.error.as_ref().map(|e| e.kind.as_str()),
        Some("Cancelled")
    );
}

/// Counting calls: "Every call attempt adds one to its alias's count when the call is made,
/// before the tool runs, whether it comes from a script or the model and whether the tool is
/// local or bound." — a handler reading its own count sees its call already counted.
#[test]
fn a_call_is_counted_before_the_tool_runs() {
    let h = web_pair("- calls:\n    - t: {}\n- text: done\n");
    let code = "tools.add_local('t', 'd', {}, function() return tostring(tools.calls.t) end)\nlocal first = tools.call('t')\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nreturn first .. '|' .. msgs[3].content .. '|' .. tools.calls.t";
    assert_eq!(
        result(&run_on(
            &prompt(&pair_slots(), &section_body(code)),
            h.host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some("1|2|2")
    );
}

/// Calls outside the scope: "When the name is a bound tool slot in the run, the message ends
/// with (alias is a bound tool slot ...). A name that is not bound anywhere gets the same
/// message without that ending." Counting calls: the slot ending is for "a bound alias" only.
/// A declared slot the catalog lacks is not bound ("the slot stays unbound").
#[test]
fn an_unbound_slot_gets_no_bound_slot_ending() {
    let h = TestHost::new(
        "- calls:\n    - gone: {}\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch")],
    );
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch"), ("gone", "acme/web/gone")]);
    let code = "tools.add('fetch')\ntools.call('fetch')\nlocal ok, e = pcall(function() return tools.calls.gone end)\nlocal ok2, e2 = pcall(models.loop, messages.new():user('go'))\nreturn e .. '\\n' .. tostring(e2)";
    assert_eq!(
        result(&run_on(&prompt(&fm, &section_body(code)), h.host, "", Some(1))).as_deref(),
        Some("tools.calls: \"gone\" has no seeded count; seeded aliases: [fetch] - check for typos or add it via tools.add\ntool \"gone\" is not in this section's scope; in-scope aliases: [fetch]")
    );
}

/// Counting calls: "Failed and cancelled calls still count." — a call cancelled with the run
/// is in the run's counts, for a script call and for a model tool call.
#[test]
fn a_cancelled_call_still_counts() {
    for (code, turns) in [
        ("tools.call('fetch')", ""),
        (
            "tools.add('fetch')\nmodels.loop(messages.new():user('go'))",
            "- calls:\n    - fetch: {}\n- text: never\n",
        ),
    ] {
        let h = TestHost::new(
            turns,
            "acme/web",
            vec![TestTool::new("acme/web/fetch").delay(Duration::from_secs(30), false)],
        );
        let text = prompt(
            &web_frontmatter(&[("fetch", "acme/web/fetch")]),
            &section_body(code),
        );
        let options = RunOptions::default();
        let cancel = options.cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            cancel.cancel();
        });
        let outcome = run_with(&text, h.host, Arc::new(Store::in_memory()), options);
        assert_eq!(error(&outcome).0, "Cancelled", "{code}");
        assert_eq!(outcome.calls.get("fetch"), Some(&1), "{code}");
    }
}

/// Advertising tools to the model: tools.always "records the alias in one prompt-wide list
/// that every later section sees" — also when a call target records it, and a call target
/// (a section of the run) sees the list too: "offers a bound tool in every section of the
/// run".
#[test]
fn tools_always_in_a_call_target_reaches_later_sections_and_call_targets_see_the_list() {
    let h = web_pair("- text: a\n- text: b\n- text: c\n");
    let looped = "models.loop(messages.new():user('go'))";
    let body = format!(
        "## A\n\n{}### Setup\n\n---\n\n{}### Look\n\n---\n\n{}## B\n\n{}",
        lua("call('### Setup')\ncall('### Look')"),
        lua("tools.always('search')\nreturn 'set'"),
        lua(looped),
        lua(&format!("{looped}\n{looped}\nreturn 'done'"))
    );
    result(&run_on(&prompt(&pair_slots(), &body), h.host, "", Some(1)));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec!["search"], vec!["search"], vec!["search"]]
    );
}

/// What each round offers: "The scope is rebuilt for each round from the current bound slots
/// and local tools, so the offered tools can change between model calls: a tools.add or
/// tools.add_local call reaches the next round." — also a call a handler makes while
/// models.loop runs.
#[test]
fn a_handler_scoping_a_tool_changes_the_next_round_of_the_same_loop() {
    let h = web_pair("- calls:\n    - widen: {}\n- text: done\n");
    let code = "tools.add_local('widen', 'Widen', {}, function()\n  tools.add('fetch', 'added by the handler')\n  tools.add_local('extra', 'Extra', {}, function() return 'e' end)\n  return 'widened'\nend)\nmodels.loop(messages.new():user('go'))";
    result(&run_on(
        &prompt(&pair_slots(), &section_body(code)),
        h.host,
        "",
        Some(1),
    ));
    let requests = h.requests.lock().unwrap();
    let second: Vec<(String, String)> = requests[1]
        .tools
        .iter()
        .map(|t| (t.name.clone(), t.description.clone()))
        .collect();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        second,
        vec![
            ("fetch".to_owned(), "added by the handler".to_owned()),
            ("widen".to_owned(), "Widen".to_owned()),
            ("extra".to_owned(), "Extra".to_owned()),
        ]
    );
}

/// Advertising tools to the model: "tools.add takes a single alias as a string or as a Tool
/// object" and Description overrides: "tools.add(alias, description) sets it for the current
/// section only" — a Tool object with an override.
#[test]
fn tools_add_takes_a_tool_object_with_an_override() {
    let h = web_pair("- text: a\n");
    let code = "tools.add(fetch, 'my fetch')\nmodels.loop(messages.new():user('go'))";
    result(&run_on(
        &prompt(&pair_slots(), &section_body(code)),
        h.host,
        "",
        Some(1),
    ));
    let requests = h.requests.lock().unwrap();
    assert_eq!(requests[0].tools.len(), 1);
    assert_eq!(requests[0].tools[0].name, "fetch");
    assert_eq!(requests[0].tools[0].description, "my fetch");
}
