//! A small Debug Adapter Protocol client for the debugger suites: it starts the
//! real `promptforge dap`, frames requests with `Content-Length`, matches
//! responses to requests by `seq` and keeps every event the adapter sends.

use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::lsp_client::{frame, spawn_framed};
use crate::{binary, Scratch};

/// How long the client waits for any one message before failing the test.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A `promptforge dap` process and the client's side of the session.
pub struct DapClient {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    seq: i64,
    /// Messages received and not yet taken, in arrival order.
    pub pending: Vec<Value>,
}

/// What a launch sets before `configurationDone`.
#[derive(Default)]
pub struct Setup {
    /// `setBreakpoints` entries for the program (each a DAP `SourceBreakpoint`).
    pub breakpoints: Vec<Value>,
    /// `setFunctionBreakpoints` names.
    pub functions: Vec<&'static str>,
    /// `setExceptionBreakpoints` filters.
    pub exceptions: Vec<&'static str>,
    /// Extra `launch` arguments (`args`, `stopOnEntry`, ...).
    pub launch: Value,
}

impl Setup {
    /// Plain breakpoints on `lines`.
    pub fn lines(lines: &[u32]) -> Self {
        Setup {
            breakpoints: lines.iter().map(|l| json!({ "line": l })).collect(),
            ..Setup::default()
        }
    }
}

impl DapClient {
    /// Starts `promptforge dap`.
    pub fn start() -> Self {
        Self::start_with(binary(), &["dap", "--trust"])
    }

    /// Starts `promptforge dap` as an editor that does not trust the workspace
    /// starts it (without `--trust`).
    pub fn start_untrusted() -> Self {
        Self::start_with(binary(), &["dap"])
    }

    /// Starts `program dap --trust` (another build of `promptforge`, for benchmarks).
    pub fn start_binary(program: &Path) -> Self {
        Self::start_with(program, &["dap", "--trust"])
    }

    fn start_with(program: &Path, args: &[&str]) -> Self {
        let mut command = Command::new(program);
        crate::isolate(&mut command)
            .args(args)
            .stderr(Stdio::null());
        let (child, stdin, incoming) = spawn_framed(command);
        DapClient {
            child,
            stdin,
            incoming,
            seq: 0,
            pending: Vec::new(),
        }
    }

    /// The adapter's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends the request `command`; its `seq`.
    pub fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let body = json!({ "seq": self.seq, "type": "request", "command": command, "arguments": arguments });
        let bytes = serde_json::to_vec(&body).expect("json");
        self.write(&frame(&bytes));
        self.seq
    }

    /// Writes raw bytes to the adapter's stdin.
    pub fn write(&mut self, bytes: &[u8]) {
        self.try_write(bytes).expect("write");
    }

    /// Writes raw bytes to the adapter's stdin; the error when it stopped reading.
    pub fn try_write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        self.stdin.write_all(bytes)?;
        self.stdin.flush()
    }

    /// The next message within `wait`, kept with the others; None when none came
    /// (or the adapter closed its output).
    pub fn next_within(&mut self, wait: Duration) -> Option<Value> {
        let message = self.incoming.recv_timeout(wait).ok()?;
        self.pending.push(message.clone());
        Some(message)
    }

    /// The first message (received or still to come) `pick` accepts.
    pub fn take(&mut self, mut pick: impl FnMut(&Value) -> bool) -> Value {
        if let Some(at) = self.pending.iter().position(&mut pick) {
            return self.pending.remove(at);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .incoming
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no awaited message; received: {:#?}", self.pending));
            if pick(&message) {
                return message;
            }
            self.pending.push(message);
        }
    }

    /// Sends `command` and waits for its response.
    pub fn request(&mut self, command: &str, arguments: Value) -> Value {
        let seq = self.send(command, arguments);
        self.take(|m| m["type"] == "response" && m["request_seq"] == seq)
    }

    /// Sends `command` and returns its response's body, which must succeed.
    pub fn ok(&mut self, command: &str, arguments: Value) -> Value {
        let response = self.request(command, arguments);
        assert_eq!(response["success"], true, "{command}: {response}");
        response["body"].clone()
    }

    /// The next event `name`.
    pub fn event(&mut self, name: &str) -> Value {
        self.take(|m| m["type"] == "event" && m["event"] == name)
    }

    /// The next `stopped` event's body.
    pub fn stopped(&mut self) -> Value {
        self.event("stopped")["body"].clone()
    }

    /// The text of every `output` event of `category` received so far.
    pub fn output(&self, category: &str) -> String {
        self.pending
            .iter()
            .filter(|m| m["event"] == "output" && m["body"]["category"] == category)
            .filter_map(|m| m["body"]["output"].as_str())
            .collect()
    }

    /// The text of every `output` event of `category` up to `terminated`.
    pub fn output_until_terminated(&mut self, category: &str) -> String {
        self.event("terminated");
        self.output(category)
    }

    /// Waits for the process to end: its exit code.
    pub fn exit_code(mut self) -> Option<i32> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `initialize`, then the `initialized` event.
    pub fn initialize(&mut self) {
        self.ok(
            "initialize",
            json!({ "adapterID": "promptforge", "linesStartAt1": true, "columnsStartAt1": true }),
        );
        self.event("initialized");
    }

    /// initialize, launch with `arguments`, configurationDone: the launch response.
    pub fn launch(&mut self, arguments: Value) -> Value {
        self.initialize();
        let launched = self.request("launch", arguments);
        if launched["success"] == true {
            self.ok("configurationDone", Value::Null);
        }
        launched
    }

    /// initialize, launch `program`, the breakpoints of `setup`, configurationDone:
    /// the `setBreakpoints` answer's breakpoints.
    pub fn debug(&mut self, program: &Path, setup: Setup) -> Vec<Value> {
        self.initialize();
        let mut launch = json!({ "program": program });
        if let Value::Object(extra) = setup.launch {
            for (key, value) in extra {
                launch[key] = value;
            }
        }
        self.ok("launch", launch);
        let set = self.ok(
            "setBreakpoints",
            json!({ "source": { "path": program }, "breakpoints": setup.breakpoints }),
        );
        let functions: Vec<Value> = setup
            .functions
            .iter()
            .map(|n| json!({ "name": n }))
            .collect();
        self.ok(
            "setFunctionBreakpoints",
            json!({ "breakpoints": functions }),
        );
        self.ok(
            "setExceptionBreakpoints",
            json!({ "filters": setup.exceptions }),
        );
        self.ok("configurationDone", Value::Null);
        set["breakpoints"].as_array().cloned().unwrap_or_default()
    }

    /// The stack of `thread`: each frame's name and line.
    pub fn frames(&mut self, thread: i64) -> Vec<(String, u64)> {
        let trace = self.ok("stackTrace", json!({ "threadId": thread }));
        trace["stackFrames"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap_or_default().to_owned(),
                    f["line"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    }

    /// The id of the frame at `index` of `thread`'s stack.
    pub fn frame_id(&mut self, thread: i64, index: usize) -> i64 {
        let trace = self.ok("stackTrace", json!({ "threadId": thread }));
        trace["stackFrames"][index]["id"]
            .as_i64()
            .expect("a frame id")
    }

    /// The scope `name` of the frame `frame`: its variables reference.
    pub fn scope(&mut self, frame: i64, name: &str) -> i64 {
        let scopes = self.ok("scopes", json!({ "frameId": frame }));
        scopes["scopes"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == name))
            .and_then(|s| s["variablesReference"].as_i64())
            .unwrap_or_else(|| panic!("no scope {name}: {scopes}"))
    }

    /// The variables of `reference`: name, value and the reference of each.
    pub fn variables(&mut self, reference: i64) -> Vec<(String, String, i64)> {
        let body = self.ok("variables", json!({ "variablesReference": reference }));
        body["variables"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap_or_default().to_owned(),
                    v["value"].as_str().unwrap_or_default().to_owned(),
                    v["variablesReference"].as_i64().unwrap_or(0),
                )
            })
            .collect()
    }

    /// The variable `name` of `reference`: its value and reference.
    pub fn variable(&mut self, reference: i64, name: &str) -> (String, i64) {
        let all = self.variables(reference);
        all.iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, value, child)| (value.clone(), *child))
            .unwrap_or_else(|| panic!("no variable {name} in {all:?}"))
    }

    /// `evaluate` of `expression` in `frame` (None: no frame) and `context`.
    pub fn evaluate(&mut self, expression: &str, frame: Option<i64>, context: &str) -> Value {
        let mut arguments = json!({ "expression": expression, "context": context });
        if let Some(frame) = frame {
            arguments["frameId"] = json!(frame);
        }
        self.request("evaluate", arguments)
    }

    /// `disconnect`, then the process's exit code (which must be 0).
    pub fn finish(mut self) {
        self.ok("disconnect", Value::Null);
        assert_eq!(self.exit_code(), Some(0));
    }
}

impl Drop for DapClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch folder holding `promptforge.toml` (`extra_config`, then a large
/// instruction budget: the debug build is slow) and the prompt `name` with
/// `text`; the folder and the prompt's path.
pub fn prompt_in(
    label: &str,
    name: &str,
    text: &str,
    extra_config: &str,
) -> (Scratch, std::path::PathBuf) {
    let scratch = Scratch::new(label);
    scratch.write(
        "promptforge.toml",
        format!("{extra_config}\n[limits]\nlua_instructions = 100000000000\n"),
    );
    let program = scratch.write(name, text);
    (scratch, program)
}
