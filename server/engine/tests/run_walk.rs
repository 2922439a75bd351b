//! The H1 pass, the walk, the scalar return rule, jump, call and fanout.

use promptforge_engine::testing::*;

#[test]
fn a_section_result_ends_the_run() {
    let text = prompt(
        "",
        &format!(
            "## A\n\n{}## B\n\n{}",
            lua("return 'from A ' .. args"),
            lua("return 'B'")
        ),
    );
    assert_eq!(result(&run(&text, "x")).as_deref(), Some("from A x"));
}

#[test]
fn the_walk_falls_off_the_end_with_no_result() {
    let text = prompt(
        "",
        &format!(
            "## A\n\n{}## B\n\n{}",
            lua("var.a = 1"),
            lua("log('b ran')")
        ),
    );
    let outcome = run(&text, "");
    assert_eq!(result(&outcome), None);
    assert_eq!(outcome.log, ["b ran"]);
}

#[test]
fn blocks_run_in_order_and_nothing_goes_on() {
    let text = prompt(
        "",
        &format!(
            "## A\n\n{}{}{}",
            lua("log('one')"),
            lua("log('two')"),
            lua("")
        ),
    );
    assert_eq!(run(&text, "").log, ["one", "two"]);
}

#[test]
fn the_scalar_return_rule() {
    let cases = [
        ("return 42", Some("42")),
        ("return 1.5", Some("1.5")),
        ("return 2^53", Some("9.007199254741e+15")),
        ("return 10 / 2", Some("5.0")),
        ("return true", Some("true")),
        ("return false", Some("false")),
        ("return 'a', 'b'", Some("a")),
        ("return nil", None),
    ];
    for (code, expected) in cases {
        let text = prompt("", &format!("## A\n\n{}", lua(code)));
        assert_eq!(result(&run(&text, "")).as_deref(), expected, "{code}");
    }
    let text = prompt("", &format!("## A\n\n{}", lua("return {}")));
    let outcome = run(&text, "");
    assert_eq!(
        error(&outcome),
        ("Lua".into(), "cannot return a table as a result".into())
    );
    assert_eq!(outcome.error.unwrap().position.map(|p| p.line), Some(12));
    let text = prompt("", &format!("## A\n\n{}", lua("return print")));
    assert_eq!(
        error(&run(&text, "")).1,
        "cannot return a function as a result"
    );
}

#[test]
fn an_h1_result_walks_no_section() {
    let text = prompt(
        "",
        &format!("{}## A\n\n{}", lua("return 'h1'"), lua("error('never')")),
    );
    assert_eq!(result(&run(&text, "")).as_deref(), Some("h1"));
}

#[test]
fn h1_pass_errors_keep_their_kind_with_the_prefix() {
    let text = prompt(
        "",
        &format!(
            "{}## A\n\n{}",
            lua("local x = nil\nreturn x.y"),
            lua("return 'never'")
        ),
    );
    let outcome = run(&text, "");
    let (kind, message) = error(&outcome);
    assert_eq!(kind, "Lua");
    assert_eq!(message, "H1 pass: attempt to index a nil value (local 'x')");
    assert_eq!(outcome.error.unwrap().position.map(|p| p.line), Some(11));
    let text = prompt("", &lua("store.read('nope.md')"));
    assert_eq!(
        error(&run(&text, "")),
        (
            "Store".into(),
            "H1 pass: no such store file \"nope.md\"".into()
        )
    );
}

#[test]
fn off_walk_sections_run_only_when_addressed() {
    let body = format!(
        "## A\n\n{}## C\n\n{}## Hidden\n\n---\n\n{}",
        lua("log('A')"),
        lua("return call('## Hidden', 'in')"),
        lua("log('hidden')\nreturn args")
    );
    let outcome = run(&prompt("", &body), "");
    assert_eq!(result(&outcome).as_deref(), Some("in"));
    assert_eq!(outcome.log, ["A", "hidden"]);
}

#[test]
fn jump_moves_the_walk() {
    let body = format!(
        "## A\n\n{}## B\n\n{}## C\n\n{}",
        lua("log('A')\njump('## C')\nlog('not here')"),
        lua("log('B')"),
        lua("log('C')\nif not var.again then var.again = true jump('## B') end")
    );
    let outcome = run(&prompt("", &body), "");
    assert_eq!(result(&outcome), None);
    assert_eq!(outcome.log, ["A", "C", "B", "C"]);
}

#[test]
fn a_jump_to_a_child_walks_the_children_then_resumes() {
    let body = format!(
        "## A\n\n{}### A1\n\n{}### A2\n\n{}## B\n\n{}",
        lua("log('A')\njump('### A1')"),
        lua("log('A1')"),
        lua("log('A2')"),
        lua("log('B')")
    );
    assert_eq!(run(&prompt("", &body), "").log, ["A", "A1", "A2", "B"]);
}

#[test]
fn jump_passes_through_pcall() {
    let body = format!(
        "## A\n\n{}## B\n\n{}",
        lua("local ok = pcall(jump, '## B')\nlog('caught', ok)"),
        lua("return 'B'")
    );
    assert_eq!(result(&run(&prompt("", &body), "")).as_deref(), Some("B"));
}

#[test]
fn an_invisible_target_is_an_error() {
    let body = format!("## A\n\n{}### A1\n\n## B\n", lua("jump('## Nope')"));
    let (kind, message) = error(&run(&prompt("", &body), ""));
    assert_eq!(kind, "Lua");
    assert_eq!(
        message,
        "no section \"## Nope\" is visible from \"## A\"; visible: [## A, ### A1, ## B]"
    );
}

#[test]
fn jump_is_refused_while_the_shared_library_loads() {
    let body = format!(
        "```lua shared\njump('## A')\n```\n\n## A\n\n{}",
        lua("return 1")
    );
    let (kind, message) = error(&run(&prompt("", &body), ""));
    assert_eq!(
        (kind.as_str(), message.as_str()),
        (
            "Lua",
            "H1 pass: jump is unavailable while the shared library loads"
        )
    );
}

#[test]
fn call_runs_a_chain_with_its_input_and_a_copy_of_var() {
    let body = format!(
        "## Main\n\n{}## Helper\n\n---\n\n{}",
        lua("var.n = 1\nlocal r = call('## Helper', 'hi')\nreturn r .. ' ' .. tostring(var.n) .. ' ' .. tostring(call('## Helper'))"),
        lua("var.n = var.n + 1\nif args == '' then return nil end\nreturn args .. var.n")
    );
    assert_eq!(
        result(&run(&prompt("", &body), "")).as_deref(),
        Some("hi2 1 nil")
    );
}

#[test]
fn call_depth_is_limited_and_passes_through_pcall() {
    let body = format!(
        "## R\n\n---\n\n{}## Main\n\n{}",
        lua("local ok, e = pcall(call, '## R')\nreturn 'caught'"),
        lua("return call('## R')")
    );
    let outcome = run(&prompt("", &body), "");
    assert_eq!(
        error(&outcome),
        ("Limit".into(), "call depth limit of 8 reached".into())
    );
}

#[test]
fn fanout_returns_results_in_member_order() {
    let body = format!(
        "## Main\n\n{}## Arm\n\n---\n\n{}",
        lua("local r = fanout('## Arm', {'a', 'b', 'c', 'd'})\nreturn table.concat({tostring(r[1]), tostring(r[2]), tostring(r[3]), tostring(r[4])}, ',')"),
        lua("if item == 'c' then return nil end\nreturn item .. sys.index")
    );
    assert_eq!(
        result(&run(&prompt("", &body), "")).as_deref(),
        Some("a1,b2,false,d4")
    );
}

#[test]
fn a_failing_arm_fails_the_fanout() {
    let body = format!(
        "## Main\n\n{}## Arm\n\n---\n\n{}",
        lua("fanout('## Arm', {1, 2, 3})"),
        lua("if item == 2 then store.read('missing') end\nwhile true do end")
    );
    let (kind, message) = error(&run(&prompt("", &body), ""));
    assert_eq!(
        (kind.as_str(), message.as_str()),
        ("Store", "no such store file \"missing\"")
    );
}

#[test]
fn two_arms_writing_one_path_race() {
    let body = format!(
        "## Main\n\n{}## Arm\n\n---\n\n{}",
        lua("fanout('## Arm', {1, 2})"),
        lua("store.append('log.md', 'x')\nstore.write('same.md', tostring(item))")
    );
    let (kind, message) = error(&run(&prompt("", &body), ""));
    assert_eq!(kind, "Store");
    assert!(
        message == "fanout arms 1 and 2 both wrote \"same.md\""
            || message == "fanout arms 2 and 1 both wrote \"same.md\"",
        "{message}"
    );
}

#[test]
fn fanout_needs_a_non_empty_array() {
    let body = format!(
        "## Main\n\n{}## Arm\n\n---\n\n",
        lua("fanout('## Arm', {})")
    );
    assert_eq!(
        error(&run(&prompt("", &body), "")).1,
        "fanout expects a non-empty array table, got an empty table"
    );
}

#[test]
fn control_argument_errors() {
    let cases = [
        (
            "jump(1)",
            "jump target must be a string such as '## Name', got integer",
        ),
        (
            "fanout('## Main', 'x')",
            "fanout expects a non-empty array table, got string",
        ),
        (
            "fanout('## Main', { print })",
            "fanout expects a non-empty array table, got a member function",
        ),
    ];
    for (code, message) in cases {
        let body = format!("## Main\n\n---\n\n{}", lua(code));
        let text = prompt("", &format!("{}{body}", lua("return call('## Main')")));
        assert_eq!(
            error(&run(&text, "")).1,
            format!("H1 pass: {message}"),
            "{code}"
        );
    }
}
