//! Trust in the language server (`host.md` §1.1, `editor.md`): opening a prompt
//! of a repository whose `promptforge.toml` is not trusted starts none of its
//! programs and connects nowhere; the Plugin gets one information diagnostic on
//! its entry, and runs are refused with the same words. Trusted by the client
//! (`initializationOptions.trusted`) or by `promptforge trust`, the same Plugin
//! starts. A client that says the workspace is not trusted gets no run lens and
//! no run.

use std::path::Path;
use std::time::{Duration, Instant};

use promptforge_engine::testing::http::{Answers, Server};
use promptforge_tests::lsp_client::{file_uri, range_of, with_code, LspClient};
use promptforge_tests::{run_in, Scratch};
use serde_json::{json, Value};

const PROMPT: &str = "---\nname: innocent\ndescription: d\npromptforge: 0\nplugins:\n  - evil/mcp\nmodels:\n  writer: {}\n---\n\n# Innocent\n\n```lua\nreturn writer:infer('hi')\n```\n";

/// A repository whose configuration starts `sh` (which leaves a marker file) and
/// sends a secret to `model`.
fn evil_repository(label: &str, model: &Server) -> Scratch {
    let scratch = Scratch::new(label);
    let marker = scratch.path().join("STARTED");
    scratch.write(
        "promptforge.toml",
        format!(
            "default_model = \"m\"\n\n[model.m]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"HOME\"\n\n[plugin.\"evil/mcp\"]\ncommand = \"sh\"\nargs = [\"-c\", \"touch {}\"]\n",
            model.url(),
            marker.display()
        ),
    );
    scratch.write("innocent.md", PROMPT);
    scratch
}

fn started(scratch: &Scratch) -> bool {
    scratch.path().join("STARTED").exists()
}

/// Waits up to `limit` for `condition`; its last value.
fn within(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    condition()
}

fn server(options: Value) -> LspClient {
    let mut client = LspClient::start_with_env(&[]);
    client.initialize_with(json!({}), options);
    client
}

fn run(client: &mut LspClient, uri: &str) -> Result<Value, Value> {
    client.request(
        "workspace/executeCommand",
        json!({ "command": "promptforge.run", "arguments": [{ "uri": uri }] }),
    )
}

fn refusal(dir: &Path) -> String {
    format!(
        "{}:6: model.m.api_key_env would hand the environment variable \"HOME\" to a server or program, and this configuration is not trusted; review it, then run: promptforge trust {} (1 more keys need trust)",
        dir.join("promptforge.toml").display(),
        dir.display()
    )
}

#[test]
fn an_untrusted_repository_is_checked_but_starts_nothing_and_sends_nothing() {
    let model = Server::serve_blocking(Answers::InOrder(Vec::new()));
    let repo = evil_repository("lsp-trust-evil", &model);
    let dir = std::fs::canonicalize(repo.path()).unwrap();
    let uri = file_uri(&repo, "innocent.md");
    let mut client = server(Value::Null);
    client.open(&uri, 1, PROMPT);
    let diagnostics = client.diagnostics(&uri, 1);
    let trust = with_code(&diagnostics, "Trust");
    assert_eq!(trust.len(), 1, "{diagnostics:#?}");
    assert_eq!(trust[0]["severity"], 3);
    assert_eq!(trust[0]["range"], range_of(PROMPT, "evil/mcp", 0));
    assert_eq!(
        trust[0]["message"],
        format!(
            "the Plugin evil/mcp is not started here: {}:9: plugin.\"evil/mcp\".command would start a program, and this configuration is not trusted; review it, then run: promptforge trust {}",
            dir.join("promptforge.toml").display(),
            dir.display()
        )
    );
    assert!(
        diagnostics.iter().all(|d| d["severity"] != 1),
        "nothing blames the prompt: {diagnostics:#?}"
    );
    let answer = run(&mut client, &uri).unwrap_err();
    assert_eq!(answer["message"], refusal(&dir));
    // Saves and edits do not start it either.
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": { "uri": uri } }),
    );
    client.change(&uri, 2, json!([{ "text": format!("{PROMPT}\n") }]));
    client.diagnostics(&uri, 2);
    assert!(!within(Duration::from_millis(1500), || started(&repo)));
    assert_eq!(model.accepted(), 0, "no connection was made");
    client.shutdown();

    // The same repository, trusted by the client: the Plugin starts.
    let mut client = server(json!({ "trusted": true }));
    client.open(&uri, 1, PROMPT);
    assert!(within(Duration::from_secs(10), || started(&repo)));
    client.shutdown();
}

#[test]
fn a_configuration_recorded_by_promptforge_trust_is_trusted() {
    let model = Server::serve_blocking(Answers::InOrder(Vec::new()));
    let repo = evil_repository("lsp-trust-recorded", &model);
    let uri = file_uri(&repo, "innocent.md");
    let trust = run_in(repo.path(), &["trust"]);
    assert_eq!(trust.code, Some(0), "{}", trust.stderr);
    let mut client = server(Value::Null);
    client.open(&uri, 1, PROMPT);
    assert!(within(Duration::from_secs(10), || started(&repo)));
    client.shutdown();
}

#[test]
fn a_client_that_does_not_trust_the_workspace_gets_no_run() {
    let model = Server::serve_blocking(Answers::InOrder(Vec::new()));
    let repo = Scratch::new("lsp-trust-restricted");
    repo.write("plain.md", "---\nname: plain\ndescription: d\npromptforge: 0\n---\n\n# Plain\n\n```lua\nreturn 'x'\n```\n");
    let uri = file_uri(&repo, "plain.md");
    let text = std::fs::read_to_string(repo.path().join("plain.md")).unwrap();
    let mut client = server(json!({ "trusted": false }));
    client.open(&uri, 1, &text);
    assert_eq!(client.diagnostics(&uri, 1), Vec::<Value>::new());
    let lenses = client
        .request(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": uri } }),
        )
        .unwrap();
    assert_eq!(lenses, json!([]));
    let answer = run(&mut client, &uri).unwrap_err();
    assert_eq!(
        answer["message"],
        "this workspace is not trusted, so prompts and their tests do not run here (trust the workspace in the editor, then try again)"
    );
    // Even a recorded configuration stays untrusted in Restricted Mode.
    let evil = evil_repository("lsp-trust-restricted-evil", &model);
    assert_eq!(run_in(evil.path(), &["trust"]).code, Some(0));
    let evil_uri = file_uri(&evil, "innocent.md");
    client.open(&evil_uri, 1, PROMPT);
    let diagnostics = client.diagnostics(&evil_uri, 1);
    assert_eq!(
        with_code(&diagnostics, "Trust").len(),
        1,
        "{diagnostics:#?}"
    );
    assert!(!within(Duration::from_millis(1000), || started(&evil)));
    client.shutdown();
}

#[test]
fn the_debug_adapter_launches_an_untrusted_repository_only_with_trust() {
    let model = Server::serve_blocking(Answers::InOrder(Vec::new()));
    let repo = evil_repository("dap-trust", &model);
    let dir = std::fs::canonicalize(repo.path()).unwrap();
    let program = dir.join("innocent.md");
    let mut client = promptforge_tests::dap_client::DapClient::start_untrusted();
    client.ok("launch", json!({ "program": program }));
    client.ok("configurationDone", Value::Null);
    assert_eq!(client.event("exited")["body"]["exitCode"], 2);
    let stderr = client.output_until_terminated("stderr");
    assert_eq!(stderr, format!("promptforge: {}\n", refusal(&dir)));
    assert!(!started(&repo));
    assert_eq!(model.accepted(), 0);
}
