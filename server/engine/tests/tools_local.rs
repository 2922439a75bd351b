//! Tools chapter, "Local tools": tools.add_local, parameters, return values, what a
//! handler can do, handler errors, registration errors, the H1 decision channel.

use promptforge_engine::testing::*;
use serde_json::json;

fn web(turns: &str) -> TestHost {
    TestHost::new(
        turns,
        "acme/web",
        vec![
            TestTool::new("acme/web/fetch").untrusted().output("page"),
            TestTool::new("acme/web/broken").fails("timed out"),
        ],
    )
}

fn slots() -> String {
    web_frontmatter(&[("fetch", "acme/web/fetch"), ("broken", "acme/web/broken")])
}

fn run_web(code: &str, turns: &str) -> promptforge_engine::Outcome {
    run_on(
        &prompt(&slots(), &section_body(code)),
        web(turns).host,
        "",
        Some(1),
    )
}

/// "out holds got hi."
#[test]
fn grab_example_returns_got_hi() {
    let code = "tools.add_local('grab', 'Grab a value', { value = 'string' }, function(a)\n  return 'got ' .. a.value\nend)\nlocal out = tools.call('grab', { value = 'hi' })\nreturn out";
    assert_eq!(
        result(&run(&prompt("", &section_body(code)), "")).as_deref(),
        Some("got hi")
    );
}

/// "The schema is the same text in every run: the names in properties and required come out
/// sorted bytewise ... so required lists limit before query", and the lookup example's
/// handler answers a model call.
#[test]
fn lookup_schema_is_sorted_and_every_parameter_required() {
    let code = "tools.add_local('lookup', 'Find entries that match a query', { query = 'string', limit = { 'integer', 'maximum hits' } }, function(a)\n  return 'looking up ' .. a.query .. ', at most ' .. a.limit\nend)\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nreturn msgs[3].content";
    let h = web("- calls:\n    - lookup: { query: \"rust\", limit: 3 }\n- text: done\n");
    let outcome = run_on(&prompt(&slots(), &section_body(code)), h.host, "", Some(1));
    assert_eq!(
        result(&outcome).as_deref(),
        Some("looking up rust, at most 3")
    );
    let requests = h.requests.lock().unwrap();
    let tool = &requests[0].tools[0];
    assert_eq!(tool.name, "lookup");
    assert_eq!(tool.description, "Find entries that match a query");
    assert_eq!(
        tool.parameters,
        json!({"type": "object", "properties": {"limit": {"type": "integer", "description": "maximum hits"}, "query": {"type": "string"}}, "required": ["limit", "query"]})
    );
    assert_eq!(
        serde_json::to_string(&tool.parameters["required"]).unwrap(),
        r#"["limit","query"]"#
    );
}

/// "an empty params table {} declares a tool that takes no arguments" and "each type is
/// string, integer, number, or boolean".
#[test]
fn params_types_and_the_empty_table() {
    let code = "tools.add_local('none', 'No args', {}, function() return 'x' end)\ntools.add_local('all', 'All', { s = 'string', i = {'integer'}, n = {'number', 'a number'}, b = 'boolean' }, function() return 'y' end)\nmodels.loop(messages.new():user('go'))";
    let h = web("- text: done\n");
    result(&run_on(
        &prompt(&slots(), &section_body(code)),
        h.host,
        "",
        Some(1),
    ));
    let requests = h.requests.lock().unwrap();
    assert_eq!(
        requests[0].tools[0].parameters,
        json!({"type": "object", "properties": {}, "required": []})
    );
    assert_eq!(
        requests[0].tools[1].parameters,
        json!({"type": "object", "properties": {"b": {"type": "boolean"}, "i": {"type": "integer"}, "n": {"type": "number", "description": "a number"}, "s": {"type": "string"}}, "required": ["b", "i", "n", "s"]})
    );
}

/// "The model's tool list puts the bound tools first, in scope order, followed by every local
/// tool in the order registered" and "the tool is offered on the next model call without a
/// separate tools.add".
#[test]
fn local_tools_follow_the_bound_tools_in_registration_order() {
    let code = "tools.add_local('zeta', 'z', {}, function() return 'z' end)\ntools.add('fetch')\ntools.add_local('alpha', 'a', {}, function() return 'a' end)\nmodels.loop(messages.new():user('go'))";
    let h = web("- text: done\n");
    result(&run_on(
        &prompt(&slots(), &section_body(code)),
        h.host,
        "",
        Some(1),
    ));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec!["fetch", "zeta", "alpha"]]
    );
}

/// Return values: "Only the first return value counts: nil or no value gives the empty
/// string, and a string, integer, number, or boolean becomes its text. Any other type fails
/// the call with cannot return a {type} as a result".
#[test]
fn the_scalar_return_rule_for_handlers() {
    let code = "local function reg(alias, f) tools.add_local(alias, 'd', {}, f) end\nreg('n', function() end)\nreg('i', function() return 42, 'ignored' end)\nreg('f', function() return 1.5 end)\nreg('b', function() return true end)\nreg('s', function() return 'text' end)\nlocal r = {}\nfor _, a in ipairs({'n', 'i', 'f', 'b', 's'}) do r[#r + 1] = '[' .. tools.call(a) .. ']' end\nreturn table.concat(r)";
    assert_eq!(
        result(&run(&prompt("", &section_body(code)), "")).as_deref(),
        Some("[][42][1.5][true][text]")
    );
    let code = "tools.add_local('t', 'd', {}, function() return {} end)\nlocal ok, e = pcall(tools.call, 't')\nreturn e";
    assert_eq!(
        result(&run(&prompt("", &section_body(code)), "")).as_deref(),
        Some("cannot return a table as a result")
    );
    let code = "tools.add_local('t', 'd', {}, function() return print end)\ntools.call('t')";
    assert_eq!(
        error(&run(&prompt("", &section_body(code)), "")),
        ("Lua".into(), "cannot return a function as a result".into())
    );
}

/// "The table is built fresh from the call's JSON arguments, so a script caller's own table
/// never reaches the handler."
#[test]
fn the_handler_gets_a_fresh_table() {
    let code = "local seen\ntools.add_local('grab', 'd', { value = 'string' }, function(a)\n  seen = a\n  a.value = 'changed'\n  return a.value\nend)\nlocal mine = { value = 'hi' }\nlocal out = tools.call('grab', mine)\nreturn out .. '|' .. mine.value .. '|' .. tostring(seen ~= mine)";
    assert_eq!(
        result(&run(&prompt("", &section_body(code)), "")).as_deref(),
        Some("changed|hi|true")
    );
}

/// "tools.add_local alias ... duplicates a bound tool slot", "... is already registered",
/// the two param messages, and the texts the spec leaves open.
#[test]
fn registration_errors() {
    let cases = [
        ("tools.add_local('fetch', 'd', {}, function() end)", "tools.add_local alias \"fetch\" duplicates a bound tool slot"),
        ("tools.add_local('x', 'd', {}, function() end)\ntools.add_local('x', 'd', {}, function() end)", "tools.add_local alias \"x\" is already registered"),
        ("tools.add_local('x', 'd', { n = 'float' }, function() end)", "tools.add_local param \"n\" has unsupported type \"float\": expected \"string\", \"integer\", \"number\", or \"boolean\""),
        ("tools.add_local('x', 'd', { n = {'text', 'd'} }, function() end)", "tools.add_local param \"n\" has unsupported type \"text\": expected \"string\", \"integer\", \"number\", or \"boolean\""),
        ("tools.add_local('x', 'd', { n = 5 }, function() end)", "tools.add_local param \"n\" must be a type string or a {type, description} array"),
        ("tools.add_local('x', 'd', { n = { 5 } }, function() end)", "tools.add_local param \"n\" must be a type string or a {type, description} array"),
        ("tools.add_local('x', 'd', { n = { 'string', 5 } }, function() end)", "tools.add_local param \"n\" must be a type string or a {type, description} array"),
        ("tools.add_local('x x', 'd', {}, function() end)", "invalid alias \"x x\": expected [A-Za-z][A-Za-z0-9_-]{0,63}"),
        // The spec leaves these texts open.
        ("tools.add_local(5, 'd', {}, function() end)", "tools.add_local alias must be a string, got integer"),
        ("tools.add_local('x', nil, {}, function() end)", "tools.add_local description must be a string, got nil"),
        ("tools.add_local('x', 'd', 'string', function() end)", "tools.add_local params must be a table, got string"),
        ("tools.add_local('x', 'd', { 'string' }, function() end)", "tools.add_local param names must be strings, got integer"),
        ("tools.add_local('x', 'd', {}, 'f')", "tools.add_local handler must be a function, got string"),
    ];
    for (code, message) in cases {
        let caught =
            format!("local ok, e = pcall(function()\n{code}\nend)\nreturn type(e) .. ':' .. e");
        assert_eq!(
            result(&run_web(&caught, "")),
            Some(format!("string:{message}")),
            "{code}"
        );
    }
}

/// "A local tool belongs to the section that registers it."
#[test]
fn a_local_tool_belongs_to_its_section() {
    let body = format!(
        "## A\n\n{}## B\n\n{}",
        lua("tools.add_local('grab', 'd', {}, function() return 'x' end)"),
        lua("local ok, e = pcall(tools.call, 'grab')\nreturn e.kind")
    );
    assert_eq!(
        result(&run(&prompt("", &body), "")).as_deref(),
        Some("unbound_tool")
    );
}

/// The note-taker example: "State across calls lives in ordinary Lua variables" and "A store
/// call made there is an ordinary store operation"; the handler's text goes back to the model.
#[test]
fn note_taker_handler_keeps_state_and_writes_the_store() {
    let code = "models.use('writer')\nlocal saved = 0\ntools.add_local('save_note', 'Save one short note', { text = 'string' }, function(a)\n  store.append('notes.md', a.text .. '\\n')\n  saved = saved + 1\n  return 'saved'\nend)\nlocal msgs = messages.new():user('Save each key point of this text as a note: ' .. args)\nmodels.loop(msgs)\nreturn saved .. ' notes saved|' .. store.read('notes.md') .. '|' .. msgs[3].content .. msgs[4].content .. '|' .. #msgs";
    let h = TestHost::new(
        "- calls:\n    - save_note: { text: \"one\" }\n    - save_note: { text: \"two\" }\n- text: done\n",
        "acme/web",
        vec![],
    );
    let outcome = run_on(
        &prompt(
            "models:\n  writer: {}\n",
            &format!("## Take notes\n\n{}", lua(code)),
        ),
        h.host,
        "text",
        Some(1),
    );
    assert_eq!(
        result(&outcome).as_deref(),
        Some("2 notes saved|one\ntwo\n|savedsaved|5")
    );
}

/// "Inside a handler, tools.call is a script call. ... a bound tool's untrusted output reaches
/// the handler already wrapped and keeps its envelope if the handler returns it" — and it
/// reaches the model as the handler returned it (trusted, no second envelope).
#[test]
fn a_handler_can_call_bound_tools_and_keeps_their_envelope() {
    let code = "tools.add_local('via', 'd', {}, function()\n  return tools.call('fetch')\nend)\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nreturn tostring(msgs[3].content == untrusted('page')) .. '|' .. tostring(tools.call('via') == untrusted('page'))";
    assert_eq!(
        result(&run_web(code, "- calls:\n    - via: {}\n- text: done\n")).as_deref(),
        Some("true|true")
    );
}

/// "A Lua error raised in a handler is raised again at the call ... with the handler's own
/// error value, and an error value with a kind keeps it for your pcall."
#[test]
fn handler_errors_are_raised_again_with_their_own_value() {
    let code = "tools.add_local('t', 'd', {}, function() error({ kind = 'mine', detail = 7 }) end)\nlocal ok, e = pcall(tools.call, 't')\nreturn type(e) .. '|' .. e.kind .. '|' .. e.detail";
    assert_eq!(
        result(&run(&prompt("", &section_body(code)), "")).as_deref(),
        Some("table|mine|7")
    );
    let code = "tools.add_local('t', 'd', {}, function() tools.call('broken') end)\nlocal ok, e = pcall(tools.call, 't')\nreturn e.kind .. '|' .. tostring(e)";
    assert_eq!(
        result(&run_web(code, "")).as_deref(),
        Some("tool|tool call failure: timed out")
    );
    let code = "tools.add_local('t', 'd', {}, function() error('boom', 0) end)\nlocal ok, e = pcall(tools.call, 't')\nreturn e";
    assert_eq!(
        result(&run(&prompt("", &section_body(code)), "")).as_deref(),
        Some("boom")
    );
    // Uncaught: a tool kind fails the run with Tool, a plain error with Lua.
    let code =
        "tools.add_local('t', 'd', {}, function() tools.call('broken') end)\ntools.call('t')";
    assert_eq!(
        error(&run_web(code, "")),
        ("Tool".into(), "tool call failure: timed out".into())
    );
    let code = "tools.add_local('t', 'd', {}, function()\n  error('boom')\nend)\ntools.call('t')";
    let outcome = run(&prompt("", &section_body(code)), "");
    assert_eq!(error(&outcome), ("Lua".into(), "boom".into()));
    assert_eq!(
        outcome.error.unwrap().position.map(|p| p.line),
        Some(13),
        "the line of the error in the handler"
    );
}

/// "for script and model calls alike ... Uncaught, it fails the call and the run, and it never
/// becomes failure text for the model. ... a handler's error ... end[s] models.loop."
#[test]
fn a_handler_error_ends_models_loop_with_its_own_value() {
    let turns = "- calls:\n    - t: {}\n    - fetch: {}\n- text: never\n";
    let code = "tools.add('fetch')\ntools.add_local('t', 'd', {}, function() error({ kind = 'mine' }) end)\nlocal msgs = messages.new():user('go')\nlocal ok, e = pcall(models.loop, msgs)\nreturn e.kind .. '|' .. #msgs .. '|' .. tools.calls.t .. tools.calls.fetch";
    let h = web(turns);
    let outcome = run_on(&prompt(&slots(), &section_body(code)), h.host, "", Some(1));
    assert_eq!(result(&outcome).as_deref(), Some("mine|1|10"));
    assert_eq!(h.requests.lock().unwrap().len(), 1, "the loop ended");
    let code = "tools.add_local('t', 'd', {}, function() tools.call('broken') end)\nmodels.loop(messages.new():user('go'))";
    assert_eq!(
        error(&run_web(code, "- calls:\n    - t: {}\n- text: never\n")),
        ("Tool".into(), "tool call failure: timed out".into())
    );
}

/// "jump refuses while a handler runs ... even through a reference to jump saved before the
/// handler ran ... The refusal lasts until the outermost handler returns or raises, including
/// across nested local calls, and then jump works again in the block."
#[test]
fn jump_is_refused_inside_handlers_until_the_outermost_returns() {
    let message = "jump is unavailable inside a local tool handler: return a value from the handler and call jump from the block after the tool call returns";
    let code = "local saved = jump\nlocal log = {}\ntools.add_local('inner', 'd', {}, function()\n  local ok, e = pcall(saved, '## T')\n  log[#log + 1] = e\n  return 'i'\nend)\ntools.add_local('outer', 'd', {}, function()\n  tools.call('inner')\n  local ok, e = pcall(jump, '## T')\n  log[#log + 1] = e\n  return 'o'\nend)\ntools.add_local('raiser', 'd', {}, function() error('x', 0) end)\ntools.call('outer')\npcall(tools.call, 'raiser')\nvar.log = table.concat(log, '\\n')\njump('## T')";
    let body = format!(
        "## S\n\n{}## Skipped\n\n{}## T\n\n{}",
        lua(code),
        lua("return 'wrong'"),
        lua("return var.log")
    );
    assert_eq!(
        result(&run(&prompt("", &body), "")),
        Some(format!("{message}\n{message}"))
    );
    let uncaught = format!(
        "## S\n\n{}## T\n\n{}",
        lua("tools.add_local('j', 'd', {}, function() jump('## T') end)\ntools.call('j')"),
        lua("return 'jumped'")
    );
    assert_eq!(
        error(&run(&prompt("", &uncaught), "")),
        ("Lua".into(), message.into())
    );
}

/// "jump refuses while a handler runs" also for a model-called handler.
#[test]
fn jump_is_refused_in_a_model_called_handler() {
    let code = "tools.add_local('j', 'd', {}, function()\n  local ok, e = pcall(jump, '## T')\n  return e\nend)\nlocal msgs = messages.new():user('go')\nmodels.loop(msgs)\nreturn msgs[3].content";
    let body = format!("## S\n\n{}## T\n\n{}", lua(code), lua("return 'jumped'"));
    let outcome = run_on(
        &prompt("models:\n  w: {}\n", &body),
        web("- calls:\n    - j: {}\n- text: done\n").host,
        "",
        Some(1),
    );
    assert!(result(&outcome)
        .unwrap()
        .starts_with("jump is unavailable inside a local tool handler"));
}

/// The router example: "the handler writes the model's choice into var, and that choice shapes
/// the rest of the run" and "A model that answers without calling the tool leaves the value
/// unset, and Result then returns no choice."
#[test]
fn a_local_tool_as_a_decision_channel_in_the_h1_pass() {
    let h1 = lua("models.default('writer')\ntools.add_local('decide', 'Record the chosen route', { choice = 'string' }, function(a)\n  var.route = a.choice\n  return 'recorded'\nend)\nlocal msgs = messages.new():user('Call decide with short or long for this request: ' .. args)\nmodels.loop(msgs)");
    let body = format!(
        "{h1}## Result\n\n{}",
        lua("return var.route or 'no choice'")
    );
    let text = prompt("models:\n  writer: {}\n", &body);
    let h = TestHost::new(
        "- calls:\n    - decide: { choice: short }\n- text: ok\n",
        "acme/web",
        vec![],
    );
    assert_eq!(
        result(&run_on(&text, h.host, "req", Some(1))).as_deref(),
        Some("short")
    );
    let h = TestHost::new("- text: no tool\n", "acme/web", vec![]);
    assert_eq!(
        result(&run_on(&text, h.host, "req", Some(1))).as_deref(),
        Some("no choice")
    );
}

/// "several no-argument local tools, one per choice, do the same job".
#[test]
fn no_argument_local_tools_as_choices() {
    let h1 = lua("models.default('writer')\ntools.add_local('choose_short', 'Pick the short route', {}, function()\n  var.route = 'short'\n  return 'ok'\nend)\ntools.add_local('choose_long', 'Pick the long route', {}, function()\n  var.route = 'long'\n  return 'ok'\nend)\nmodels.loop(messages.new():user('choose'))");
    let body = format!(
        "{h1}## Result\n\n{}",
        lua("return var.route or 'no choice'")
    );
    let h = TestHost::new(
        "- calls:\n    - choose_long: {}\n- text: ok\n",
        "acme/web",
        vec![],
    );
    assert_eq!(
        result(&run_on(
            &prompt("models:\n  writer: {}\n", &body),
            h.host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some("long")
    );
}

/// "A handler that never returns still stops when the run is cancelled".
#[test]
fn a_handler_that_never_returns_stops_when_the_run_is_cancelled() {
    use promptforge_engine::{RunOptions, Store};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let code = "tools.add_local('spin', 'd', {}, function() while true do end end)\npcall(tools.call, 'spin')\nreturn 'caught'";
    let options = RunOptions::default();
    let cancel = options.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = run_with(
        &prompt("", &section_body(code)),
        promptforge_engine::Host::offline(),
        Arc::new(Store::in_memory()),
        options,
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        error(&outcome),
        ("Cancelled".into(), "the run was cancelled".into())
    );
}
