//! The Tools chapter's example prompts (`examples/tools/`), each run offline by the
//! real binary: the model is the script provider and the web Plugin's fetch and
//! search go to a real HTTP server on loopback that the test starts.

use std::path::PathBuf;
use std::process::Command;

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_tests::{binary, workspace_root, Run, Scratch};

const SEARCH_KEY_ENV: &str = "PF_EXAMPLES_SEARCH_KEY";

/// A loopback site: one HTML page and a search endpoint in Brave's response shape.
fn site() -> Server {
    Server::serve_blocking(Answers::by_path([
        (
            "/page",
            Reply::body(
                200,
                "text/html; charset=utf-8",
                "<html><body><h1>Rust</h1><p>A language empowering everyone.</p></body></html>",
            ),
        ),
        (
            "/search",
            Reply::json(
                200,
                r#"{"web":{"results":[{"title":"Rust","url":"https://www.rust-lang.org","description":"A systems language"}]}}"#,
            ),
        ),
    ]))
}

/// A scratch folder with a configuration: the scripted model answering `turns`, and
/// the web Plugin allowed to reach loopback, searching on `server`.
fn setup(server: &Server, turns: &str) -> Scratch {
    let scratch = Scratch::new("examples-tools");
    scratch.write("turns.yaml", turns);
    scratch.write(
        "promptforge.toml",
        format!(
            "default_model = \"scripted\"\n\n[model.scripted]\nprovider = \"script\"\npath = \"turns.yaml\"\n\n[web]\nallow_private_addresses = true\nsearch_endpoint = \"{}/search\"\nsearch_key_env = \"{SEARCH_KEY_ENV}\"\n",
            server.url()
        ),
    );
    scratch
}

fn example(name: &str) -> PathBuf {
    workspace_root().join("examples/tools").join(name)
}

/// Runs `promptforge run --config ... [extra...] examples/tools/NAME ARGS`.
fn run_example(scratch: &Scratch, name: &str, extra: &[&str], args: &str) -> Run {
    let output = Command::new(binary())
        .current_dir(scratch.path())
        .arg("run")
        .arg("--config")
        .arg(scratch.path().join("promptforge.toml"))
        .args(["--seed", "7"])
        .args(extra)
        .arg(example(name))
        .arg(args)
        .env_remove("PROMPTFORGE_CONFIG")
        .env(SEARCH_KEY_ENV, "test-key")
        .output()
        .expect("the promptforge binary can be started");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

fn ok(run: &Run) -> &str {
    assert_eq!(run.code, Some(0), "the run failed: {}", run.stderr);
    &run.stdout
}

fn calls(run: &Run) -> serde_json::Value {
    let object: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    assert_eq!(object["ok"], true, "{object}");
    object["calls"].clone()
}

#[test]
fn page_fetcher_returns_the_page_in_the_untrusted_envelope() {
    let server = site();
    let scratch = setup(&server, "[]\n");
    let run = run_example(
        &scratch,
        "page-fetcher.md",
        &[],
        &format!("{}/page", server.url()),
    );
    let out = ok(&run);
    assert!(
        out.starts_with("The text between the untrusted_input_"),
        "{out}"
    );
    assert!(out.contains("Rust"), "{out}");
    assert!(out.contains("A language empowering everyone."), "{out}");
    assert!(!out.contains("<h1>"), "HTML is turned into Markdown: {out}");
    assert_eq!(server.targets(), ["/page"]);
}

#[test]
fn researcher_lets_the_model_search_and_fetch() {
    let server = site();
    let turns = format!(
        "- calls:\n    - search: {{ query: \"rust\" }}\n    - fetch: {{ url: \"{}/page\" }}\n- text: \"Rust is a systems language.\"\n",
        server.url()
    );
    let scratch = setup(&server, &turns);
    let run = run_example(&scratch, "researcher.md", &[], "What is Rust?");
    assert_eq!(ok(&run), "Rust is a systems language.\n");
    assert_eq!(server.targets().len(), 2, "{:?}", server.targets());
    assert!(server.targets()[0].starts_with("/search?"));
    assert_eq!(server.targets()[1], "/page");
    let json = run_example(
        &scratch,
        "researcher.md",
        &["--format", "json"],
        "What is Rust?",
    );
    assert_eq!(calls(&json), serde_json::json!({ "search": 1, "fetch": 1 }));
}

#[test]
fn tool_inspector_reads_the_five_fields() {
    let server = site();
    let scratch = setup(&server, "[]\n");
    let run = run_example(&scratch, "tool-inspector.md", &[], "");
    assert_eq!(ok(&run), "page fetch false table\n");
}

#[test]
fn shared_helper_sees_the_alias_global_when_it_runs() {
    let server = site();
    let scratch = setup(&server, "[]\n");
    let run = run_example(&scratch, "shared-helper.md", &[], "");
    assert_eq!(ok(&run), "page (fetch)\n");
}

#[test]
fn two_step_research_finds_sources_then_writes() {
    let server = site();
    let turns = format!(
        "- calls:\n    - fetch: {{ url: \"{}/page\" }}\n- text: \"notes about Rust\"\n- text: \"Rust, in short.\"\n",
        server.url()
    );
    let scratch = setup(&server, &turns);
    let run = run_example(
        &scratch,
        "two-step-research.md",
        &["--format", "json"],
        "Rust",
    );
    let object: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(object["result"], "Rust, in short.", "{object}");
    assert_eq!(object["calls"], serde_json::json!({ "fetch": 1 }));
}

#[test]
fn two_step_research_write_section_offers_only_search() {
    // Find sources offers search (always) and fetch (added); Write offers only
    // search, so a model asking for fetch there is out of scope.
    let server = site();
    let turns = "- text: \"notes\"\n- calls:\n    - fetch: { url: \"http://127.0.0.1:1/\" }\n";
    let scratch = setup(&server, turns);
    let run = run_example(&scratch, "two-step-research.md", &[], "Rust");
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("error[Tool]: tool \"fetch\" is not in this section's scope; in-scope aliases: [search] (alias is a bound tool slot but was not added to this section's scope)"),
        "{}",
        run.stderr
    );
}

#[test]
fn sourced_answer_needs_a_fetched_page() {
    let server = site();
    let only_search = "- calls:\n    - search: { query: \"rust\" }\n- text: \"Rust is fast.\"\n";
    let scratch = setup(&server, only_search);
    assert_eq!(
        ok(&run_example(&scratch, "sourced-answer.md", &[], "Rust?")),
        "no sources were read\n"
    );
    let no_call = setup(&server, "- text: \"Rust is fast.\"\n");
    assert_eq!(
        ok(&run_example(&no_call, "sourced-answer.md", &[], "Rust?")),
        "no sources were read\n"
    );
    let fetched = format!(
        "- calls:\n    - fetch: {{ url: \"{}/page\" }}\n- text: \"Rust is fast [1].\"\n",
        server.url()
    );
    let with_page = setup(&server, &fetched);
    assert_eq!(
        ok(&run_example(&with_page, "sourced-answer.md", &[], "Rust?")),
        "Rust is fast [1].\n"
    );
}

#[test]
fn note_taker_saves_notes_through_a_local_tool() {
    let server = site();
    let turns = "- calls:\n    - save_note: { text: \"first\" }\n    - save_note: { text: \"second\" }\n- text: \"done\"\n";
    let scratch = setup(&server, turns);
    let store = scratch.path().join("store");
    std::fs::create_dir_all(&store).expect("a store folder");
    let store_arg = store.to_string_lossy().into_owned();
    let run = run_example(
        &scratch,
        "note-taker.md",
        &["--store", &store_arg],
        "Rust is fast. Rust is safe.",
    );
    assert_eq!(ok(&run), "2 notes saved\n");
    assert_eq!(
        std::fs::read_to_string(store.join("notes.md")).expect("notes.md"),
        "first\nsecond\n"
    );
}

#[test]
fn router_decides_in_the_h1_pass() {
    let server = site();
    let turns = "- calls:\n    - decide: { choice: \"short\" }\n- text: \"recorded\"\n";
    let scratch = setup(&server, turns);
    assert_eq!(
        ok(&run_example(&scratch, "router.md", &[], "a quick question")),
        "short\n"
    );
    let no_call = setup(&server, "- text: \"long, I think\"\n");
    assert_eq!(
        ok(&run_example(&no_call, "router.md", &[], "a quick question")),
        "no choice\n"
    );
}

#[test]
fn the_examples_check_clean_on_a_host_that_configures_search() {
    // Three of them search: on the built-in Host their `search` slot stays unbound
    // (host.md §3), which `check` reports (tests/tests/cli.rs).
    let run = promptforge_tests::run_in(
        &workspace_root(),
        &[
            "check",
            "--config",
            "tests/fixtures/examples-search.toml",
            "examples/tools",
        ],
    );
    assert_eq!(
        (run.stdout.as_str(), run.code),
        ("", Some(0)),
        "{}",
        run.stderr
    );
}
