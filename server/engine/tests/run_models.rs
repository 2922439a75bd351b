//! Models and conversations (§4) on the echo and script providers, Tool objects.

use std::sync::Arc;

use promptforge_engine::testing::*;
use promptforge_engine::Host;

#[test]
fn echo_replies_with_the_last_user_message_and_one_notice() {
    let body = format!(
        "## A\n\n{}",
        lua("local a = models.infer('hello')\nlocal b = writer:infer(messages.new():system('s'):user('world'))\nreturn a .. ' ' .. b")
    );
    let outcome = run(&prompt("models:\n  writer: {}\n", &body), "");
    assert_eq!(result(&outcome).as_deref(), Some("hello world"));
    assert_eq!(
        outcome.notices,
        ["no model is configured; every model label uses the built-in echo model (configure one in promptforge.toml: see the book, docs/src/configuration.md)"]
    );
    assert_eq!(outcome.rounds, 2);
}

#[test]
fn the_selection_rule() {
    let two = "models:\n  a: {}\n  b: {}\n";
    let none = format!("## S\n\n{}", lua("return models.infer('x')"));
    assert_eq!(
        error(&run(&prompt(two, &none), "")),
        (
            "Lua".into(),
            "no model selected: call models.use or models.default".into()
        )
    );
    let used = format!(
        "## S\n\n{}",
        lua("local h = models.use('b')\nmodels.infer('x')\nreturn h.name .. ' ' .. sys.model")
    );
    assert_eq!(
        result(&run(&prompt(two, &used), "")).as_deref(),
        Some("b b")
    );
    let default = format!(
        "{}## S\n\n{}",
        lua("models.default('a')"),
        lua("models.infer('x')\nreturn sys.model")
    );
    assert_eq!(
        result(&run(&prompt(two, &default), "")).as_deref(),
        Some("a")
    );
    let only = format!("## S\n\n{}", lua("models.infer('x')\nreturn sys.model"));
    assert_eq!(
        result(&run(&prompt("models:\n  solo: {}\n", &only), "")).as_deref(),
        Some("solo")
    );
}

#[test]
fn undeclared_labels_are_refused() {
    let body = format!("## S\n\n{}", lua("models.use('nope')"));
    assert_eq!(
        error(&run(&prompt("models:\n  a: {}\n  b: {}\n", &body), "")).1,
        "model label \"nope\" is not declared under models; declared: [a, b]"
    );
}

#[test]
fn handles_are_frozen_and_name_their_host_model() {
    let body = format!(
        "## S\n\n{}",
        lua("local h = models.get('writer')\nreturn writer.name .. ' ' .. h.model")
    );
    assert_eq!(
        result(&run(&prompt("models:\n  writer: {}\n", &body), "")).as_deref(),
        Some("writer echo")
    );
    let body = format!("## S\n\n{}", lua("writer.model = 'x'"));
    assert_eq!(
        error(&run(&prompt("models:\n  writer: {}\n", &body), "")).1,
        "model handles are frozen: cannot assign field \"model\""
    );
}

#[test]
fn message_lists_and_read_only_records() {
    let code = "local m = messages.new():system('s'):user('u')\nlocal reply = models.loop(m)\nreturn #m .. ' ' .. m[1].role .. ' ' .. m[3].role .. ' ' .. m[3].content .. ' ' .. tostring(m[3].tool_calls) .. ' ' .. tostring(m[9])";
    let body = format!("## S\n\n{}", lua(code));
    assert_eq!(
        result(&run(&prompt("models:\n  w: {}\n", &body), "")).as_deref(),
        Some("3 system assistant u nil nil")
    );
    let body = format!(
        "## S\n\n{}",
        lua("local m = messages.new():user('u')\nm[1].content = 'x'")
    );
    assert_eq!(
        error(&run(&prompt("", &body), "")).1,
        "message records are read-only: cannot assign field \"content\""
    );
    let body = format!(
        "## S\n\n{}",
        lua("local m = messages.new():user('u')\nmodels.infer(m)\nreturn #m")
    );
    assert_eq!(
        result(&run(&prompt("models:\n  w: {}\n", &body), "")).as_deref(),
        Some("1"),
        "infer does not change the list"
    );
}

#[test]
fn the_script_provider_replies_in_order_and_its_end_is_a_model_error() {
    let body = format!(
        "## S\n\n{}",
        lua("local a = models.infer('1')\nlocal b = models.infer('2')\nreturn a .. b")
    );
    let outcome = run_on(
        &prompt("models:\n  w: {}\n", &body),
        scripted("- text: one\n- text: two\n"),
        "",
        None,
    );
    assert_eq!(result(&outcome).as_deref(), Some("onetwo"));
    assert!(outcome.notices.is_empty());
    let body = format!("## S\n\n{}", lua("models.infer('1')\nlocal ok, e = pcall(models.infer, '2')\nreturn e.kind .. ': ' .. tostring(e)"));
    let outcome = run_on(
        &prompt("models:\n  w: {}\n", &body),
        scripted("- text: one\n"),
        "",
        None,
    );
    assert_eq!(
        result(&outcome).as_deref(),
        Some("model: model \"scripted\" failed: the model script ended after 1 rounds")
    );
}

#[test]
fn a_model_call_outside_the_scope_fails_the_round() {
    let code = "local m = messages.new():user('go')\nlocal ok, e = pcall(models.loop, m)\nreturn e.kind .. '|' .. e.name .. '|' .. tostring(e) .. '|' .. #m";
    let body = format!("## S\n\n{}", lua(code));
    let outcome = run_on(
        &prompt("models:\n  w: {}\n", &body),
        scripted("- calls:\n    - search: { q: 1 }\n"),
        "",
        None,
    );
    assert_eq!(
        result(&outcome).as_deref(),
        Some("out_of_scope_tool|search|tool \"search\" is not in this section's scope; in-scope aliases: []|1")
    );
    let uncaught = format!("## S\n\n{}", lua("models.loop(messages.new():user('go'))"));
    let outcome = run_on(
        &prompt("models:\n  w: {}\n", &uncaught),
        scripted("- calls:\n    - search: {}\n"),
        "",
        None,
    );
    assert_eq!(error(&outcome).0, "Tool");
}

fn web_host(turns: &str) -> Host {
    let fetch = TestTool::new("acme/web/fetch")
        .description("Fetches a page")
        .schema(serde_json::json!({"type": "object"}))
        .untrusted()
        .output("page");
    let mut host = scripted(turns);
    host.harness_mut()
        .register(Arc::new(FixedPlugin::with_tools("acme/web", vec![fetch])));
    host
}

#[test]
fn a_bound_alias_out_of_scope_gets_the_slot_ending() {
    let frontmatter = "plugins: [acme/web]\ntools:\n  page: acme/web/fetch\nmodels:\n  w: {}\n";
    let body = format!("## S\n\n{}", lua("models.loop(messages.new():user('go'))"));
    let outcome = run_on(
        &prompt(frontmatter, &body),
        web_host("- calls:\n    - page: { url: \"x\" }\n"),
        "",
        None,
    );
    assert_eq!(
        error(&outcome),
        (
            "Tool".into(),
            "tool \"page\" is not in this section's scope; in-scope aliases: [] (alias is a bound tool slot but was not added to this section's scope)".into()
        )
    );
}

#[test]
fn alias_globals_are_frozen_tool_objects_installed_after_the_shared_library() {
    let frontmatter = "plugins: [acme/web]\ntools:\n  page: acme/web/fetch\n";
    let body = format!(
        "```lua shared\nseen = tostring(page)\nfunction label(t) return t.name .. ' (' .. t.wire_name .. ')' end\n```\n\n## S\n\n{}",
        lua("return seen .. '|' .. label(page) .. '|' .. page.description .. '|' .. tostring(page.untrusted) .. '|' .. type(page.parameters) .. '|' .. tostring(next(page.parameters))")
    );
    assert_eq!(
        result(&run_on(&prompt(frontmatter, &body), web_host(""), "", None)).as_deref(),
        Some("nil|page (fetch)|Fetches a page|false|table|nil")
    );
    let body = format!("## S\n\n{}", lua("page.name = 'x'"));
    assert_eq!(
        error(&run_on(&prompt(frontmatter, &body), web_host(""), "", None)).1,
        "Tool objects are frozen: cannot assign field \"name\""
    );
}

#[test]
fn a_prompt_needing_an_unregistered_plugin_is_refused() {
    let text = prompt(
        "plugins: [acme/absent]\ntools:\n  fetch: acme/absent/fetch\n",
        &format!("## S\n\n{}", lua("return 1")),
    );
    assert_eq!(
        error(&run(&text, "")),
        (
            "RequirementsUnmet".into(),
            "the environment cannot satisfy this prompt:\n- missing required Plugin: acme/absent"
                .into()
        )
    );
}

#[test]
fn argument_errors_of_models_and_messages() {
    let fm = "models:\n  w: {}\n";
    let cases = [
        (
            "models.use(3)",
            "models.use expects a model label string, got integer",
        ),
        (
            "models.default(nil)",
            "models.default expects a model label string, got nil",
        ),
        (
            "models.infer({})",
            "models.infer expects a string or a message list from messages.new(), got table",
        ),
        (
            "models.loop('text')",
            "models.loop expects a string or a message list from messages.new(), got string",
        ),
        (
            "w:infer(5)",
            "infer expects a string or a message list from messages.new(), got integer",
        ),
        (
            "messages.new():user(5)",
            "messages:user expects a string, got integer",
        ),
        (
            "local m = messages.new()\nm[1] = 'x'",
            "message lists change only through :system, :user and :assistant",
        ),
    ];
    for (code, message) in cases {
        let body = format!("## S\n\n{}", lua(code));
        assert_eq!(
            error(&run(&prompt(fm, &body), "")),
            ("Lua".into(), message.into()),
            "{code}"
        );
    }
}

#[test]
fn records_of_a_scripted_loop_and_handles_as_globals_everywhere() {
    let body = format!(
        "```lua shared\nfunction ask(x) return w:infer(x) end\n```\n\n## S\n\n{}## T\n\n---\n\n{}",
        lua("local r = fanout('## T', {'a', 'b'})\nreturn r[1] .. r[2] .. ask('!')"),
        lua("return ask(item)")
    );
    let outcome = run_on(
        &prompt("models:\n  w: {}\n", &body),
        scripted("- text: x\n- text: y\n- text: z\n"),
        "",
        None,
    );
    let out = result(&outcome).unwrap();
    assert!(out == "xyz" || out == "yxz", "{out}");
    assert_eq!(outcome.rounds, 3);
}
