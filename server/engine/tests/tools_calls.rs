//! Tools chapter, "Counting calls": tools.calls and the run's calls per alias.

use promptforge_engine::testing::*;

fn web(turns: &str) -> TestHost {
    TestHost::new(
        turns,
        "acme/web",
        vec![
            TestTool::new("acme/web/search"),
            TestTool::new("acme/web/fetch").fails("timed out"),
            TestTool::new("acme/web/other"),
        ],
    )
}

fn slots() -> String {
    web_frontmatter(&[
        ("search", "acme/web/search"),
        ("fetch", "acme/web/fetch"),
        ("other", "acme/web/other"),
    ])
}

/// The sourced-answer example: "here fetch reads 0 when the model only searched".
#[test]
fn sourced_answer_reads_zero_for_a_scoped_alias_the_model_never_called() {
    let code = "models.use('w')\ntools.add({'search', 'fetch'})\nlocal msgs = messages.new():user('Answer with sources: ' .. args)\nmodels.loop(msgs)\nlocal pages = tools.calls and tools.calls.fetch or 0\nif pages == 0 then\n  return 'no sources were read'\nend\nreturn msgs[#msgs].content";
    let h =
        web("- calls:\n    - search: { query: \"rust\" }\n- text: Rust is a systems language.\n");
    let outcome = run_on(
        &prompt(&slots(), &format!("## Answer\n\n{}", lua(code))),
        h.host,
        "rust",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("no sources were read"));
    assert_eq!(outcome.calls, counts(&[("search", 1)]));
    // "covers a model that called no tool at all"
    let h = web("- text: plain answer\n");
    let outcome = run_on(
        &prompt(&slots(), &format!("## Answer\n\n{}", lua(code))),
        h.host,
        "rust",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("no sources were read"));
    assert!(outcome.calls.is_empty());
}

/// "tools.calls appears with the section's first call ... Before that it is nil, so indexing
/// it raises an ordinary Lua error."
#[test]
fn tools_calls_is_nil_before_the_first_call() {
    let code = "local before = tostring(tools.calls)\nlocal ok, e = pcall(function() return tools.calls.search end)\ntools.call('search')\nreturn before .. '|' .. tostring(ok) .. '|' .. tools.calls.search .. '|' .. tools.calls['search'] .. '|' .. tools.calls[search]";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("").host,
        "",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("nil|false|1|1|1"));
}

/// "Every alias in the section's bound scope ... reads 0 until called", "Failed and cancelled
/// calls still count", "A script call to a bound tool outside the section's scope still gets a
/// count", and the counts are live.
#[test]
fn counts_seed_the_scope_and_count_every_attempt() {
    let code = "tools.always('search')\ntools.add('fetch')\nlocal ok = pcall(tools.call, 'fetch')\nlocal a = tools.calls.fetch .. tools.calls.search\npcall(tools.call, 'fetch')\ntools.call('other')\nreturn a .. '|' .. tools.calls.fetch .. tools.calls.search .. tools.calls.other";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("").host,
        "",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("10|201"));
    assert_eq!(outcome.calls, counts(&[("fetch", 2), ("other", 1)]));
}

/// "The scope is picked up at each tool call, so an alias scoped after the section's latest
/// call has no count until the next call".
#[test]
fn an_alias_scoped_after_the_latest_call_has_no_count_until_the_next_call() {
    let code = "tools.call('other')\ntools.add('search')\nlocal ok, e = pcall(function() return tools.calls.search end)\ntools.call('other')\nreturn e .. '|' .. tools.calls.search";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("").host,
        "",
        Some(1),
    );
    assert_eq!(
        result(&outcome).as_deref(),
        Some("tools.calls: \"search\" has no seeded count; seeded aliases: [other] - check for typos or add it via tools.add|0")
    );
}

/// "Every section keeps its own counts, and counts never pass from one section to the next";
/// the run's calls add up every section.
#[test]
fn counts_never_pass_between_sections() {
    let body = format!(
        "## A\n\n{}## B\n\n{}",
        lua("tools.call('other')\ntools.call('other')"),
        lua("local before = tostring(tools.calls)\ntools.call('search')\nlocal ok, e = pcall(function() return tools.calls.other end)\nreturn before .. '|' .. tools.calls.search .. '|' .. tostring(ok)")
    );
    let outcome = run_on(&prompt(&slots(), &body), web("").host, "", Some(1));
    assert_eq!(result(&outcome).as_deref(), Some("nil|1|false"));
    assert_eq!(outcome.calls, counts(&[("other", 2), ("search", 1)]));
}

/// "assigning to it raises tools.calls is read-only".
#[test]
fn tools_calls_is_read_only() {
    for assign in ["tools.calls.search = 5", "tools.calls = {}"] {
        let code = format!("tools.call('search')\n{assign}");
        let outcome = run_on(
            &prompt(&slots(), &format!("## S\n\n{}", lua(&code))),
            web("").host,
            "",
            Some(1),
        );
        assert_eq!(
            error(&outcome),
            ("Lua".into(), "tools.calls is read-only".into()),
            "{assign}"
        );
    }
}

/// The missing-key message and its three endings.
#[test]
fn reading_an_alias_without_a_count_names_the_key_and_the_seeded_aliases() {
    let code = "tools.add('search')\ntools.call('search')\nlocal function read(k)\n  local ok, e = pcall(function() return tools.calls[k] end)\n  return e\nend\nreturn read('fecth') .. '\\n' .. read('fetch')";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("").host,
        "",
        Some(1),
    );
    assert_eq!(
        result(&outcome).as_deref(),
        Some("tools.calls: \"fecth\" has no seeded count; seeded aliases: [search] - check for typos or add it via tools.add\ntools.calls: \"fetch\" has no seeded count; seeded aliases: [search] (alias is a bound tool slot but was neither added to this section's scope nor dispatched by tools.call)")
    );
}

/// "seeded aliases (tools.calls) sorted bytewise" (`language.md` §1.5); "Nothing, for any
/// other key when no alias has a count yet" is the message fn's third case.
#[test]
fn seeded_aliases_are_listed_sorted() {
    let code = "tools.add({'search', 'fetch'})\ntools.add_local('Zed', 'd', {}, function() return 'z' end)\ntools.call('Zed')\nlocal ok, e = pcall(function() return tools.calls.nope end)\nreturn e";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("").host,
        "",
        Some(1),
    );
    assert_eq!(
        result(&outcome).as_deref(),
        Some("tools.calls: \"nope\" has no seeded count; seeded aliases: [Zed, fetch, search] - check for typos or add it via tools.add")
    );
    assert_eq!(
        promptforge_engine::messages::calls_no_seeded_count("x", &[], false),
        "tools.calls: \"x\" has no seeded count; seeded aliases: []"
    );
    assert_eq!(
        promptforge_engine::messages::calls_no_seeded_count("fetch", &[], true),
        "tools.calls: \"fetch\" has no seeded count; seeded aliases: [] (alias is a bound tool slot but was neither added to this section's scope nor dispatched by tools.call)"
    );
}

/// "counting both script calls and model tool calls": model calls (also a failing one) count
/// in the section and in the run's calls.
#[test]
fn model_tool_calls_count_like_script_calls() {
    let turns = "- calls:\n    - search: {}\n    - fetch: {}\n    - search: {}\n- text: done\n";
    let code = "tools.add({'search', 'fetch'})\nmodels.loop(messages.new():user('go'))\ntools.call('search')\nreturn tools.calls.search .. tools.calls.fetch";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web(turns).host,
        "",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("31"));
    assert_eq!(outcome.calls, counts(&[("fetch", 1), ("search", 3)]));
}

/// "A section's first tool call ... a model tool call inside models.loop, is when tools.calls
/// appears" — a model round without calls does not make it appear.
#[test]
fn a_model_round_without_calls_leaves_tools_calls_nil() {
    let code = "tools.add('search')\nmodels.loop(messages.new():user('go'))\nreturn tostring(tools.calls) .. '|' .. sys.model";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("- text: hi\n").host,
        "",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("nil|w"));
}

/// "a local tool's alias gets a count only with its own first call" and "Calls to a local tool
/// count in tools.calls like any other tool call."
#[test]
fn a_local_tool_gets_a_count_with_its_first_call() {
    let code = "tools.add_local('grab', 'Grab', {}, function() return 'ok' end)\ntools.add('search')\ntools.call('other')\nlocal ok = pcall(function() return tools.calls.grab end)\ntools.call('grab')\ntools.call('grab')\nreturn tostring(ok) .. '|' .. tools.calls.grab .. tools.calls.search .. tools.calls.other";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("").host,
        "",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("false|201"));
    assert_eq!(outcome.calls, counts(&[("grab", 2), ("other", 1)]));
}

/// "tools.calls is a read-only, live view of every counted alias": pairs walks the counts.
#[test]
fn pairs_walks_the_counted_aliases() {
    let code = "tools.add('search')\ntools.call('other')\ntools.call('other')\nlocal seen = {}\nfor alias, n in pairs(tools.calls) do seen[#seen + 1] = alias .. '=' .. n end\ntable.sort(seen)\nreturn table.concat(seen, ',')";
    let outcome = run_on(
        &prompt(&slots(), &format!("## S\n\n{}", lua(code))),
        web("").host,
        "",
        Some(1),
    );
    assert_eq!(result(&outcome).as_deref(), Some("other=2,search=0"));
}
