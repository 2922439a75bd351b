//! The run's events (`RunEvents`): every tool call is reported when it starts and
//! when it ends (a script's `tools.call` of a bound or a local tool, a model's call
//! inside `models.loop`, a call that fails), with the model rounds, in order.

use std::sync::{Arc, Mutex};

use promptforge_engine::testing::*;
use promptforge_engine::{run_text, RunEvents, RunOptions, Store};

#[derive(Default)]
struct Recorded(Mutex<Vec<String>>);

impl Recorded {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
}

impl RunEvents for Recorded {
    fn model_round(&self, label: &str, round: u64) {
        self.push(format!("round {label} {round}"));
    }
    fn tool_call(&self, alias: &str, path: Option<&str>, call_id: &str) {
        self.push(format!("call {alias} {path:?} {call_id}"));
    }
    fn tool_result(&self, alias: &str, call_id: &str, ok: bool) {
        self.push(format!("result {alias} {call_id} {ok}"));
    }
}

fn events(code: &str, turns: &str) -> Vec<String> {
    let h = TestHost::new(
        turns,
        "acme/web",
        vec![
            TestTool::new("acme/web/fetch").output("page"),
            TestTool::new("acme/web/broken").fails("timed out"),
        ],
    );
    let slots = web_frontmatter(&[("fetch", "acme/web/fetch"), ("broken", "acme/web/broken")]);
    let recorded = Arc::new(Recorded::default());
    let options = RunOptions {
        seed: Some(1),
        ..RunOptions::default()
    };
    block_on(run_text(
        &prompt(&slots, &section_body(code)),
        Arc::new(h.host),
        Arc::new(Store::in_memory()),
        options,
        recorded.clone(),
    ));
    let lines = recorded.0.lock().unwrap().clone();
    lines
}

#[test]
fn script_calls_of_bound_and_local_tools_start_and_end() {
    let code = "tools.add_local('grab', 'Grab', {}, function() return 'x' end)\ntools.call('fetch', { url = 'u' })\ntools.call('grab')\npcall(tools.call, 'broken')\nreturn 'ok'";
    assert_eq!(
        events(code, "- text: unused\n"),
        [
            "call fetch Some(\"acme/web/fetch\") call-1",
            "result fetch call-1 true",
            "call grab None call-2",
            "result grab call-2 true",
            "call broken Some(\"acme/web/broken\") call-3",
            "result broken call-3 false",
        ]
    );
}

#[test]
fn model_calls_carry_the_model_call_id_between_rounds() {
    let code = "tools.add('fetch')\nmodels.loop(messages.new():user('go'))\nreturn 'ok'";
    let lines = events(
        code,
        "- calls:\n    - fetch: { url: \"https://example.com\" }\n- text: done\n",
    );
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines[0].starts_with("round "), "{lines:?}");
    let call_id = lines[1]
        .strip_prefix("call fetch Some(\"acme/web/fetch\") ")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(!call_id.is_empty());
    assert_eq!(lines[2], format!("result fetch {call_id} true"));
    assert!(lines[3].starts_with("round "), "{lines:?}");
}
