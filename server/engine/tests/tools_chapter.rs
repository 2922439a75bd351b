//! Tools chapter: the sentences no other suite checked (see `tests/TOOLS_CHAPTER.md`).
//! Each test quotes the sentence it checks and was written from that sentence first.

mod run_common;
mod tools_common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use promptforge_engine::harness::{
    Activation, ActivationError, OutputKind, Plugin, Tool, ToolError, ToolId, ToolOutput, Trust,
};
use promptforge_engine::input::ScriptedInput;
use promptforge_engine::run::identity::RunIdentity;
use promptforge_engine::{prepare, Host, RunOptions, Store};
use run_common::*;
use tokio_util::sync::CancellationToken;
use tools_common::*;

fn section(code: &str) -> String {
    format!("## S\n\n{}", lua(code))
}

fn nonce() -> String {
    RunIdentity::new(Some(1)).unwrap().nonce
}

/// What a [`Recording`] Plugin saw: activation order, the services' ids, its cancel signal and
/// the run's filesystem.
#[derive(Default)]
struct Seen {
    activated: Vec<String>,
    services: Vec<Vec<String>>,
    cancel: Option<CancellationToken>,
}

/// Makes a Plugin's tools from its Activation.
type MakeTools = Box<dyn Fn(&Activation) -> Vec<Arc<dyn Tool>> + Send + Sync>;

/// A Plugin recording its activation; its tools come from `make`, which gets the Activation.
struct Recording {
    id: String,
    conflicts: Vec<String>,
    seen: Arc<Mutex<Seen>>,
    make: MakeTools,
}

impl Recording {
    fn new(id: &str, seen: &Arc<Mutex<Seen>>, paths: &[&str]) -> Self {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        Recording {
            id: id.to_owned(),
            conflicts: Vec::new(),
            seen: seen.clone(),
            make: Box::new(move |_| {
                paths
                    .iter()
                    .map(|p| Arc::new(TestTool::new(p)) as Arc<dyn Tool>)
                    .collect()
            }),
        }
    }
}

#[async_trait]
impl Plugin for Recording {
    fn id(&self) -> &str {
        &self.id
    }
    fn conflicts(&self) -> Vec<String> {
        self.conflicts.clone()
    }
    async fn activate(
        &self,
        activation: Activation,
    ) -> Result<Vec<Arc<dyn Tool>>, ActivationError> {
        {
            let mut seen = self.seen.lock().unwrap();
            seen.activated.push(self.id.clone());
            seen.services.push(
                activation
                    .services
                    .ids()
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            );
            seen.cancel = Some(activation.cancel.clone());
        }
        Ok((self.make)(&activation))
    }
}

/// A tool writing its `text` argument to `out.md` of the filesystem its Plugin got, and
/// answering with the content of `in.md` there.
struct FsTool {
    id: ToolId,
    fs: Arc<Store>,
    schema: serde_json::Value,
}

#[async_trait]
impl Tool for FsTool {
    fn id(&self) -> &ToolId {
        &self.id
    }
    fn description(&self) -> &str {
        "Writes out.md and reads in.md"
    }
    fn parameters(&self) -> &serde_json::Value {
        &self.schema
    }
    async fn call(
        &self,
        arguments: &str,
        _cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let args: serde_json::Value = serde_json::from_str(arguments).unwrap();
        self.fs
            .write("out.md", args["text"].as_str().unwrap_or(""))
            .map_err(|e| ToolError::new(e.to_string()))?;
        let read = self
            .fs
            .read("in.md", None, None)
            .map_err(|e| ToolError::new(e.to_string()))?;
        Ok(ToolOutput {
            text: read,
            trust: Trust::Trusted,
            kind: OutputKind::Plain,
        })
    }
}

fn prompt_text(frontmatter: &str) -> String {
    format!("---\nname: p\ndescription: d\npromptforge: 0\n{frontmatter}---\n\n# T\n")
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// How declarations are matched: "Prepare activates Plugins in the order declared, and their
/// tools join the run's tool catalog in that order: by declaration first, then in each
/// Plugin's own order." Tools at a glance: "Each declared Plugin is activated at prepare,
/// before any Lua runs, and the run's tool catalog ... is built from exactly the declared
/// Plugins."
#[test]
fn the_catalog_is_in_declaration_order_then_each_plugins_own_order() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut host = Host::offline();
    // Registered in the other order than declared, and one registered Plugin not declared.
    host.harness_mut().register(Arc::new(Recording::new(
        "acme/a",
        &seen,
        &["acme/a/x", "acme/a/b"],
    )));
    host.harness_mut().register(Arc::new(Recording::new(
        "acme/b",
        &seen,
        &["acme/b/z", "acme/b/y"],
    )));
    host.harness_mut()
        .register(Arc::new(Recording::new("acme/c", &seen, &["acme/c/w"])));
    let text = prompt_text("plugins:\n  - acme/b\n  - acme/a\n");
    let analysis = promptforge_syntax::parse(&text);
    let prepared = block_on(prepare(
        &text,
        &analysis,
        &host,
        Arc::new(Store::in_memory()),
        CancellationToken::new(),
    ))
    .expect("prepared");
    let paths: Vec<&str> = prepared
        .catalog
        .entries()
        .iter()
        .map(|e| e.tool.id().as_str())
        .collect();
    assert_eq!(paths, ["acme/b/z", "acme/b/y", "acme/a/x", "acme/a/b"]);
    assert_eq!(seen.lock().unwrap().activated, ["acme/b", "acme/a"]);
}

/// How declarations are matched: "A prompt that declares both is refused before the run
/// starts with RequirementsUnmet: neither activates, and the notice lists the pair, the
/// earlier-declared Plugin first." (Here the later-declared Plugin names the conflict.)
#[test]
fn conflicting_plugins_neither_activates_and_the_earlier_declared_is_named_first() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut host = Host::offline();
    let mut fs = Recording::new("acme/fs", &seen, &["acme/fs/read"]);
    fs.conflicts = vec!["acme/memfs".into()];
    host.harness_mut().register(Arc::new(fs));
    host.harness_mut().register(Arc::new(Recording::new(
        "acme/memfs",
        &seen,
        &["acme/memfs/read"],
    )));
    let text = prompt(
        "plugins:\n  - acme/memfs\n  - acme/fs\n",
        &section("var.ran = true\nreturn 'ran'"),
    );
    let outcome = run_on(&text, host, "", Some(1));
    assert_eq!(
        error(&outcome),
        (
            "RequirementsUnmet".into(),
            "the environment cannot satisfy this prompt:\n- conflicting Plugins: acme/memfs and acme/fs cannot be activated together; declare one or the other".into()
        )
    );
    assert!(
        seen.lock().unwrap().activated.is_empty(),
        "neither activates"
    );
}

/// How declarations are matched: "A Plugin works against the run's own filesystem, so the
/// files its tools read and write are the same files the store sees."
#[test]
fn a_plugins_tools_read_and_write_the_runs_own_filesystem() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut host = Host::offline();
    host.harness_mut().register(Arc::new(Recording {
        id: "acme/fs".into(),
        conflicts: Vec::new(),
        seen: seen.clone(),
        make: Box::new(|activation: &Activation| {
            vec![Arc::new(FsTool {
                id: ToolId::new("acme/fs/swap"),
                fs: activation.filesystem.clone(),
                schema: serde_json::json!({"type": "object"}),
            }) as Arc<dyn Tool>]
        }),
    }));
    let text = prompt(
        "plugins: [acme/fs]\ntools:\n  swap: acme/fs/swap\n",
        &section("store.write('in.md', 'from lua')\nlocal got = tools.call('swap', { text = 'from the tool' })\nreturn got .. '|' .. store.read('out.md')"),
    );
    let store = Arc::new(Store::in_memory());
    let outcome = run_with(
        &text,
        host,
        store.clone(),
        RunOptions {
            seed: Some(1),
            ..Default::default()
        },
    );
    assert_eq!(result(&outcome).as_deref(), Some("from lua|from the tool"));
    assert_eq!(store.read("out.md", None, None).unwrap(), "from the tool");
}

/// Declaring Plugins: "When it activates, a Plugin receives only the run's filesystem, its
/// cancel signal, and the services the Host provides, each named by an id such as
/// promptforge/input-broker".
#[test]
fn a_plugin_receives_the_hosts_services_and_the_runs_cancel_signal() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut host = Host::offline();
    host.set_input(Some(Arc::new(ScriptedInput::new(Vec::<String>::new()))));
    host.harness_mut()
        .register(Arc::new(Recording::new("acme/x", &seen, &["acme/x/t"])));
    let text = prompt("plugins: [acme/x]\n", &section("while true do end"));
    let options = RunOptions::default();
    let cancel = options.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let outcome = run_with(&text, host, Arc::new(Store::in_memory()), options);
    assert_eq!(error(&outcome).0, "Cancelled");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.services, vec![vec!["promptforge/input-broker"]]);
    assert!(
        seen.cancel.as_ref().unwrap().is_cancelled(),
        "the Plugin's cancel signal fires with the run's"
    );
    drop(seen);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut host = Host::offline();
    host.harness_mut()
        .register(Arc::new(Recording::new("acme/x", &seen, &["acme/x/t"])));
    let text = prompt("plugins: [acme/x]\n", &section("return 'ok'"));
    result(&run_on(&text, host, "", Some(1)));
    assert_eq!(
        seen.lock().unwrap().services,
        vec![Vec::<String>::new()],
        "a Host without an operator offers no input broker"
    );
}

/// Tools at a glance: "A Harness tool reaches a run only this way." Tool slots: "Every Plugin
/// named by a slot's first two segments belongs in plugins:. If that Plugin contributed no
/// tools to the catalog, prepare refuses the run with RequirementsUnmet".
#[test]
fn a_slot_of_a_registered_but_undeclared_plugin_is_refused() {
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let text = prompt(
        "tools:\n  fetch: acme/web/fetch\n  again: acme/web/fetch\n",
        &section("return tools.call('fetch')"),
    );
    assert_eq!(
        error(&run_on(&text, h.host, "", Some(1))),
        (
            "RequirementsUnmet".into(),
            "the environment cannot satisfy this prompt:\n- missing required Plugin: acme/web"
                .into()
        )
    );
}

/// Tool slots: "The catalog finds a tool only by its full tool path, and only aliases declared
/// under tools: are bound." Calling tools from Lua: "Name the tool by its alias string, used
/// exactly as written".
#[test]
fn only_declared_aliases_are_bound_and_aliases_match_exactly() {
    let h = TestHost::new(
        "",
        "acme/web",
        vec![
            TestTool::new("acme/web/fetch"),
            TestTool::new("acme/web/search"),
        ],
    );
    let code = "local ok1, e1 = pcall(tools.call, 'search', {})\nlocal ok2, e2 = pcall(tools.add, 'search')\nlocal ok3, e3 = pcall(tools.call, 'Fetch', {})\nreturn e1.kind .. '|' .. tostring(e1) .. '|' .. e2 .. '|' .. tostring(search) .. '|' .. e3.kind .. '|' .. e3.name";
    let text = prompt(
        &web_frontmatter(&[("fetch", "acme/web/fetch")]),
        &section(code),
    );
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("unbound_tool|tool \"search\" is not bound in this run; bound aliases: [fetch]|tools.add alias \"search\" is not a bound tool slot|nil|unbound_tool|Fetch")
    );
}

/// Tool slots: "The description comes from the Harness, the model reads it when deciding
/// whether to call the tool, and the Engine sets no length or sentence rule on it."
#[test]
fn the_catalog_description_reaches_the_model_whatever_its_length() {
    let long = format!(
        "{} No trailing period\n\nSecond paragraph",
        "Fetches a page. ".repeat(400)
    );
    let h = TestHost::new(
        "- text: done\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").description(&long)],
    );
    let text = prompt(
        &web_frontmatter(&[("fetch", "acme/web/fetch")]),
        &section(
            "tools.add('fetch')\nmodels.loop(messages.new():user('go'))\nreturn fetch.description",
        ),
    );
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some(long.as_str())
    );
    assert_eq!(h.requests.lock().unwrap()[0].tools[0].description, long);
}

/// Alias globals: "A Tool object is frozen. Assigning any field, existing or new, raises an
/// error naming the field" and "A Tool object has fields and no methods."
#[test]
fn tool_objects_refuse_new_fields_and_have_no_methods() {
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let code = "local ok1, e1 = pcall(function() page.extra = 1 end)\nlocal ok2, e2 = pcall(function() page.wire_name = 'x' end)\nlocal ok3 = pcall(function() return page:call({}) end)\nlocal ok4 = pcall(function() return page:add() end)\nreturn tostring(ok1) .. '|' .. tostring(e1) .. '|' .. tostring(e2) .. '|' .. tostring(ok3) .. tostring(ok4) .. '|' .. page.wire_name";
    let text = prompt(
        &web_frontmatter(&[("page", "acme/web/fetch")]),
        &section(code),
    );
    let out = result(&run_on(&text, h.host, "", Some(1))).unwrap();
    let parts: Vec<&str> = out.split('|').collect();
    assert_eq!(parts[0], "false");
    assert!(
        parts[1].ends_with("Tool objects are frozen: cannot assign field \"extra\""),
        "{out}"
    );
    assert!(
        parts[2].ends_with("Tool objects are frozen: cannot assign field \"wire_name\""),
        "{out}"
    );
    assert_eq!(parts[3], "falsefalse", "no methods: {out}");
    assert_eq!(parts[4], "fetch");
}

/// Alias globals: "Alias globals exist everywhere Lua runs: in shared functions, walked
/// sections, call targets, and each fanout arm, which all see the same Tool objects."
#[test]
fn alias_globals_in_call_targets_and_fanout_arms_are_the_same_tool_objects() {
    let tool = TestTool::new("acme/web/fetch").description("Fetches");
    let log = tool.log();
    let h = TestHost::new("", "acme/web", vec![tool]);
    let describe = "page.name .. ',' .. page.wire_name .. ',' .. page.description .. ',' .. tostring(page.untrusted) .. ',' .. tools.call(page, { from = WHERE })";
    let body = format!(
        "```lua shared\nfunction label() return page.name .. '/' .. page.wire_name end\n```\n\n## S\n\n{}### C\n\n---\n\n{}### Arm\n\n---\n\n{}",
        lua(&format!(
            "local here = {}\nlocal c = call('### C')\nlocal arms = fanout('### Arm', {{'a1', 'a2'}})\nreturn here .. '\\n' .. c .. '\\n' .. arms[1] .. '\\n' .. arms[2] .. '\\n' .. label()",
            describe.replace("WHERE", "'walk'")
        )),
        lua(&format!("return {}", describe.replace("WHERE", "'call'"))),
        lua(&format!("return {}", describe.replace("WHERE", "item")))
    );
    let text = prompt(&web_frontmatter(&[("page", "acme/web/fetch")]), &body);
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("page,fetch,Fetches,false,output:{\"from\":\"walk\"}\npage,fetch,Fetches,false,output:{\"from\":\"call\"}\npage,fetch,Fetches,false,output:{\"from\":\"a1\"}\npage,fetch,Fetches,false,output:{\"from\":\"a2\"}\npage/fetch")
    );
    assert_eq!(log.lock().unwrap().len(), 4);
}

/// Alias globals: "The alias globals are installed after the shared library replays, so
/// top-level lua shared code sees them as nil, and a declared alias wins over a shared global
/// of the same name."
#[test]
fn a_declared_alias_wins_over_a_shared_global_of_the_same_name() {
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let body = format!(
        "```lua shared\nbefore = tostring(page)\npage = 'a shared string'\nfunction get() return page end\n```\n\n## S\n\n{}",
        lua("return before .. '|' .. page.name .. '|' .. get().wire_name")
    );
    let text = prompt(&web_frontmatter(&[("page", "acme/web/fetch")]), &body);
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("nil|page|fetch")
    );
}

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
        &prompt(&pair_slots(), &section(code)),
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
        result(&run_on(&prompt(&pair_slots(), &section(&code)), h.host, "", Some(1))).as_deref(),
        Some("the model asked for search: tool \"search\" is not in this section's scope; in-scope aliases: [fetch] (alias is a bound tool slot but was not added to this section's scope)")
    );
    // Any other failure is raised again by error(err) and keeps its kind.
    let h = web_pair("- calls:\n    - note: {}\n- text: x\n");
    let code = format!(
        "tools.add_local('note', 'd', {{}}, function() error({{ kind = 'mine' }}) end)\nlocal msgs = messages.new():user('go')\n{example}"
    );
    let outcome = run_on(&prompt(&pair_slots(), &section(&code)), h.host, "", Some(1));
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
    let text = prompt("models:\n  w: {}\n", &section(code));
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

/// Segment rules: "-, _, and . are not interchangeable. The Harness looks ids up exactly, so
/// acme/web-search, acme/web_search, and acme/web.search are three different Plugins." and
/// "Names are kept exactly as written ... and compare byte for byte."
#[test]
fn ids_differing_only_in_separators_are_different_plugins() {
    for declared in ["acme/web_search", "acme/web.search"] {
        let h = TestHost::new("", "acme/web-search", vec![]);
        let text = prompt(
            &format!("plugins: [{declared}]\n"),
            &section("return 'ran'"),
        );
        assert_eq!(
            error(&run_on(&text, h.host, "", Some(1))),
            (
                "RequirementsUnmet".into(),
                format!(
                    "the environment cannot satisfy this prompt:\n- missing required Plugin: {declared}"
                )
            )
        );
    }
    let h = TestHost::new("", "acme/web-search", vec![]);
    let text = prompt("plugins: [acme/web-search]\n", &section("return 'ran'"));
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("ran")
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
            &prompt(&pair_slots(), &section(code)),
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
        result(&run_on(&prompt(&fm, &section(code)), h.host, "", Some(1))).as_deref(),
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
            &section(code),
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
        &prompt(&pair_slots(), &section(code)),
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
        &prompt(&pair_slots(), &section(code)),
        h.host,
        "",
        Some(1),
    ));
    let requests = h.requests.lock().unwrap();
    assert_eq!(requests[0].tools.len(), 1);
    assert_eq!(requests[0].tools[0].name, "fetch");
    assert_eq!(requests[0].tools[0].description, "my fetch");
}

/// A tool whose own `wire_name` and listing marks differ from the defaults.
struct OddTool {
    id: ToolId,
    schema: serde_json::Value,
}

#[async_trait]
impl Tool for OddTool {
    fn id(&self) -> &ToolId {
        &self.id
    }
    fn wire_name(&self) -> &str {
        "something_else"
    }
    fn description(&self) -> &str {
        "Odd"
    }
    fn parameters(&self) -> &serde_json::Value {
        &self.schema
    }
    fn trust(&self) -> Trust {
        Trust::Trusted
    }
    async fn call(
        &self,
        _arguments: &str,
        _cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput {
            text: "odd".into(),
            trust: Trust::Trusted,
            kind: OutputKind::Plain,
        })
    }
}

fn odd_host() -> Host {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut host = Host::offline();
    host.harness_mut().register(Arc::new(Recording {
        id: "acme/odd".into(),
        conflicts: Vec::new(),
        seen,
        make: Box::new(|_: &Activation| {
            vec![
                Arc::new(OddTool {
                    id: ToolId::new("acme/odd/fetch"),
                    schema: serde_json::json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
                }) as Arc<dyn Tool>,
                Arc::new(TestTool::new("acme/odd/page").untrusted().schema(
                    serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}}),
                )) as Arc<dyn Tool>,
            ]
        }),
    }));
    host
}

const ODD_SLOTS: &str =
    "plugins: [acme/odd]\ntools:\n  getter: acme/odd/fetch\n  reader: acme/odd/page\n";

/// Alias globals: ".parameters is always an empty table, so a tool's real argument schema is
/// not readable from Lua. ... .untrusted is always false, and it does not report whether the
/// tool's output is untrusted." — for tools with real schemas, one listed as trusted and one
/// answering untrusted output.
#[test]
fn tool_object_parameters_and_untrusted_ignore_the_tool() {
    let code = "local function show(t) return t.name .. ',' .. tostring(t.untrusted) .. ',' .. type(t.parameters) .. ',' .. tostring(next(t.parameters)) end\nreturn show(getter) .. '|' .. show(reader) .. '|' .. reader.wire_name";
    let text = prompt(ODD_SLOTS, &section(code));
    assert_eq!(
        result(&run_on(&text, odd_host(), "", Some(1))).as_deref(),
        Some("getter,false,table,nil|reader,false,table,nil|page")
    );
}

/// Alias globals: ".wire_name is the last segment of the tool path, fetch for
/// promptforge/web/fetch, whatever alias the prompt chose." — also when the Plugin's tool
/// reports another `Tool::wire_name()`.
#[test]
fn tool_object_wire_name_is_the_paths_last_segment() {
    let text = prompt(ODD_SLOTS, &section("return getter.wire_name"));
    assert_eq!(
        result(&run_on(&text, odd_host(), "", Some(1))).as_deref(),
        Some("fetch")
    );
}

/// Handler errors: "Local tool aliases ... each differs from every bound slot alias" and
/// "duplicates a bound tool slot when the alias is already a bound tool slot"; Scope errors:
/// a slot whose tool the catalog lacks "stays unbound". So a local tool may take the alias
/// of an unbound slot, and tools.call then reaches it ("A tools.call that names neither a
/// local tool nor a bound alias raises ...").
#[test]
fn a_local_tool_may_take_the_alias_of_an_unbound_slot() {
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch"), ("gone", "acme/web/gone")]);
    let code = "tools.add_local('gone', 'd', {}, function() return 'local' end)\nreturn tools.call('gone')";
    assert_eq!(
        result(&run_on(&prompt(&fm, &section(code)), h.host, "", Some(1))).as_deref(),
        Some("local")
    );
}

/// Scope errors: "A Harness tool whose parameter schema is not a JSON object fails the run
/// when a section offers it" — binding it, calling it from Lua, and rounds that do not offer
/// it are fine.
#[test]
fn a_schema_that_is_not_an_object_fails_only_when_offered() {
    let h = TestHost::new(
        "- text: ok\n",
        "acme/web",
        vec![TestTool::new("acme/web/fetch").schema(serde_json::json!(["not", "an", "object"]))],
    );
    let fm = web_frontmatter(&[("fetch", "acme/web/fetch")]);
    let code = "local r = tools.call('fetch', { a = 1 })\nlocal reply = models.loop(messages.new():user('go'))\nreturn r .. '|' .. reply";
    assert_eq!(
        result(&run_on(&prompt(&fm, &section(code)), h.host, "", Some(1))).as_deref(),
        Some("output:{\"a\":1}|ok")
    );
}

/// How declarations are matched: "A Plugin can name another Plugin as a conflict ... A prompt
/// that declares both is refused before the run starts with RequirementsUnmet: neither
/// activates" — also when one of the two is declared optional.
#[test]
fn a_conflict_with_an_optional_plugin_is_refused_too() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut host = Host::offline();
    let mut fs = Recording::new("acme/fs", &seen, &["acme/fs/read"]);
    fs.conflicts = vec!["acme/memfs".into()];
    host.harness_mut().register(Arc::new(fs));
    host.harness_mut().register(Arc::new(Recording::new(
        "acme/memfs",
        &seen,
        &["acme/memfs/read"],
    )));
    let text = prompt(
        "plugins:\n  - acme/fs\n  - ref: acme/memfs\n    optional: true\n",
        &section("return 'ran'"),
    );
    assert_eq!(
        error(&run_on(&text, host, "", Some(1))),
        (
            "RequirementsUnmet".into(),
            "the environment cannot satisfy this prompt:\n- conflicting Plugins: acme/fs and acme/memfs cannot be activated together; declare one or the other".into()
        )
    );
    assert!(
        seen.lock().unwrap().activated.is_empty(),
        "neither activates"
    );
}

/// Alias globals: "Alias globals exist everywhere Lua runs" and "The same tools table is
/// present in every section VM, the H1 body ... included" — the H1 body sees the alias
/// global and can call through it.
#[test]
fn the_h1_body_sees_alias_globals() {
    let h = TestHost::new("", "acme/web", vec![TestTool::new("acme/web/fetch")]);
    let body = format!(
        "{}## S\n\n{}",
        lua("var.h1 = page.name .. ',' .. page.wire_name .. ',' .. tools.call(page, { h = 1 })"),
        lua("return var.h1")
    );
    let text = prompt(&web_frontmatter(&[("page", "acme/web/fetch")]), &body);
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("page,fetch,output:{\"h\":1}")
    );
}
