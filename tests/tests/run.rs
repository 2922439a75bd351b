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
fn a_lua_block_never_closed_or_an_untitled_heading_refuses_the_run_as_check_reports_it() {
    let s = Scratch::new("run-structure");
    // Its code would be the rest of the file: the section below never runs.
    s.write(
        "a.md",
        "---\nname: a\ndescription: d\npromptforge: 0\n---\n\n# T\n\n## A\n\n```lua\nreturn 'a'\n\n## B\n\n```lua\nreturn 'b'\n",
    );
    let run = pf(s.path(), &["run", "a.md"]);
    assert_eq!((run.code, run.stdout.as_str()), (Some(1), ""));
    let message = "a.md:11:1: error[Structure]: the lua block opened at line 11 is never closed\n";
    assert_eq!(run.stderr, message);
    assert_eq!(pf(s.path(), &["check", "a.md"]).stdout, message);
    s.write(
        "b.md",
        "---\nname: b\ndescription: d\npromptforge: 0\n---\n\n# T\n\n## \n\n```lua\nreturn 'b'\n```\n",
    );
    let run = pf(s.path(), &["run", "b.md"]);
    assert_eq!((run.code, run.stdout.as_str()), (Some(1), ""));
    let message = "b.md:9:1: error[Structure]: a heading needs a title\n";
    assert_eq!(run.stderr, message);
    assert_eq!(pf(s.path(), &["check", "b.md"]).stdout, message);
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

/// Runs `file` in `dir`, sends one SIGINT once its stderr has shown `first_line`
/// (the run is under way, and its Ctrl-C listener was made before it started),
/// and returns its output and how long it took to end after the signal.
fn interrupted(dir: &Path, file: &str, first_line: &str) -> (std::process::Output, Duration) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new(binary())
        .current_dir(dir)
        .args(["run", file])
        .env_remove("PROMPTFORGE_CONFIG")
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut seen = String::new();
    let mut line = String::new();
    while line.trim_end() != first_line {
        line.clear();
        let read = stderr.read_line(&mut line).expect("stderr is read");
        assert!(read > 0, "the run ended before {first_line:?}: {seen:?}");
        seen.push_str(&line);
    }
    let sent = Instant::now();
    // SAFETY: kill(2) on the child's pid with SIGINT has no memory effects.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).expect("stderr is read");
    let mut output = child.wait_with_output().expect("the binary ends");
    let took = sent.elapsed();
    output.stderr = format!("{seen}{rest}").into_bytes();
    (output, took)
}

#[test]
fn ctrl_c_cancels_the_run_with_exit_130() {
    let dir = workspace_root().join("tests/run");
    let (output, took) = interrupted(&dir, "spin.md", "log: spinning");
    assert_eq!(output.status.code(), Some(130));
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "log: spinning\nspin.md: error[Cancelled]: the run was cancelled\n"
    );
}

/// A walk of sections that never suspend nor reach the instruction budget
/// (a section jumping to itself, two jumping to each other, a jump loop in
/// each fanout arm) ends within 200 ms of one Ctrl-C.
#[test]
fn one_ctrl_c_ends_a_jump_loop_within_200_ms() {
    let s = Scratch::new("run-jump-loops");
    let start = lua("log('looping')");
    let loops = [
        (
            "self.md",
            format!("## Start\n\n{start}## Self\n\n{}", lua("jump('## Self')")),
        ),
        (
            "mutual.md",
            format!(
                "## Start\n\n{start}## A\n\n{}## B\n\n{}",
                lua("jump('## B')"),
                lua("jump('## A')")
            ),
        ),
        (
            "fanout.md",
            format!(
                "## Start\n\n{start}## Main\n\n{}## Arm\n\n---\n\n{}",
                lua("fanout('## Arm', {1, 2, 3})"),
                lua("jump('## Arm')")
            ),
        ),
    ];
    for (file, body) in loops {
        s.write(file, prompt(&body));
        let (output, took) = interrupted(s.path(), file, "log: looping");
        println!("{file}: one SIGINT -> exit after {took:?}");
        assert_eq!(
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).into_owned()
            ),
            (
                Some(130),
                format!("log: looping\n{file}: error[Cancelled]: the run was cancelled\n")
            )
        );
        assert!(took < Duration::from_millis(200), "{file}: {took:?}");
    }
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

/// Every way `run` can refuse a prompt, each with `--format json`: exactly one
/// JSON object on stdout (nothing else there, nothing on stderr), `ok` false and
/// the refusal's kind as its error, with the exit status of the text format.
#[test]
fn every_refusal_of_format_json_is_one_json_object() {
    let s = Scratch::new("run-json-refusals");
    let front = |extra: &str, code: &str| {
        format!(
            "---\nname: x\ndescription: d\npromptforge: 0\n{extra}---\n\n# T\n\n## S\n\n{}",
            lua(code)
        )
    };
    let files = [
        ("no-frontmatter.md", "# Title\n".to_owned()),
        ("no-key.md", "---\nname: x\n---\n\n# Title\n".to_owned()),
        (
            "version.md",
            "---\nname: x\ndescription: d\npromptforge: 1\n---\n\n# T\n".to_owned(),
        ),
        ("frontmatter.md", front("bogus: 1\n", "return 1")),
        (
            "structure.md",
            "---\nname: x\ndescription: d\npromptforge: 0\n---\n\n# T\n\n# Again\n".to_owned(),
        ),
        ("lua.md", front("", "return (")),
        (
            "requirements.md",
            front("plugins: [acme/nothing]\n", "return 1"),
        ),
        (
            "binding.md",
            front("models:\n  w: {model: nope}\n", "return 1"),
        ),
        ("runtime.md", front("", "error('boom')")),
    ];
    for (file, text) in &files {
        s.write(file, text);
    }
    s.write("bad/promptforge.toml", "bogus = 1\n");
    s.write("bad/p.md", front("", "return 1"));
    s.write("bound/promptforge.toml", "[model.s]\nprovider = \"echo\"\n");
    s.write(
        "bound/binding.md",
        front("models:\n  w: {model: nope}\n", "return 1"),
    );
    s.write("store-is-a-file", "");
    let cases: [(&[&str], &str, i32); 14] = [
        (&["no-frontmatter.md"], "Frontmatter", 1),
        (&["no-key.md"], "Version", 1),
        (&["version.md"], "Version", 1),
        (&["frontmatter.md"], "Frontmatter", 1),
        (&["structure.md"], "Structure", 1),
        (&["lua.md"], "Lua", 1),
        (&["requirements.md"], "RequirementsUnmet", 1),
        (&["bound/binding.md"], "Binding", 1),
        (&["runtime.md"], "Lua", 1),
        (&["missing.md"], "Usage", 2),
        (&["bad/p.md"], "Usage", 2),
        (&["lua.md", "--args-file", "missing.txt"], "Usage", 2),
        (&["lua.md", "--store", "store-is-a-file"], "Usage", 2),
        (&["lua.md", "--config", "missing.toml"], "Usage", 2),
    ];
    for (args, kind, code) in cases {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend(["--format", "json"]);
        let run = pf(s.path(), &all);
        let object: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON value ({e}): {:?}", run.stdout));
        assert_eq!(
            (
                run.code,
                &object["ok"],
                &object["error"]["kind"],
                run.stderr.as_str()
            ),
            (Some(code), &Value::Bool(false), &Value::from(kind), ""),
            "{args:?}: {object}"
        );
        assert!(object["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        for key in ["result", "calls", "log", "duration_ms"] {
            assert!(object.get(key).is_some(), "{args:?}: no {key} in {object}");
        }
    }
}
