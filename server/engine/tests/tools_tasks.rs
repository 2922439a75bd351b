//! `language.md` §8, Tasks: tools.allow_tasks and the Engine's task tools.

use promptforge_engine::testing::*;
use std::time::Duration;

fn host(turns: &str) -> TestHost {
    TestHost::new(
        turns,
        "acme/web",
        vec![
            TestTool::new("acme/web/slow")
                .delay(Duration::from_millis(400), false)
                .output("slow done"),
            TestTool::new("acme/web/hang").delay(Duration::from_secs(30), false),
        ],
    )
}

fn fm() -> String {
    web_frontmatter(&[("slow", "acme/web/slow"), ("hang", "acme/web/hang")])
}

/// The tool record contents of a loop, one per line.
const CONTENTS: &str = "local msgs = messages.new():user('go')\nmodels.loop(msgs)\nlocal out = {}\nfor i = 1, #msgs do if msgs[i].role == 'tool' then out[#out + 1] = msgs[i].content end end\nreturn table.concat(out, '\\n')";

fn workers() -> String {
    format!(
        "## Worker\n\n---\n\n{}## Slow\n\n---\n\n{}## Hang\n\n---\n\n{}## Broken\n\n---\n\n{}",
        lua("return 'worked ' .. args"),
        lua("return tools.call('slow')"),
        lua("tools.call('hang')\nreturn 'never'"),
        lua("error('worker broke', 0)")
    )
}

/// "tools.allow_tasks(targets) ... offers the model four Engine tools in that section", after
/// the bound and local tools.
#[test]
fn allow_tasks_offers_the_four_engine_tools_last() {
    let h = host("- text: ok\n");
    let code = "tools.add('slow')\ntools.add_local('note', 'd', {}, function() return 'x' end)\ntools.allow_tasks({'## Worker'})\nmodels.loop(messages.new():user('go'))";
    let body = format!("## S\n\n{}{}", lua(code), workers());
    result(&run_on(&prompt(&fm(), &body), h.host, "", Some(1)));
    assert_eq!(
        TestHost::offered(&h.requests),
        vec![vec![
            "slow",
            "note",
            "task",
            "task_cancel",
            "task_status",
            "await_tasks"
        ]]
    );
    let requests = h.requests.lock().unwrap();
    assert!(requests[0].tools[2].description.contains("[## Worker]"));
}

/// "task {target, input} starts a chain in the background and returns its id (t1, t2, ...
/// per run)" and "await_tasks {ids} waits for those (all, when ids is empty) and returns one
/// line per task in the task_status form".
#[test]
fn task_starts_a_chain_and_await_tasks_reports_it() {
    let turns = "- calls:\n    - task: { target: \"## Worker\", input: \"a\" }\n    - task: { target: \"## Worker\", input: \"b\" }\n- calls:\n    - await_tasks: { ids: [] }\n    - await_tasks: { ids: [\"t2\"] }\n- text: ok\n";
    let code = format!("tools.allow_tasks({{'## Worker'}})\n{CONTENTS}");
    let body = format!("## S\n\n{}{}", lua(&code), workers());
    let outcome = run_on(&prompt(&fm(), &body), host(turns).host, "", Some(1));
    assert_eq!(
        result(&outcome).as_deref(),
        Some("t1\nt2\nt1: done: worked a\nt2: done: worked b\nt2: done: worked b")
    );
    assert!(
        outcome.calls.is_empty(),
        "the Engine's tools are not aliases"
    );
}

/// "task_status {id} returns running, done: {result}, failed: {message} or cancelled" and
/// task_cancel.
#[test]
fn task_status_and_task_cancel() {
    let turns = "- calls:\n    - task: { target: \"## Slow\" }\n    - task_status: { id: t1 }\n    - task: { target: \"## Broken\" }\n    - task: { target: \"## Hang\" }\n    - task_cancel: { id: t3 }\n- calls:\n    - await_tasks: {}\n    - task_status: { id: t1 }\n    - task_status: { id: t9 }\n- text: ok\n";
    let code = format!("tools.allow_tasks({{'## Slow', '## Broken', '## Hang'}})\n{CONTENTS}");
    let body = format!("## S\n\n{}{}", lua(&code), workers());
    let outcome = run_on(&prompt(&fm(), &body), host(turns).host, "", Some(1));
    // The tool records of the loop, one per line.
    insta::assert_snapshot!(
        "task_status_and_task_cancel_records",
        result(&outcome).expect("a result")
    );
}

/// "A target outside the list is a tool error for the model."
#[test]
fn a_target_outside_the_list_is_a_tool_error_for_the_model() {
    let turns = "- calls:\n    - task: { target: \"## Slow\" }\n- text: ok\n";
    let code = format!("tools.allow_tasks({{'## Worker'}})\n{CONTENTS}");
    let body = format!("## S\n\n{}{}", lua(&code), workers());
    assert_eq!(
        result(&run_on(
            &prompt(&fm(), &body),
            host(turns).host,
            "",
            Some(1)
        ))
        .as_deref(),
        Some(
            "task target \"## Slow\" is not allowed in this section; allowed targets: [## Worker]"
        )
    );
}

/// "Tasks still running when their section ends are cancelled." — and ids count per run.
#[test]
fn tasks_still_running_when_their_section_ends_are_cancelled() {
    let turns = "- calls:\n    - task: { target: \"## Hang\" }\n- text: ok\n- calls:\n    - task_status: { id: t1 }\n    - task: { target: \"## Worker\", input: x }\n    - await_tasks: {}\n- text: ok\n";
    let body = format!(
        "## A\n\n{}## B\n\n{}{}",
        lua(&format!(
            "tools.allow_tasks({{'## Hang'}})\n{}",
            CONTENTS.replace("return ", "var.a = ")
        )),
        lua(&format!("tools.allow_tasks({{'## Worker'}})\n{CONTENTS}")),
        workers()
    );
    let started = std::time::Instant::now();
    let outcome = run_on(&prompt(&fm(), &body), host(turns).host, "", Some(1));
    assert_eq!(
        result(&outcome).as_deref(),
        Some("cancelled\nt2\nt2: done: worked x")
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// tools.allow_tasks argument errors (the spec leaves the texts open), an unknown target, and
/// an empty array removing the list.
#[test]
fn allow_tasks_errors_and_the_empty_list() {
    let cases = [
        ("tools.allow_tasks('## Worker')", "tools.allow_tasks expects an array of target strings, got string".to_owned()),
        ("tools.allow_tasks({'## Worker', 3})", "tools.allow_tasks expects an array of target strings, got integer".to_owned()),
        ("tools.allow_tasks({ a = '## Worker' })", "tools.allow_tasks expects an array of target strings, got a table that is not an array".to_owned()),
        ("tools.allow_tasks({'## Nope'})", "no section \"## Nope\" is visible from \"## S\"; visible: [## S, ## Worker, ## Slow, ## Hang, ## Broken]".to_owned()),
    ];
    for (code, message) in cases {
        let body = format!("## S\n\n{}{}", lua(code), workers());
        assert_eq!(
            error(&run_on(&prompt(&fm(), &body), host("").host, "", Some(1))),
            ("Lua".into(), message),
            "{code}"
        );
    }
    let h = host("- text: ok\n");
    let body = format!(
        "## S\n\n{}{}",
        lua("tools.allow_tasks({'## Worker'})\ntools.allow_tasks({})\nmodels.loop(messages.new():user('go'))"),
        workers()
    );
    result(&run_on(&prompt(&fm(), &body), h.host, "", Some(1)));
    assert_eq!(TestHost::offered(&h.requests), vec![Vec::<String>::new()]);
}
