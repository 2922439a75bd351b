//! `promptforge run` end to end: the real binary, its streams, formats and exit codes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use promptforge_engine::testing::http::{Answers, Reply, Server};
use promptforge_engine::testing::lua;
use promptforge_tests::{binary, run_bounded, workspace_root, Run, Scratch};
use serde_json::Value;

const ECHO_NOTICE: &str = "note: no model is configured; every model label uses the built-in echo model (configure one in promptforge.toml: see the book, docs/src/configuration.md)\n";

/// Runs the binary in `dir` with no configuration of the user's reaching it.
fn pf(dir: &Path, args: &[&str]) -> Run {
    pf_with(dir, args, None)
}

fn pf_with(dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let mut child = Command::new(binary())
        .current_dir(dir)
        .args(args)
        .env_remove("PROMPTFORGE_CONFIG")
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("stdin is written");
    }
    let output = child.wait_with_output().expect("the binary ends");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

fn prompt(body: &str) -> String {
    format!(
        "---\nname: p\ndescription: d\npromptforge: 0\nmodels:\n  w: {{}}\n---\n\n# T\n\n{body}"
    )
}

#[test]
fn the_result_alone_on_stdout_with_one_newline() {
    let s = Scratch::new("run-result");
    s.write(
        "a.md",
        prompt(&format!("## A\n\n{}", lua("log('x', 1)\nreturn args"))),
    );
    let run = pf(s.path(), &["run", "a.md", "hello", "world"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (Some(0), "hello world\n", "log: x\t1\n")
    );
    s.write(
        "b.md",
        prompt(&format!("## A\n\n{}", lua("return 'two\\n'"))),
    );
    assert_eq!(pf(s.path(), &["run", "b.md"]).stdout, "two\n");
    s.write("c.md", prompt(&format!("## A\n\n{}", lua("local x = 1"))));
    let run = pf(s.path(), &["run", "c.md"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (Some(0), "", "")
    );
}

#[test]
fn a_run_error_is_one_problem_line_on_stderr() {
    let s = Scratch::new("run-error");
    s.write(
        "a.md",
        prompt(&format!("## A\n\n{}", lua("local t = nil\nreturn t.x"))),
    );
    let run = pf(s.path(), &["run", "a.md"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "a.md:15:1: error[Lua]: attempt to index a nil value (local 't')\n"
    );
}

#[test]
fn parse_errors_refuse_at_the_first_with_the_parse_kind() {
    let s = Scratch::new("run-parse");
    s.write(
        "a.md",
        "---\nname: Bad\ndescription: d\npromptforge: 0\n---\n\n# T\n\n# Second\n",
    );
    let run = pf(s.path(), &["run", "a.md"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr, "a.md:2:7: error[Frontmatter]: invalid prompt name `Bad`: expected [a-z0-9][a-z0-9_-]{0,63}\n");
    s.write("n.md", "---\ntitle: notes\n---\n# Just notes\n");
    let run = pf(s.path(), &["run", "n.md"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        "n.md: error[Version]: not a PromptForge prompt: the frontmatter has no promptforge: key\n"
    );
    // No frontmatter at all: language.md §1.1's Frontmatter error at 1:1.
    s.write("m.md", "# Just notes\n");
    let run = pf(s.path(), &["run", "m.md"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        "m.md:1:1: error[Frontmatter]: a prompt starts with YAML frontmatter between two --- lines\n"
    );
}

#[test]
fn requirements_unmet_continues_on_the_following_lines() {
    let s = Scratch::new("run-requirements");
    s.write("a.md", "---\nname: p\ndescription: d\npromptforge: 0\nplugins: [promptforge/web, acme/absent]\ntools:\n  fetch: promptforge/web/fetch\n  read: acme/other/read\n---\n\n# T\n");
    let run = pf(s.path(), &["run", "a.md"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stderr,
        "a.md: error[RequirementsUnmet]: the environment cannot satisfy this prompt:\n- missing required Plugin: acme/absent\n- missing required Plugin: acme/other\n"
    );
}

#[test]
fn the_json_format_is_one_object() {
    let s = Scratch::new("run-json");
    s.write(
        "a.md",
        prompt(&format!(
            "## A\n\n{}",
            lua("log('hi')\nreturn models.infer(args)")
        )),
    );
    let run = pf(s.path(), &["run", "a.md", "--format", "json", "ping"]);
    assert_eq!(run.code, Some(0));
    let object: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    assert_eq!(object["ok"], true);
    assert_eq!(object["result"], "ping");
    assert_eq!(object["error"], Value::Null);
    assert_eq!(object["calls"], serde_json::json!({}));
    assert_eq!(object["log"], serde_json::json!(["hi"]));
    assert!(object["duration_ms"].is_u64());
    let keys: Vec<&str> = object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys.len(), 6);
    s.write("b.md", prompt(&format!("## A\n\n{}", lua("error('boom')"))));
    let run = pf(s.path(), &["run", "b.md", "--format", "json"]);
    assert_eq!(run.code, Some(1));
    let object: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(object["ok"], false);
    assert_eq!(object["result"], Value::Null);
    assert_eq!(
        object["error"],
        serde_json::json!({"kind": "Lua", "message": "boom", "line": 14, "column": 1})
    );
}

#[test]
fn the_echo_notice_is_given_once() {
    let s = Scratch::new("run-echo");
    s.write(
        "a.md",
        prompt(&format!(
            "## A\n\n{}",
            lua("models.infer('a')\nreturn models.infer('b')")
        )),
    );
    let run = pf(s.path(), &["run", "a.md"]);
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        ("b\n", ECHO_NOTICE)
    );
}

#[test]
fn a_seed_makes_two_runs_identical() {
    let s = Scratch::new("run-seed");
    s.write(
        "a.md",
        prompt(&format!(
            "## A\n\n{}",
            lua("return untrusted('x') .. sys.run")
        )),
    );
    let one = pf(s.path(), &["run", "a.md", "--seed", "42"]);
    let two = pf(s.path(), &["run", "--seed", "42", "a.md"]);
    let other = pf(s.path(), &["run", "a.md", "--seed", "43"]);
    assert_eq!(one.code, Some(0));
    assert_eq!(one.stdout, two.stdout);
    assert_ne!(one.stdout, other.stdout);
    let unseeded = pf(s.path(), &["run", "a.md"]);
    assert_ne!(unseeded.stdout, pf(s.path(), &["run", "a.md"]).stdout);
}

#[test]
fn the_store_on_disk() {
    let s = Scratch::new("run-store");
    s.write("data/in.md", "earlier\n");
    s.write(
        "a.md",
        prompt(&format!(
            "## A\n\n{}",
            lua("store.write('out/x.md', store.read('in.md') .. args)")
        )),
    );
    let run = pf(s.path(), &["run", "a.md", "--store", "data", "more"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(s.path().join("data/out/x.md")).unwrap(),
        "earlier\nmore"
    );
    let memory = pf(s.path(), &["run", "a.md"]);
    assert_eq!(memory.code, Some(1));
    assert!(
        memory
            .stderr
            .contains("error[Store]: no such store file \"in.md\""),
        "{}",
        memory.stderr
    );
}

#[test]
fn with_no_operator_input_ask_is_input_unavailable() {
    let dir = workspace_root().join("tests/run");
    for args in [
        &["run", "interview.md"][..],
        &["run", "interview.md", "--no-input"][..],
    ] {
        let run = pf(&dir, args);
        assert_eq!(run.code, Some(1));
        assert_eq!(
            run.stderr,
            "interview.md:12:1: error[Input]: no operator is available to answer input.ask\n"
        );
    }
}

#[test]
fn args_from_a_file_or_stdin() {
    let s = Scratch::new("run-args-file");
    s.write(
        "a.md",
        prompt(&format!("## A\n\n{}", lua("return '[' .. args .. ']'"))),
    );
    s.write("args.txt", "from a file");
    assert_eq!(
        pf(s.path(), &["run", "a.md", "--args-file", "args.txt"]).stdout,
        "[from a file]\n"
    );
    assert_eq!(
        pf_with(
            s.path(),
            &["run", "a.md", "--args-file", "-"],
            Some("piped")
        )
        .stdout,
        "[piped]\n"
    );
    let both = pf(
        s.path(),
        &["run", "a.md", "--args-file", "args.txt", "extra"],
    );
    assert_eq!(both.code, Some(2));
}

#[test]
fn usage_errors_exit_2() {
    let s = Scratch::new("run-usage");
    let run = pf(s.path(), &["run", "missing.md"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.starts_with("promptforge: missing.md: "),
        "{}",
        run.stderr
    );
    assert_eq!(pf(s.path(), &["run"]).code, Some(2));
}

#[test]
fn the_configuration_is_found_and_checked() {
    let s = Scratch::new("run-config");
    s.write(
        "p/a.md",
        prompt(&format!(
            "## A\n\n{}",
            lua("return models.infer('x') .. ' ' .. w.model")
        )),
    );
    s.write(
        "promptforge.toml",
        "default_model = \"s\"\n[model.s]\nprovider = \"script\"\npath = \"turns.yaml\"\n",
    );
    s.write("turns.yaml", "- text: scripted\n");
    let run = pf(s.path(), &["run", "p/a.md"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (Some(0), "scripted s\n", "")
    );
    s.write(
        "other.toml",
        "[model.s]\nprovider = \"echo\"\napi_key = \"sk-1\"\n",
    );
    let run = pf(s.path(), &["run", "p/a.md", "--config", "other.toml"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .starts_with("promptforge: other.toml:3: unknown field `api_key`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_log_flood_ends_at_the_log_limit_counting_what_the_host_keeps_per_line() {
    let s = Scratch::new("run-log-flood");
    s.write(
        "a.md",
        prompt(&format!("## A\n\n{}", lua("while true do log('') end"))),
    );
    let run = pf(s.path(), &["run", "a.md", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let object: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    assert_eq!(object["error"]["kind"], "Limit");
    assert_eq!(
        object["error"]["message"],
        "run log limit of 16777216 bytes exceeded"
    );
    // An empty line costs the 64 bytes the host keeps for any line: the
    // default 16 MiB hold 262,144 of them (not 16.7 million).
    assert_eq!(
        object["log"].as_array().map(Vec::len),
        Some(16 * 1024 * 1024 / 64)
    );
}

#[test]
fn ctrl_c_cancels_the_run_with_exit_130() {
    let dir = workspace_root().join("tests/run");
    let mut child = Command::new(binary())
        .current_dir(&dir)
        .args(["run", "spin.md"])
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    // The shell's builtin `kill`, which every POSIX shell has.
    let status = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .expect("sh runs");
    assert!(status.success());
    let output = loop {
        if let Some(_status) = child.try_wait().expect("the child can be polled") {
            break child.wait_with_output().expect("output");
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "the run did not stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(output.status.code(), Some(130));
    assert!(sent.elapsed() < Duration::from_secs(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "log: spinning\nspin.md: error[Cancelled]: the run was cancelled\n"
    );
}

#[test]
fn the_examples_run_offline() {
    let examples = workspace_root().join("examples");
    let run = pf(&examples, &["run", "word-stats.md", "The quick brown fox"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "4 words, 16 letters, 4.0 letters per word\n")
    );
    assert_eq!(run.stderr, "log: measured 4 words\n");
    let run = pf(&examples, &["run", "echo-draft.md", "the meeting moved"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), "Reply to: the meeting moved\n")
    );
    assert_eq!(
        run.stderr,
        format!("{ECHO_NOTICE}log: model echo answered in 1 record(s)\n")
    );
    let run = pf(
        &examples,
        &["run", "scripted/triage.md", "the app crashes on save"],
    );
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            Some(0),
            "Thanks for the report: the crash on save is a bug, and the team is on it.\n",
            "log: team: bug\n"
        )
    );
}

#[test]
fn flags_after_the_arguments_are_flags_and_a_double_dash_ends_them() {
    let root = promptforge_tests::workspace_root();
    let run = promptforge_tests::run_in(
        &root,
        &[
            "run",
            "examples/word-stats.md",
            "The",
            "quick",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let outcome: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(
        outcome["result"],
        "2 words, 8 letters, 4.0 letters per word"
    );
    let words = promptforge_tests::run_in(
        &root,
        &["run", "examples/word-stats.md", "--", "--format", "json"],
    );
    assert_eq!(words.stdout, "2 words, 12 letters, 6.0 letters per word\n");
}

/// `--args-file` names a device or a pipe, or stdin never ends: refused at once
/// (a device or a pipe before it is opened, stdin past 64 MiB), in bounded memory.
#[test]
#[cfg(unix)]
fn an_args_file_that_is_a_device_a_pipe_or_endless_is_refused() {
    let s = Scratch::new("run-args-device");
    s.write("a.md", prompt(&format!("## A\n\n{}", lua("return args"))));
    let made = Command::new("mkfifo").arg(s.path().join("pipe")).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo makes a pipe");
    let limit = Duration::from_secs(20);
    for file in ["/dev/zero", "pipe"] {
        let args = ["run", "a.md", "--args-file", file];
        let (run, took) = run_bounded(s.path(), &args, Stdio::null(), limit);
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            (
                "",
                format!("promptforge: {file}: not a regular file\n").as_str()
            ),
            "{file} took {took:?}"
        );
        assert_eq!(run.code, Some(2));
    }
    let zero = std::fs::File::open("/dev/zero").expect("/dev/zero opens");
    let args = ["run", "a.md", "--args-file", "-"];
    let (run, took) = run_bounded(s.path(), &args, Stdio::from(zero), limit);
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        ("", "promptforge: stdin: larger than 64 MiB\n"),
        "took {took:?}"
    );
    assert_eq!(run.code, Some(2));
}

/// A prompt whose one block asks the model `m`, configured at `server` with
/// `extra` keys, in a project configuration.
fn asking(s: &Scratch, server: &Server, extra: &str) {
    s.write(
        "promptforge.toml",
        format!(
            "default_model = \"m\"\n\n[model.m]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\nretries = 0\n{extra}",
            server.url()
        ),
    );
    s.write(
        "ask.md",
        prompt(&format!("## A\n\n{}", lua("return models.infer('hi')"))),
    );
}

/// `timeout_s` is one request's deadline: a server that sends a small chunk every
/// 300 ms, never waiting a whole second, still ends the run after one.
#[test]
#[cfg(unix)]
fn a_server_that_trickles_chunks_is_cut_at_timeout_s() {
    let small = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\".\"}}]}\n\n";
    let trickle = Reply::sse(small)
        .gap(Duration::from_millis(300))
        .then_repeat(small.as_bytes(), 40);
    let server = Server::serve_blocking(Answers::InOrder(vec![trickle]));
    let s = Scratch::new("run-trickle");
    binary(); // built before the clock starts
    asking(&s, &server, "timeout_s = 1\n");
    let (run, took) = run_bounded(
        s.path(),
        &["run", "ask.md"],
        Stdio::null(),
        Duration::from_secs(10),
    );
    assert_eq!(run.code, Some(1), "took {took:?}: {}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "error[Model]: model \"m\" failed: timed out after 1s ({}/v1/chat/completions)",
            server.url()
        )),
        "{}",
        run.stderr
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A server that streams 64 KiB deltas without end (64 MiB here) fails the run
/// at 16 MiB, in bounded memory.
#[test]
#[cfg(unix)]
fn a_model_that_streams_without_end_fails_the_run_at_16_mib() {
    let delta = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "x".repeat(64 * 1024)
    );
    let endless = Reply::sse(": endless\n\n")
        .gap(Duration::ZERO)
        .then_repeat(delta.as_bytes(), 1024);
    let server = Server::serve_blocking(Answers::InOrder(vec![endless]));
    let s = Scratch::new("run-endless");
    asking(&s, &server, "");
    binary(); // built before the clock starts
    let (run, took) = run_bounded(
        s.path(),
        &["run", "ask.md"],
        Stdio::null(),
        Duration::from_secs(20),
    );
    assert_eq!(run.code, Some(1), "took {took:?}: {}", run.stderr);
    assert!(
        run.stderr
            .contains("error[Model]: model \"m\" failed: the reply is larger than 16 MiB\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn lua_messages_name_lines_of_the_file() {
    // Issue 23, trap 5: Lua counted the lines of the block, not of the file.
    let scratch = Scratch::new("file-lines");
    scratch.write(
        "p.md",
        "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# T\n\nProse.\n\n```lua\nlocal function inner()\n  error('boom')\nend\nlocal _, e = pcall(inner)\nlog(e)\nlocal _, e2 = xpcall(function() local t = nil; return t.x end, function(m) return m end)\nlog(e2)\nlocal co = coroutine.create(function() error('in a coroutine') end)\nlog(select(2, coroutine.resume(co)))\n```\n",
    );
    let run = pf(scratch.path(), &["run", "p.md"]);
    assert_eq!(
        run.stderr,
        "log: line 13: boom\nlog: line 17: attempt to index a nil value (local 't')\nlog: line 19: in a coroutine\n",
        "{}",
        run.stdout
    );
    scratch.write(
        "q.md",
        "---\nname: q\ndescription: d\npromptforge: 0\n---\n\n# T\n\n```lua\nlocal x = (1 +\n  2\nreturn x\n```\n",
    );
    let run = pf(scratch.path(), &["run", "q.md"]);
    assert_eq!(
        run.stderr,
        "q.md:12:1: error[Lua]: ')' expected (to close '(' at line 10) near 'return'\n"
    );
}
