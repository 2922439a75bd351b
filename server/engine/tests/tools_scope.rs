//! Tools chapter, "Advertising tools to the model" to "Scope errors": tools.always,
//! tools.add, scope order, description overrides, what each round offers.

use promptforge_engine::testing::*;
use serde_json::json;

fn web(turns: &str) -> TestHost {
    TestHost::new(
        turns,
        "acme/web",
        vec![
            TestTool::new("acme/web/search").description("catalog search"),
            TestTool::new("acme/web/fetch").description("catalog fetch"),
        ],
    )
}

fn slots() -> String {
    web_frontmatter(&[("search", "acme/web/search"), ("fetch", "acme/web/fetch")])
}

fn loop_code() -> &'static str {
    "models.loop(messages.new():user('go'))"
}

/// "With tools.always('search') in effect, tools.add({'fetch', 'search'}) gives the scope search, fetch."
#[test]
fn scope_order_is_always_aliases_first_then_adds_in_first_added_order() {
    let h = web("- text: ok\n");
    let body = format!(
        "{}## S\n\n{}",
        lua("tools.always('search')"),
        lua(&format!(
            "tools.add({{'fetch', 'search'}})\n{}",
            loop_code()
        ))
    );
    let outcome = run_on(&prompt(&slots(), &body), h.host, "", Some(1));
    result(&outcome);
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec!["search", "fetch"]]
    );
}

/// "Adding an alias twice ... creates no duplicate and keeps the order of first addition."
#[test]
fn adding_an_alias_twice_keeps_the_order_of_first_addition() {
    let h = web("- text: ok\n");
    let body = format!(
        "## S\n\n{}",
        lua(&format!(
            "tools.add('fetch')\ntools.add('search')\ntools.add({{'fetch', 'search', 'fetch'}})\n{}",
            loop_code()
        ))
    );
    result(&run_on(&prompt(&slots(), &body), h.host, "", Some(1)));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec!["fetch", "search"]]
    );
}

/// Two-step research example: "Find sources offers search and fetch, and Write offers only search."
#[test]
fn always_reaches_every_section_and_add_only_the_current_one() {
    let h = web("- text: notes\n- text: summary\n");
    let body = format!(
        "{}## Find sources\n\n{}## Write\n\n{}",
        lua("models.default('w')\ntools.always('search')"),
        lua("tools.add('fetch')\nlocal msgs = messages.new():user('Find ' .. args)\nmodels.loop(msgs)\nvar.notes = msgs[#msgs].content"),
        lua("local msgs = messages.new():user('Write ' .. var.notes)\nmodels.loop(msgs)\nreturn msgs[#msgs].content")
    );
    let outcome = run_on(&prompt(&slots(), &body), h.host, "rust", Some(1));
    assert_eq!(result(&outcome).as_deref(), Some("summary"));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec!["search", "fetch"], vec!["search"]]
    );
}

/// "The first models.loop offers no tools, and the second offers fetch." and "its rounds go
/// out with no tool list at all."
#[test]
fn the_scope_is_rebuilt_each_round_and_an_empty_scope_sends_no_tool_list() {
    let h = web("- text: a\n- text: b\n");
    let code = "local msgs = messages.new():user('What does the example.com home page say?')\nmodels.loop(msgs)\ntools.add('fetch')\nmsgs:user('Fetch https://example.com and check your answer.')\nmodels.loop(msgs)";
    let body = format!("## S\n\n{}", lua(code));
    result(&run_on(&prompt(&slots(), &body), h.host, "", Some(1)));
    let requests = h.requests.lock().unwrap();
    assert!(requests[0].tools.is_empty());
    assert_eq!(requests[1].tools.len(), 1);
    assert_eq!(requests[1].tools[0].name, "fetch");
}

/// "the model receives it as plain data: a name, a description, and a JSON Schema" /
/// "The alias is the only name the model sees".
#[test]
fn the_model_sees_the_alias_the_catalog_description_and_the_schema() {
    let schema =
        json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]});
    let h = TestHost::new(
        "- text: ok\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch")
            .description("Fetches one page")
            .schema(schema.clone())],
    );
    let fm = web_frontmatter(&[("getter", "acme/web/fetch")]);
    let body = format!(
        "## S\n\n{}",
        lua(&format!("tools.add(getter)\n{}", loop_code()))
    );
    result(&run_on(&prompt(&fm, &body), h.host, "", Some(1)));
    let requests = h.requests.lock().unwrap();
    let tool = &requests[0].tools[0];
    assert_eq!(
        (tool.name.as_str(), tool.description.as_str()),
        ("getter", "Fetches one page")
    );
    assert_eq!(tool.parameters, schema);
}

/// "a tools.add override wins over a tools.always override, which wins over the tool's catalog
/// description" / ".description keeps showing the catalog text".
#[test]
fn description_precedence_add_over_always_over_catalog() {
    let h = web("- text: a\n- text: b\n- text: c\n");
    let body = format!(
        "{}## One\n\n{}## Two\n\n{}",
        lua("tools.always('search', 'always search')\ntools.always('fetch')"),
        lua(&format!(
            "tools.add('search', 'added search')\n{}\ntools.always('search')\ntools.add('search', 'later search')\n{}",
            loop_code(),
            loop_code()
        )),
        lua(&format!("{}\nreturn search.description", loop_code()))
    );
    let outcome = run_on(&prompt(&slots(), &body), h.host, "", Some(1));
    assert_eq!(result(&outcome).as_deref(), Some("catalog search"));
    let described: Vec<Vec<(String, String)>> = h
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
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        described,
        vec![
            vec![
                pair("search", "added search"),
                pair("fetch", "catalog fetch")
            ],
            vec![
                pair("search", "later search"),
                pair("fetch", "catalog fetch")
            ],
            vec![
                pair("search", "always search"),
                pair("fetch", "catalog fetch")
            ],
        ]
    );
}

/// "a repeat call that passes a description updates it" / "Calling tools.always again for the
/// same alias is harmless and records it once".
#[test]
fn a_repeat_tools_always_records_once_and_updates_the_description() {
    let h = web("- text: a\n");
    let body = format!(
        "{}## S\n\n{}",
        lua("tools.always('fetch', 'first')\ntools.always('search')\ntools.always('fetch')\ntools.always('fetch', 'second')"),
        lua(loop_code())
    );
    result(&run_on(&prompt(&slots(), &body), h.host, "", Some(1)));
    let requests = h.requests.lock().unwrap();
    let tools: Vec<(&str, &str)> = requests[0]
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert_eq!(tools, [("fetch", "second"), ("search", "catalog search")]);
}

/// "tools.add takes a single alias as a string or as a Tool object ... an array of alias
/// strings, Tool objects, or a mix" and "tools.add() with no arguments, or with an empty
/// array, does nothing."
#[test]
fn tools_add_forms_and_the_empty_forms() {
    let h = web("- text: a\n- text: b\n");
    let body = format!(
        "## S\n\n{}",
        lua(&format!(
            "tools.add()\ntools.add({{}})\n{}\ntools.add({{'search', fetch}})\n{}",
            loop_code(),
            loop_code()
        ))
    );
    result(&run_on(&prompt(&slots(), &body), h.host, "", Some(1)));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec![], vec!["search", "fetch"]]
    );
}

/// "tools.add is all-or-nothing ... After a caught error nothing was recorded and the tool's
/// description is unchanged, and a later valid tools.add still takes effect."
#[test]
fn tools_add_is_all_or_nothing() {
    let h = web("- text: a\n- text: b\n");
    let code = format!(
        "local ok, e = pcall(tools.add, {{'fetch', 'nope'}})\nlocal ok2, e2 = pcall(tools.add, 'search', 5)\n{}\ntools.add('search')\n{}\nreturn e .. '|' .. e2",
        loop_code(),
        loop_code()
    );
    let body = format!("## S\n\n{}", lua(&code));
    let outcome = run_on(&prompt(&slots(), &body), h.host, "", Some(1));
    assert_eq!(
        result(&outcome).as_deref(),
        Some("tools.add alias \"nope\" is not a bound tool slot|tools.add override must be a string, got integer")
    );
    let requests = h.requests.lock().unwrap();
    assert!(requests[0].tools.is_empty());
    assert_eq!(requests[1].tools[0].name, "search");
    assert_eq!(requests[1].tools[0].description, "catalog search");
}

/// "Scope errors": every message, byte for byte, raised as plain errors.
#[test]
fn scope_error_messages() {
    let cases = [
        (
            "tools.always('9lives')",
            "invalid alias \"9lives\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        ),
        (
            "tools.add('my tool')",
            "invalid alias \"my tool\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        ),
        (
            "tools.add({'fetch', 'bad alias'})",
            "invalid alias \"bad alias\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        ),
        (
            "tools.add_local('-x', 'd', {}, function() end)",
            "invalid alias \"-x\": expected [A-Za-z][A-Za-z0-9_-]{0,63}",
        ),
        (
            "tools.always('nope')",
            "tools.always alias \"nope\" is not a bound tool slot",
        ),
        (
            "tools.add('nope')",
            "tools.add alias \"nope\" is not a bound tool slot",
        ),
        (
            "tools.add('fetch', 5)",
            "tools.add override must be a string, got integer",
        ),
        (
            "tools.add('fetch', 'd', 3)",
            "tools.add takes one alias plus an optional override, got extra integer",
        ),
        (
            "tools.add(3)",
            "tools.add expects strings, Tool objects, or arrays of either, got integer",
        ),
        (
            "tools.add({'fetch', true})",
            "tools.add expects strings, Tool objects, or arrays of either, got boolean",
        ),
        (
            "tools.add(w)",
            "tools.add expects strings, Tool objects, or arrays of either, got userdata",
        ),
        (
            "tools.add({'fetch'}, 'd')",
            "tools.add array form takes no override",
        ),
        // The spec leaves these texts open.
        (
            "tools.always(fetch)",
            "tools.always expects an alias string, got userdata",
        ),
        (
            "tools.always('fetch', {})",
            "tools.always override must be a string, got table",
        ),
        (
            "tools.always('fetch', 'd', 1)",
            "tools.always takes one alias plus an optional override, got extra integer",
        ),
    ];
    for (code, message) in cases {
        let body = format!("## S\n\n{}", lua(code));
        let outcome = run_on(&prompt(&slots(), &body), web("").host, "", Some(1));
        assert_eq!(error(&outcome), ("Lua".into(), message.into()), "{code}");
        let caught = format!(
            "## S\n\n{}",
            lua(&format!(
                "local ok, e = pcall(function() {code} end)\nreturn type(e) .. ':' .. e"
            ))
        );
        let outcome = run_on(&prompt(&slots(), &caught), web("").host, "", Some(1));
        assert_eq!(
            result(&outcome),
            Some(format!("string:{message}")),
            "{code}"
        );
    }
}

/// "when its Plugin contributed tools but not the one the path names, the slot stays unbound
/// without a report. Offering or calling that alias then fails at run time ... such as
/// tools.add alias "search" is not a bound tool slot."
#[test]
fn a_slot_the_catalog_lacks_is_not_bound() {
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let body = format!("## S\n\n{}", lua("tools.add('search')"));
    let outcome = run_on(&prompt(&slots(), &body), h.host, "", Some(1));
    assert_eq!(
        error(&outcome),
        (
            "Lua".into(),
            "tools.add alias \"search\" is not a bound tool slot".into()
        )
    );
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let body = format!("## S\n\n{}", lua("tools.always('search')"));
    assert_eq!(
        error(&run_on(&prompt(&slots(), &body), h.host, "", Some(1))).1,
        "tools.always alias \"search\" is not a bound tool slot"
    );
}

/// "A Harness tool whose parameter schema is not a JSON object fails the run when a section
/// offers it, with run error kind Binding and a message naming the alias."
#[test]
fn a_schema_that_is_not_an_object_fails_the_run_with_binding() {
    let h = TestHost::new(
        "- text: ok\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").schema(json!(["not", "an", "object"]))],
    );
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch")]);
    let body = format!(
        "## S\n\n{}",
        lua("tools.add('fetch')\nlocal ok, e = pcall(models.loop, messages.new():user('go'))\nreturn 'caught'")
    );
    let outcome = run_on(&prompt(&fm, &body), h.host, "", Some(1));
    assert_eq!(
        error(&outcome),
        (
            "Binding".into(),
            "model-facing schema build failure for tool alias \"fetch\"".into()
        )
    );
    assert!(
        h.requests.lock().unwrap().is_empty(),
        "the round never goes out"
    );
}

/// "tools.add also works in the shared library's top-level code, because the tools table
/// exists before the library replays" and "makes it safe in lua shared code".
#[test]
fn the_tools_table_exists_while_the_shared_library_replays() {
    let h = web("- text: a\n- text: b\n");
    let body = format!(
        "```lua shared\ntools.always('search')\ntools.add('fetch')\n```\n\n## A\n\n{}## B\n\n{}",
        lua(loop_code()),
        lua(loop_code())
    );
    result(&run_on(&prompt(&slots(), &body), h.host, "", Some(1)));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec!["search", "fetch"], vec!["search", "fetch"]]
    );
}

/// `language.md` §2: "The H1 pass is a section of its own for scope ...: what it adds with
/// tools.add ... stays there, while tools.always ... reach[es] every later section."
#[test]
fn the_h1_pass_is_a_section_of_its_own_for_scope() {
    let h = web("- text: a\n- text: b\n");
    let body = format!(
        "{}## S\n\n{}",
        lua(&format!("tools.add('fetch')\n{}", loop_code())),
        lua(loop_code())
    );
    result(&run_on(&prompt(&slots(), &body), h.host, "", Some(1)));
    assert_eq!(TestHost::offered(&h.requests), vec![vec!["fetch"], vec![]]);
}

/// "tools.add(...) offers bound tools in the current section only": a call chain's section
/// has its own scope.
#[test]
fn a_called_section_has_its_own_scope() {
    let h = web("- text: a\n- text: b\n");
    let body = format!(
        "## S\n\n{}### Child\n\n---\n\n{}",
        lua(&format!(
            "tools.add('fetch')\ncall('### Child')\n{}",
            loop_code()
        )),
        lua(loop_code())
    );
    result(&run_on(&prompt(&slots(), &body), h.host, "", Some(1)));
    assert_eq!(TestHost::offered(&h.requests), vec![vec![], vec!["fetch"]]);
}
