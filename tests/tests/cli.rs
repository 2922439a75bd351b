//! The `promptforge check` command line: folder walks, path order, skipping,
//! exit codes, errors on stderr, and the `json` and `github` formats.

use promptforge_tests::{run_in, workspace_root, Scratch};
use serde_json::Value;

const NAME_RULE: &str = "expected [a-z0-9][a-z0-9_-]{0,63}";
const NOT_A_PROMPT: &str = "not a PromptForge prompt: the frontmatter has no promptforge: key";
const NO_FRONTMATTER: &str = "a prompt starts with YAML frontmatter between two --- lines";

/// A valid prompt.
const VALID: &str = "---\nname: ok\ndescription: d\npromptforge: 0\n---\n\n# Title\n";

/// A prompt with one problem: `invalid prompt name `{name}`` at 2:7.
fn bad_name(name: &str) -> String {
    format!("---\nname: {name}\ndescription: d\npromptforge: 0\n---\n\n# Title\n")
}

fn bad_name_line(path: &str, name: &str) -> String {
    format!("{path}:2:7: error[Frontmatter]: invalid prompt name `{name}`: {NAME_RULE}\n")
}

/// A project folder with prompts, non-prompts and folders a walk skips.
fn project() -> Scratch {
    let scratch = Scratch::new("walk");
    for file in [
        "proj/b.md",
        "proj/a.md",
        "proj/README.markdown",
        "proj/sub-x.md",
        "proj/sub/c.md",
        "proj/sub/deeper/d.md",
        // Never read: not Markdown, or in folders a walk skips.
        "proj/x.txt",
        "proj/target/t.md",
        "proj/node_modules/n.md",
        "proj/.hidden/h.md",
        "proj/sub/.git/g.md",
    ] {
        scratch.write(file, bad_name("Bad"));
    }
    scratch.write("proj/valid.md", VALID);
    scratch.write("proj/notes.md", "---\ntitle: Notes\n---\n\n# Notes\n");
    scratch.write("proj/plain.md", "# Just Markdown\n");
    scratch
}

fn walked(prefix: &str) -> String {
    [
        "README.markdown",
        "a.md",
        "b.md",
        "sub-x.md",
        "sub/c.md",
        "sub/deeper/d.md",
    ]
    .iter()
    .map(|file| bad_name_line(&format!("{prefix}{file}"), "Bad"))
    .collect()
}

#[test]
fn folder_walk_in_bytewise_path_order_skipping_non_prompts() {
    let scratch = project();
    let run = run_in(scratch.path(), &["check", "proj"]);
    assert_eq!(run.stdout, walked("proj/"));
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, Some(1));

    let run = run_in(scratch.path(), &["check", "proj/"]);
    assert_eq!(run.stdout, walked("proj/"));
}

#[test]
fn default_path_is_the_current_folder_printed_without_prefix() {
    let scratch = project();
    let dir = scratch.path().join("proj");
    let run = run_in(&dir, &["check"]);
    assert_eq!(run.stdout, walked(""));
    assert_eq!(run.code, Some(1));
    assert_eq!(run_in(&dir, &["check", "."]).stdout, walked(""));
}

#[test]
fn explicit_files_in_path_order_and_non_prompts_reported() {
    let scratch = project();
    let run = run_in(
        scratch.path(),
        &[
            "check",
            "proj/notes.md",
            "proj/b.md",
            "proj/a.md",
            "proj/a.md",
        ],
    );
    let expected = format!(
        "{}{}proj/notes.md: error[Version]: {NOT_A_PROMPT}\n",
        bad_name_line("proj/a.md", "Bad"),
        bad_name_line("proj/b.md", "Bad"),
    );
    assert_eq!(run.stdout, expected);
    assert_eq!(run.code, Some(1));

    // Markdown with no frontmatter at all, named explicitly: language.md §1.1's
    // Frontmatter error, the one the editor shows for such text (editor.md §1).
    let run = run_in(scratch.path(), &["check", "proj/plain.md"]);
    assert_eq!(
        run.stdout,
        format!("proj/plain.md:1:1: error[Frontmatter]: {NO_FRONTMATTER}\n")
    );
    assert_eq!(run.code, Some(1));
}

#[test]
fn clean_prompts_exit_zero_with_no_output() {
    let scratch = Scratch::new("clean");
    scratch.write("ok/one.md", VALID);
    scratch.write("ok/notes.md", "# not a prompt, skipped in a folder\n");
    let run = run_in(scratch.path(), &["check", "ok"]);
    assert_eq!((run.stdout.as_str(), run.code), ("", Some(0)));
    let run = run_in(scratch.path(), &["check", "--format", "json", "ok"]);
    let value: Value = serde_json::from_str(&run.stdout).expect("json output");
    assert_eq!(value, Value::Array(Vec::new()));
    assert_eq!(run.code, Some(0));
}

#[test]
fn nonexistent_path_is_a_usage_error() {
    let scratch = Scratch::new("missing");
    scratch.write("bad.md", bad_name("Bad"));
    let run = run_in(scratch.path(), &["check", "missing.md"]);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "promptforge: missing.md: no such file or folder\n"
    );
    assert_eq!(run.code, Some(2));

    // The other paths are still checked; the exit code says a path was wrong.
    let run = run_in(scratch.path(), &["check", "bad.md", "nowhere"]);
    assert_eq!(run.stdout, bad_name_line("bad.md", "Bad"));
    assert_eq!(run.stderr, "promptforge: nowhere: no such file or folder\n");
    assert_eq!(run.code, Some(2));
}

#[test]
#[cfg(unix)]
fn a_device_or_a_pipe_named_as_a_prompt_is_refused_without_reading_it() {
    let scratch = Scratch::new("devices");
    let pipe = scratch.path().join("pipe.md");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo makes a pipe");
    for command in ["check", "run", "catalog"] {
        // Reading /dev/zero would never end; opening a pipe waits for a writer.
        let run = run_in(scratch.path(), &[command, "/dev/zero"]);
        assert_eq!(
            run.stderr, "promptforge: /dev/zero: not a regular file\n",
            "{command}"
        );
        assert_eq!(run.code, Some(2), "{command}");
        let run = run_in(scratch.path(), &[command, "pipe.md"]);
        assert_eq!(
            run.stderr, "promptforge: pipe.md: not a regular file\n",
            "{command}"
        );
        assert_eq!(run.code, Some(2), "{command}");
    }
}

#[test]
fn non_utf8_files() {
    let scratch = Scratch::new("latin1");
    scratch.write("docs/latin1.md", b"# Caf\xe9\n");
    // Found in a folder and not a prompt: skipped.
    let run = run_in(scratch.path(), &["check", "docs"]);
    assert_eq!((run.stdout.as_str(), run.code), ("", Some(0)));
    // Named explicitly: it cannot be read as text.
    let run = run_in(scratch.path(), &["check", "docs/latin1.md"]);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with("promptforge: docs/latin1.md: "),
        "{}",
        run.stderr
    );
    assert_eq!(run.code, Some(2));
}

#[test]
fn usage_errors_exit_two() {
    let dir = workspace_root();
    assert_eq!(run_in(&dir, &["check", "--format", "xml"]).code, Some(2));
    assert_eq!(run_in(&dir, &["check", "--no-such-flag"]).code, Some(2));
    assert_eq!(run_in(&dir, &["no-such-command"]).code, Some(2));
    assert_eq!(run_in(&dir, &[]).code, Some(2));
    assert_eq!(run_in(&dir, &["check", "--help"]).code, Some(0));
}

#[test]
fn common_flags_are_accepted() {
    let scratch = Scratch::new("flags");
    scratch.write("one.md", VALID);
    scratch.write("promptforge.toml", "[limits]\ncall_depth = 4\n");
    for args in [
        &["check", "-q", "one.md"][..],
        &["-v", "check", "one.md"][..],
        &["check", "--config", "promptforge.toml", "one.md"][..],
        &[
            "check",
            "--seed",
            "7",
            "--no-input",
            "--store",
            ".",
            "one.md",
        ][..],
    ] {
        let run = run_in(scratch.path(), args);
        assert_eq!((run.stdout.as_str(), run.code), ("", Some(0)), "{args:?}");
    }
}

#[cfg(unix)]
#[test]
fn linked_folders_are_not_followed() {
    let scratch = Scratch::new("loop");
    scratch.write("top/a.md", bad_name("Bad"));
    std::os::unix::fs::symlink(scratch.path().join("top"), scratch.path().join("top/again"))
        .expect("a symlink can be made");
    let run = run_in(scratch.path(), &["check", "top"]);
    assert_eq!(run.stdout, bad_name_line("top/a.md", "Bad"));
    assert_eq!(run.code, Some(1));
}

#[test]
fn examples_are_clean_on_a_host_that_configures_search() {
    // Four examples search: on a Host without `[web] search_endpoint` their
    // `search` slot stays unbound (host.md §3), which `check` reports as the
    // editor does (the next test); with search configured they are clean.
    // (`examples/tools/promptforge.toml` configures it for that folder, and
    // `--config` names a file that does for every folder.)
    let run = run_in(
        &workspace_root(),
        &[
            "check",
            "--config",
            "tests/fixtures/examples-search.toml",
            "examples",
        ],
    );
    assert_eq!(run.stdout, "", "examples must be valid prompts");
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, Some(0));
}

#[test]
fn without_search_the_searching_examples_report_their_unbound_slot() {
    // `examples/tools/promptforge.toml` configures search for its folder, so the
    // example is checked from a copy in a folder without configuration.
    let scratch = Scratch::new("no-search");
    let prompt = std::fs::read_to_string(workspace_root().join("examples/tools/researcher.md"))
        .expect("the example can be read");
    scratch.write("researcher.md", prompt);
    let run = run_in(scratch.path(), &["check", "researcher.md"]);
    assert_eq!(
        run.stdout,
        "researcher.md:8:11: warning[RequirementsUnmet]: the catalog has no tool promptforge/web/search, so the slot \"search\" stays unbound; did you mean promptforge/web/fetch?\n\
         researcher.md:20:12: error[UnboundToolSlot]: tools.add alias \"search\" is not a bound tool slot\n"
    );
    assert_eq!(run.code, Some(1));
}

/// A prompt with an astral character before an error, and an unlocated problem.
const ASTRAL: &str = "---\nname: ok\ndescription: d\npromptforge: 0\ntools: {\"🔧\": a/b/c, x: 5}\nplugins:\n  - promptforge/web\n  - promptforge/web\n---\n\n# Title\n";

#[test]
fn json_format() {
    let scratch = Scratch::new("json");
    scratch.write("astral.md", ASTRAL);
    let run = run_in(scratch.path(), &["check", "--format", "json", "astral.md"]);
    assert_eq!(run.code, Some(1));
    let value: Value = serde_json::from_str(&run.stdout).expect("json output");
    let problems = value.as_array().expect("an array");
    assert_eq!(problems.len(), 3, "{value:#}");

    let alias = &problems[0];
    assert_eq!(alias["path"], "astral.md");
    assert_eq!(alias["kind"], "Frontmatter");
    assert_eq!(
        alias["message"],
        "invalid alias \"🔧\": expected [A-Za-z][A-Za-z0-9_-]{0,63}"
    );
    assert_eq!(
        (alias["line"].as_u64(), alias["column"].as_u64()),
        (Some(5), Some(9))
    );
    assert_eq!(alias["range"]["start"]["line"], 4);
    assert_eq!(alias["range"]["start"]["character"], 8);
    assert_eq!(alias["byteRange"]["start"], ASTRAL.find("\"🔧\"").unwrap());

    // `5` comes after the two UTF-16 code units of 🔧: column 24 in characters,
    // character 24 (0-based) in UTF-16.
    let value_error = &problems[1];
    assert_eq!(
        value_error["message"],
        "invalid type: integer `5`, expected an exact tool path string"
    );
    assert_eq!(value_error["line"], 5);
    assert_eq!(value_error["column"], 24);
    assert_eq!(
        value_error["range"],
        serde_json::json!({"start": {"line": 4, "character": 24}, "end": {"line": 4, "character": 25}})
    );
    let five = ASTRAL.find("5}").unwrap();
    assert_eq!(
        value_error["byteRange"],
        serde_json::json!({"start": five, "end": five + 1})
    );

    // Printed without a position, placed on the second declaration, related to the first.
    let duplicate = &problems[2];
    assert_eq!(
        duplicate["message"],
        "invalid frontmatter: Plugin promptforge/web is declared more than once under plugins"
    );
    assert!(duplicate["line"].is_null() && duplicate["column"].is_null());
    assert_eq!(
        duplicate["byteRange"]["start"],
        ASTRAL.rfind("promptforge/web").unwrap()
    );
    let related = duplicate["related"].as_array().expect("related array");
    assert_eq!(related.len(), 1);
    assert_eq!(
        related[0]["byteRange"]["start"],
        ASTRAL.find("promptforge/web").unwrap()
    );
    assert_eq!(related[0]["range"]["start"]["line"], 6);
}

#[test]
fn json_format_not_a_prompt() {
    let scratch = Scratch::new("json-np");
    scratch.write("notes.md", "---\ntitle: Notes\n---\n# Notes\n");
    let run = run_in(scratch.path(), &["check", "--format=json", "notes.md"]);
    let value: Value = serde_json::from_str(&run.stdout).expect("json output");
    assert_eq!(value[0]["kind"], "Version");
    assert_eq!(value[0]["message"], NOT_A_PROMPT);
    assert!(value[0]["line"].is_null());
    // Printed without a position; placed on the opening line for the editor.
    assert_eq!(
        value[0]["range"],
        serde_json::json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}})
    );
    assert_eq!(run.code, Some(1));
}

#[test]
fn github_format() {
    let scratch = Scratch::new("github");
    scratch.write("a,b.md", bad_name("Bad%"));
    scratch.write("notes.md", "---\ntitle: Notes\n---\n# Notes\n");
    let run = run_in(
        scratch.path(),
        &["check", "--format", "github", "a,b.md", "notes.md"],
    );
    assert_eq!(
        run.stdout,
        format!(
            "::error file=a%2Cb.md,line=2,col=7,title=Frontmatter::invalid prompt name `Bad%25`: {NAME_RULE}\n\
             ::error file=notes.md,title=Version::{NOT_A_PROMPT}\n"
        )
    );
    assert_eq!(run.code, Some(1));
}

#[test]
fn json_name_error_covers_its_segment_and_reports_the_scalar() {
    let text = "---\nname: ok\ndescription: d\npromptforge: 0\nplugins:\n  - \"acme/Web\"\n---\n\n# Title\n";
    let scratch = Scratch::new("json-segment");
    scratch.write("segment.md", text);
    let run = run_in(scratch.path(), &["check", "--format", "json", "segment.md"]);
    let value: Value = serde_json::from_str(&run.stdout).expect("json output");
    let problem = &value[0];
    assert_eq!(
        problem["message"],
        "invalid Plugin id `acme/Web`: invalid global name: segment 2 contains `W`; allowed are a-z, 0-9, -, _ and ."
    );
    // line:column: the scalar's quote; the range: segment 2.
    assert_eq!(
        (problem["line"].as_u64(), problem["column"].as_u64()),
        (Some(6), Some(5))
    );
    let web = text.find("Web").unwrap();
    assert_eq!(
        problem["byteRange"],
        serde_json::json!({"start": web, "end": web + 3})
    );
    assert_eq!(
        problem["range"],
        serde_json::json!({"start": {"line": 5, "character": 10}, "end": {"line": 5, "character": 13}})
    );
}

/// A valid prompt declaring `plugins` and binding `tools` (YAML block bodies).
fn with_plugins(plugins: &str, tools: &str) -> String {
    format!(
        "---\nname: p\ndescription: d\npromptforge: 0\nplugins:\n{plugins}tools:\n{tools}---\n\n# T\n\n## S\n\n```lua\nreturn 'ok'\n```\n"
    )
}

#[test]
fn check_prepares_and_reports_missing_plugins() {
    // host.md §4: `check` "parses and prepares every prompt"; Tools chapter: the
    // requirements notice names each missing Plugin, slot-only ones after.
    let scratch = Scratch::new("prepare");
    scratch.write(
        "p.md",
        with_plugins(
            "  - promptforge/web\n  - acme/absent\n",
            "  fetch: promptforge/web/fetch\n  read: acme/other/read\n",
        ),
    );
    let run = run_in(scratch.path(), &["check", "p.md"]);
    assert_eq!(
        run.stdout,
        "p.md: error[RequirementsUnmet]: the environment cannot satisfy this prompt:\n- missing required Plugin: acme/absent\n- missing required Plugin: acme/other\np.md:10:9: error[RequirementsUnmet]: tool alias 'read' names acme/other/read, but this prompt does not declare its Plugin acme/other: declare it under plugins: (the Host registers no Plugin acme/other yet)\n"
    );
    assert_eq!(run.code, Some(1));
    let json = run_in(scratch.path(), &["check", "--format", "json", "p.md"]);
    let problems: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(problems[0]["kind"], "RequirementsUnmet");
    assert_eq!(problems[0]["line"], serde_json::Value::Null);
}

#[test]
fn check_prepares_against_the_prompts_own_configuration() {
    // A label naming a Host model the configuration lacks is a Binding problem at
    // its `model:` value; the configuration is the nearest promptforge.toml.
    let scratch = Scratch::new("prepare-config");
    scratch.write("promptforge.toml", "[model.local]\nprovider = \"echo\"\n");
    scratch.write(
        "sub/p.md",
        "---\nname: p\ndescription: d\npromptforge: 0\nmodels:\n  writer:\n    model: remote\n---\n\n# T\n",
    );
    let run = run_in(scratch.path(), &["check", "sub"]);
    assert_eq!(
        run.stdout,
        "sub/p.md:7:12: error[Binding]: model label \"writer\" uses the Host model \"remote\", which the configuration does not define; configured models: [local]\n"
    );
    scratch.write("promptforge.toml", "[limits]\nno_such_key = 1\n");
    let broken = run_in(scratch.path(), &["check", "sub"]);
    assert_eq!(broken.code, Some(2));
    assert!(broken.stderr.contains("unknown field"), "{}", broken.stderr);
}

#[test]
fn catalog_lists_the_hosts_plugins_and_a_prompts_slots() {
    let scratch = Scratch::new("catalog");
    let run = run_in(scratch.path(), &["catalog"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("promptforge/web\n  promptforge/web/fetch (untrusted, plain)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("      url: string (required)"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("promptforge/web/search"),
        "search needs an endpoint"
    );

    scratch.write(
        "promptforge.toml",
        "[web]\nsearch_endpoint = \"http://127.0.0.1:9/search\"\n",
    );
    let json = run_in(scratch.path(), &["catalog", "--format", "json"]);
    let object: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let paths: Vec<&str> = object["plugins"][0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["path"].as_str())
        .collect();
    assert_eq!(paths, ["promptforge/web/fetch", "promptforge/web/search"]);
    assert_eq!(object["plugins"][0]["tools"][1]["trust"], "untrusted");

    scratch.write(
        "p.md",
        with_plugins(
            "  - promptforge/web\n",
            "  get: promptforge/web/fetch\n  find: promptforge/web/find\n",
        ),
    );
    let slots = run_in(scratch.path(), &["catalog", "--format", "json", "p.md"]);
    let object: serde_json::Value = serde_json::from_str(&slots.stdout).expect("json");
    assert_eq!(
        object["slots"],
        serde_json::json!([
            { "alias": "get", "path": "promptforge/web/fetch", "bound": true },
            { "alias": "find", "path": "promptforge/web/find", "bound": false }
        ])
    );
    assert_eq!(object["catalog"][0]["plugin"], "promptforge/web");
    let text = run_in(scratch.path(), &["catalog", "p.md"]);
    assert!(
        text.stdout.contains("slots:\n  get -> promptforge/web/fetch (bound)\n  find -> promptforge/web/find (unbound: the catalog has no tool at this path)\n"),
        "{}",
        text.stdout
    );
    scratch.write(
        "q.md",
        with_plugins("  - acme/absent\n", "  x: acme/absent/x\n"),
    );
    let refused = run_in(scratch.path(), &["catalog", "q.md"]);
    assert_eq!(refused.code, Some(1));
    assert_eq!(
        refused.stdout,
        "q.md: error[RequirementsUnmet]: the environment cannot satisfy this prompt:\n- missing required Plugin: acme/absent\n"
    );
}

#[test]
fn catalog_starts_mcp_servers_and_shows_what_they_skipped() {
    // host.md §3: an MCP server's tools become `ns/name/{tool}`; names outside the
    // segment grammar are skipped with a log line. Needs node (the stub server).
    let scratch = Scratch::new("catalog-mcp");
    let stub = workspace_root().join("server/mcp/tests/fixtures/mcp_stub.js");
    scratch.write(
        "promptforge.toml",
        format!(
            "[plugin.\"acme/stub\"]\ncommand = \"node\"\nargs = [{:?}]\n",
            stub.display().to_string()
        ),
    );
    // A project's Plugin command runs only when the configuration is trusted.
    let run = run_in(scratch.path(), &["catalog", "--trust"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("acme/stub\n  acme/stub/echo (untrusted, plain)\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("  log: MCP server acme/stub: skipped the tool \"getTinyImage\": its name does not fit the segment grammar\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn check_says_at_the_slot_that_the_prompt_does_not_declare_its_plugin() {
    // Issue 23, trap 2: a newcomer binds a built-in tool and forgets `plugins:`.
    let scratch = Scratch::new("undeclared");
    scratch.write(
        "p.md",
        "---\nname: p\ndescription: d\npromptforge: 0\ntools:\n  fetch: promptforge/web/fetch\n---\n\n# T\n\n```lua\nreturn 'ok'\n```\n",
    );
    let run = run_in(scratch.path(), &["check", "p.md"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stdout,
        "p.md: error[RequirementsUnmet]: the environment cannot satisfy this prompt:\n- missing required Plugin: promptforge/web\np.md:6:10: error[RequirementsUnmet]: tool alias 'fetch' names promptforge/web/fetch, but this prompt does not declare its Plugin promptforge/web: add `- promptforge/web` under plugins:\n"
    );
}

/// `check --format json` of a path that cannot be used: the one JSON array on
/// stdout holds it as a problem of kind `Usage` (no position), nothing goes to
/// stderr, and the other paths are still checked; exit 2.
#[test]
fn check_format_json_lists_a_path_it_cannot_use_as_a_problem() {
    let examples = workspace_root().join("examples");
    let run = run_in(
        &examples,
        &["check", "--format", "json", "missing.md", "word-stats.md"],
    );
    assert_eq!((run.code, run.stderr.as_str()), (Some(2), ""));
    let problems: Value = serde_json::from_str(&run.stdout).expect("one JSON array");
    let usage: Vec<_> = problems
        .as_array()
        .expect("an array")
        .iter()
        .filter(|p| p["kind"] == "Usage")
        .collect();
    assert_eq!(usage.len(), 1, "{problems}");
    assert_eq!(
        (&usage[0]["path"], &usage[0]["line"], &usage[0]["severity"]),
        (
            &Value::from("missing.md"),
            &Value::Null,
            &Value::from("error")
        )
    );
}
