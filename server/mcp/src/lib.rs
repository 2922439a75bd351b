//! MCP servers as Plugins (`host.md` §1 and §3): each `[plugin."ns/name"]` table is
//! an MCP server over stdio, started afresh by every activation.
//!
//! Decisions where the spec is silent:
//!
//! - **Environment.** The server does not inherit the whole Host environment: it
//!   gets `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM` and `USER` from the Host (the
//!   default set of the MCP SDKs' stdio clients), plus every `env` entry: `env = {
//!   TOKEN_ENV = "CORP_TOKEN" }` sets the server's `TOKEN_ENV` to the value of the
//!   Host's `CORP_TOKEN` (an entry overrides a default variable of the same name;
//!   `PATH = "PATH"` style entries pass any other Host variable through). A Host
//!   variable that is not set makes activation fail, naming it.
//! - **Paths.** A `command` holding a `/` that is relative is resolved against the
//!   configuration's folder, a bare name is looked up on `PATH`; the server runs in
//!   the configuration's folder, so relative paths among `args` work from there too.
//! - **Start.** Starting, `initialize` and `tools/list` (every page) together get
//!   [`DEFAULT_START_TIMEOUT`]; a failure, a timeout or the run's cancellation makes
//!   activation fail with a one-line reason (with the server's last stderr line,
//!   when it wrote one). The server's stderr is otherwise discarded.
//! - **Tools.** Every listed tool whose name is one segment (`a-z 0-9 - _ .`)
//!   becomes `ns/name/{tool}` in the server's order, described by its
//!   `description` (else its `title`, else nothing) with its `inputSchema` as the
//!   parameters; the others (and a name listed twice) are skipped with a log line
//!   ([`Activation::log`]). The list is read once per activation
//!   (`notifications/tools/list_changed` is ignored); the client declares no
//!   capabilities (sampling is refused, elicitation declined, no roots).
//! - **Output.** Always untrusted. A result's `structuredContent` is structured
//!   output (its JSON); a tool declaring an `outputSchema` is a structured tool,
//!   and a result of it without `structuredContent` is structured when its text is
//!   JSON, else a failure. Otherwise text blocks are joined with newlines and other
//!   blocks summarized (`[image: image/png, 1234 bytes]`). `isError` makes the
//!   call fail with the result's text (cut to 500 characters).
//! - **Lifetime.** The server lives as long as the run: it is killed (with its
//!   whole process group, so what it started dies too) when the run ends, however
//!   it ends ([`promptforge_engine::harness::RunEnd`]: finished, failed, refused by prepare,
//!   cancelled, or its future dropped), even while a task or a cache still holds
//!   one of its tools. The run's cancel signal kills it too, at once, and so does
//!   dropping its last tool (an activation outside a run: a catalog listing). A
//!   cancelled call returns at once and sends `notifications/cancelled`. Tool
//!   calls have no timeout of their own. A program ending before its runs have
//!   kills the servers still running ([`kill_all_servers`]).

mod messages;
mod process;
mod tool;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

pub use process::Launch;

use promptforge_syntax::frontmatter::names::is_segment;

use process::ServerProcess;
use promptforge_engine::harness::{Activation, ActivationError, Plugin, Tool, ToolId};
use promptforge_engine::host::config::PluginConfig;
use promptforge_engine::host::Extensions;
use tool::{McpTool, Server};

/// How long starting, `initialize` and `tools/list` may take together.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a failed server gets to exit, and its stderr to end, for the reason.
const CLOSED_GRACE: Duration = Duration::from_millis(300);

/// The Host variables every server receives (when set).
pub const INHERITED_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// Registers the MCP servers on `extensions`: every Host built with them has one
/// Plugin per `[plugin."ns/name"]` table of its configuration.
pub fn register(extensions: &mut Extensions) {
    extensions.register_plugins("mcp", |config, env| {
        config
            .plugins
            .iter()
            .map(|(id, plugin)| {
                Arc::new(McpPlugin::from_config(id, plugin, env)) as Arc<dyn Plugin>
            })
            .collect()
    });
}

/// Kills every MCP server this process started that still runs, with its process
/// group: for a program that ends before all its runs have (a language server or
/// debug adapter whose session ends while a run still unwinds, a second Ctrl-C),
/// so that no server outlives it.
pub fn kill_all_servers() {
    process::kill_all();
}

/// An MCP server registered as a Plugin.
pub struct McpPlugin {
    id: String,
    conflicts: Vec<String>,
    launch: Result<Launch, String>,
    start_timeout: Duration,
}

impl std::fmt::Debug for McpPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPlugin")
            .field("id", &self.id)
            .field(
                "program",
                &self
                    .launch
                    .as_ref()
                    .map(|l| l.program.display().to_string()),
            )
            .finish()
    }
}

impl McpPlugin {
    /// The Plugin `id` from its `[plugin."ns/name"]` table; `base_dir` is the
    /// configuration's folder, `env` reads the Host environment.
    pub fn from_config(
        id: &str,
        config: &PluginConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> McpPlugin {
        let base_dir = &config.dir;
        let base_dir = if base_dir.as_os_str().is_empty() {
            None
        } else {
            Some(std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_path_buf()))
        };
        let launch = resolve_env(&config.env, env).map(|env| Launch {
            program: resolve_program(&config.command, base_dir.as_deref()),
            args: config.args.clone(),
            env,
            cwd: base_dir.clone(),
        });
        McpPlugin {
            id: id.to_owned(),
            conflicts: config.conflicts.clone(),
            launch,
            start_timeout: DEFAULT_START_TIMEOUT,
        }
    }

    /// The Plugin `id` starting exactly `launch`.
    pub fn new(id: &str, launch: Launch) -> McpPlugin {
        McpPlugin {
            id: id.to_owned(),
            conflicts: Vec::new(),
            launch: Ok(launch),
            start_timeout: DEFAULT_START_TIMEOUT,
        }
    }

    /// Replaces the start timeout ([`DEFAULT_START_TIMEOUT`]).
    pub fn with_start_timeout(mut self, timeout: Duration) -> McpPlugin {
        self.start_timeout = timeout;
        self
    }

    /// How the server is started, or why it cannot be.
    pub fn launch(&self) -> Result<&Launch, &str> {
        self.launch.as_ref().map_err(String::as_str)
    }
}

/// Why starting a server failed.
enum StartFailure {
    /// The connection closed: the server exited or closed its stdout.
    Closed,
    /// `initialize` failed otherwise (the detail says how).
    Initialize(String),
    /// `tools/list` failed (the server's reason).
    List(String),
    /// No answer within the start timeout.
    Timeout,
    /// The run was cancelled.
    Cancelled,
}

fn initialize_failure(error: ClientInitializeError) -> StartFailure {
    match error {
        ClientInitializeError::ConnectionClosed(_)
        | ClientInitializeError::TransportError { .. } => StartFailure::Closed,
        ClientInitializeError::JsonRpcError(data) => {
            StartFailure::Initialize(format!("initialize failed: {}", data.message))
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            initialize_failure(*fallback)
        }
        ClientInitializeError::Cancelled => StartFailure::Cancelled,
        other => StartFailure::Initialize(other.to_string()),
    }
}

fn list_failure(error: ServiceError) -> StartFailure {
    match error {
        ServiceError::McpError(data) => StartFailure::List(data.message.to_string()),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => StartFailure::Closed,
        other => StartFailure::List(other.to_string()),
    }
}

impl McpPlugin {
    /// The activation error of a failed start, once the server is killed; with the
    /// server's exit status when it exited, and its last stderr line.
    async fn failed(&self, failure: StartFailure, process: &ServerProcess) -> ActivationError {
        let reason = match failure {
            StartFailure::Closed => {
                let status = process.exit_status(CLOSED_GRACE).await;
                let detail = match status {
                    Some(status) => format!("it exited ({status})"),
                    None => "it closed its connection".to_owned(),
                };
                messages::did_not_start(&detail)
            }
            StartFailure::Initialize(detail) => messages::did_not_start(&detail),
            StartFailure::List(detail) => messages::list_failed(&detail),
            StartFailure::Timeout => messages::did_not_answer(self.start_timeout),
            StartFailure::Cancelled => messages::ACTIVATION_CANCELLED.to_owned(),
        };
        process.kill();
        let stderr = process.stderr_line(CLOSED_GRACE).await;
        ActivationError::new(messages::with_stderr(reason, stderr.as_deref()))
    }
}

/// The server's environment: the inherited defaults, then the mapped variables.
fn resolve_env(
    mapped: &BTreeMap<String, String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    let mut vars: BTreeMap<String, String> = INHERITED_ENV
        .iter()
        .filter_map(|name| env(name).map(|value| ((*name).to_owned(), value)))
        .collect();
    for (variable, host_variable) in mapped {
        let value =
            env(host_variable).ok_or_else(|| messages::missing_env(variable, host_variable))?;
        vars.insert(variable.clone(), value);
    }
    Ok(vars.into_iter().collect())
}

fn resolve_program(command: &str, base_dir: Option<&Path>) -> PathBuf {
    let path = PathBuf::from(command);
    match base_dir {
        Some(dir) if command.contains('/') && path.is_relative() => dir.join(path),
        _ => path,
    }
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("promptforge", env!("CARGO_PKG_VERSION")),
    )
}

#[async_trait]
impl Plugin for McpPlugin {
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
        let launch = self.launch.as_ref().map_err(ActivationError::new)?;
        let cancel = activation.cancel;
        let run_log = activation.log;
        let run_end = activation.end;
        if cancel.is_cancelled() {
            return Err(ActivationError::new(messages::ACTIVATION_CANCELLED));
        }
        let (process, pipes) = ServerProcess::spawn(launch).map_err(|e| {
            let detail = format!("cannot run {}: {e}", launch.program.display());
            ActivationError::new(messages::did_not_start(&detail))
        })?;
        // The server ends with the run, whoever still holds one of its tools then.
        let ended = Arc::downgrade(&process);
        run_end.on_end(move || {
            if let Some(process) = ended.upgrade() {
                process.kill();
            }
        });
        let start = async {
            let client = client_config()
                .serve(pipes)
                .await
                .map_err(initialize_failure)?;
            let listed = client.peer().list_all_tools().await.map_err(list_failure)?;
            Ok::<_, StartFailure>((client, listed))
        };
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(StartFailure::Cancelled),
            outcome = tokio::time::timeout(self.start_timeout, start) => match outcome {
                Ok(outcome) => outcome,
                Err(_) => Err(StartFailure::Timeout),
            },
        };
        let (client, listed) = match outcome {
            Ok(started) => started,
            Err(failure) => return Err(self.failed(failure, &process).await),
        };

        let closed = CancellationToken::new();
        let watched = process.clone();
        let server_closed = closed.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = cancel.cancelled() => watched.kill(),
                () = server_closed.cancelled() => {}
            }
        });
        let server = Arc::new(Server {
            client,
            process,
            closed,
        });

        let mut seen = HashSet::new();
        let mut log = Vec::new();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for listed in listed {
            let name = listed.name.to_string();
            if !is_segment(&name) {
                log.push(messages::skipped_tool_name(&self.id, &name));
                continue;
            }
            if !seen.insert(name.clone()) {
                log.push(messages::skipped_duplicate(&self.id, &name));
                continue;
            }
            let description = listed
                .description
                .as_deref()
                .map(str::to_owned)
                .or_else(|| listed.title.clone())
                .unwrap_or_default();
            tools.push(Arc::new(McpTool {
                id: ToolId::new(format!("{}/{name}", self.id)),
                name,
                description,
                parameters: serde_json::Value::Object((*listed.input_schema).clone()),
                structured: listed.output_schema.is_some(),
                server: server.clone(),
            }));
        }
        for line in log {
            run_log.line(line);
        }
        Ok(tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_grammar() {
        assert!(is_segment("echo"));
        assert!(is_segment("get-tiny_image.v2"));
        assert!(is_segment("-"));
        assert!(!is_segment(""));
        assert!(!is_segment("getTinyImage"));
        assert!(!is_segment("a/b"));
        assert!(!is_segment("a b"));
        assert!(!is_segment("é"));
    }

    #[test]
    fn environment_is_the_defaults_plus_the_mapped_variables() {
        let host = |name: &str| match name {
            "PATH" => Some("/bin".to_owned()),
            "CORP_TOKEN" => Some("s3cret".to_owned()),
            "OTHER_SECRET" => Some("no".to_owned()),
            _ => None,
        };
        let mapped = BTreeMap::from([("TOKEN_ENV".to_owned(), "CORP_TOKEN".to_owned())]);
        assert_eq!(
            resolve_env(&mapped, &host).unwrap(),
            [
                ("PATH".to_owned(), "/bin".to_owned()),
                ("TOKEN_ENV".to_owned(), "s3cret".to_owned())
            ]
        );
        let missing = BTreeMap::from([("TOKEN_ENV".to_owned(), "NOPE".to_owned())]);
        assert_eq!(
            resolve_env(&missing, &host).unwrap_err(),
            "the MCP server needs the environment variable NOPE (for its TOKEN_ENV), which is not set"
        );
    }

    #[test]
    fn relative_commands_resolve_against_the_configuration_folder() {
        let dir = Path::new("/etc/pf");
        assert_eq!(
            resolve_program("bin/server", Some(dir)),
            Path::new("/etc/pf/bin/server")
        );
        assert_eq!(resolve_program("npx", Some(dir)), Path::new("npx"));
        assert_eq!(
            resolve_program("/usr/bin/x", Some(dir)),
            Path::new("/usr/bin/x")
        );
        assert_eq!(resolve_program("./x", None), Path::new("./x"));
    }
}
