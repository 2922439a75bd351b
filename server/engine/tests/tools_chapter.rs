//! Tools chapter: the sentences about Plugins, the catalog, aliases and Tool objects
//! that no other suite checked (see `tests/TOOLS_CHAPTER.md`; scopes across sections,
//! model rounds and handlers are in `tools_chapter_rounds.rs`). Each test quotes the
//! sentence it checks and was written from that sentence first.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use promptforge_engine::harness::{
    Activation, ActivationError, OutputKind, Plugin, Tool, ToolError, ToolId, ToolOutput, Trust,
};
use promptforge_engine::input::ScriptedInput;
use promptforge_engine::testing::*;
use promptforge_engine::{Host, RunOptions, Store};
use tokio_util::sync::CancellationToken;

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
    let text = prompt("plugins:\n  - acme/b\n  - acme/a\n", "");
    let prepared = block_on(prepare_text(&text, &host)).expect("prepared");
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
        &section_body("var.ran = true\nreturn 'ran'"),
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
        &section_body("store.write('in.md', 'from lua')\nlocal got = tools.call('swap', { text = 'from the tool' })\nreturn got .. '|' .. store.read('out.md')"),
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
    let text = prompt("plugins: [acme/x]\n", &section_body("while true do end"));
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
    let text = prompt("plugins: [acme/x]\n", &section_body("return 'ok'"));
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
        &section_body("return tools.call('fetch')"),
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
        &section_body(code),
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
        &section_body(
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
        &section_body(code),
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

/// A Host with `acme/odd`: `fetch`, a tool whose own `wire_name` and listing marks
/// differ from the defaults, and `page`.
fn odd_host() -> Host {
    let odd = TestTool::new("acme/odd/fetch")
        .wire_name("something_else")
        .description("Odd")
        .declares(Trust::Trusted)
        .output("odd")
        .schema(serde_json::json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}));
    let page = TestTool::new("acme/odd/page")
        .untrusted()
        .schema(serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}}));
    let mut host = Host::offline();
    host.harness_mut()
        .register(Arc::new(FixedPlugin::with_tools(
            "acme/odd",
            vec![odd, page],
        )));
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
    let text = prompt(ODD_SLOTS, &section_body(code));
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
    let text = prompt(ODD_SLOTS, &section_body("return getter.wire_name"));
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
        result(&run_on(
            &prompt(&fm, &section_body(code)),
            h.host,
            "",
            Some(1)
        ))
        .as_deref(),
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
        result(&run_on(
            &prompt(&fm, &section_body(code)),
            h.host,
            "",
            Some(1)
        ))
        .as_deref(),
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
        &section_body("return 'ran'"),
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

/// Segment rules: "-, _, and . are not interchangeable. The Harness looks ids up exactly, so
/// acme/web-search, acme/web_search, and acme/web.search are three different Plugins." and
/// "Names are kept exactly as written ... and compare byte for byte."
#[test]
fn ids_differing_only_in_separators_are_different_plugins() {
    for declared in ["acme/web_search", "acme/web.search"] {
        let h = TestHost::new("", "acme/web-search", vec![]);
        let text = prompt(
            &format!("plugins: [{declared}]\n"),
            &section_body("return 'ran'"),
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
    let text = prompt(
        "plugins: [acme/web-search]\n",
        &section_body("return 'ran'"),
    );
    assert_eq!(
        result(&run_on(&text, h.host, "", Some(1))).as_deref(),
        Some("ran")
    );
}
