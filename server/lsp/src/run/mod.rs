//! Running prompts and their tests inside the editor (`editor.md` §2).
//!
//! A command ([`crate::features::execute_command`]) starts a run and answers at
//! once with its id (`run-1`, `run-2`, ...); the run goes on in a task of its own,
//! so several go at once. Each run:
//!
//! - waits until its `{runId}` response is queued for the client ([`gate`]);
//! - streams its events as `promptforge/runEvent` notifications, in order
//!   ([`events`]), and drives a work-done progress when the client supports it
//!   ([`progress`]);
//! - asks the editor for `input.ask` ([`ask`]);
//! - runs a prompt ([`prompt`]) or a test file's cases ([`test_run`]), leaving its
//!   failures in place as diagnostics ([`failures`]);
//! - ends with one `finished` or `failed` event, also when it was cancelled
//!   (`promptforge.cancel`, a progress cancel, `shutdown`) or panicked;
//! - goes on the runs' own threads, at a lower priority ([`runtime`]);
//! - is refused at once when [`MAX_RUNS`] go on already.
//!
//! The messages that LSP does not define are in [`protocol`].

pub mod ask;
pub mod events;
pub mod gate;
pub mod progress;
pub mod prompt;
pub mod protocol;
pub mod runtime;
pub mod test_run;
pub mod traces;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use futures_util::FutureExt;
use promptforge_engine::host::{Discovery, TrustPolicy};
use promptforge_engine::Host;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::{MessageType, Url};
use tower_lsp::Client;

use crate::documents::Documents;
use crate::encoding::PositionEncoding;
use crate::publisher::Publisher;
use crate::snapshot::Snapshot;
use events::LspEvents;
use gate::Gates;
use prompt::PromptJob;
use protocol::RunEvent;
use test_run::TestJob;

/// The text a run works on: the open document's snapshot, or the file's text
/// when the document is not open.
#[derive(Clone)]
pub struct Source {
    /// The text and its analysis.
    pub snapshot: Arc<Snapshot>,
    /// True when the document is open (its failures then describe its version).
    pub open: bool,
}

impl Source {
    /// The version the run's failures describe (None: the document is not open).
    pub fn version(&self) -> Option<i32> {
        self.open.then_some(self.snapshot.version)
    }
}

/// What a run does.
pub enum Job {
    /// Runs a prompt.
    Prompt(PromptJob),
    /// Runs a test file's cases.
    Test(TestJob),
    /// Ends at once with this `failed` event (the run could not start).
    Refused(RunEvent),
}

/// The runs a session runs at once (prompts and tests alike): each may keep a
/// core busy and hold its log, store and VMs in memory; a run asked for beyond
/// them is refused with [`too_many_runs`].
pub const MAX_RUNS: usize = 4;

/// The `failed` message of a run refused because [`MAX_RUNS`] go on.
pub fn too_many_runs(max: usize) -> String {
    format!(
        "{max} runs are already going on in this session, the most it runs at once: stop one or wait for one to end"
    )
}

/// The runs of a session.
pub struct Runner {
    /// The client.
    pub client: Client,
    /// The open documents.
    pub documents: Arc<Documents>,
    /// Publishing diagnostics, with the runs' failures.
    pub publisher: Publisher,
    gates: Gates,
    next: AtomicU64,
    active: Mutex<HashMap<String, CancellationToken>>,
    /// Fires at `shutdown` or at the session's end: every run is a child of it.
    shutdown: CancellationToken,
    session: SessionRuns,
    progress: AtomicBool,
    encoding: OnceLock<PositionEncoding>,
    runtime: runtime::RunRuntime,
    /// What the client said of the workspace's trust.
    pub trust: Arc<crate::trust::SessionTrust>,
    /// The traces of the last prompt runs.
    pub traces: traces::Traces,
}

/// The Host a prompt at `path` runs on, found as `promptforge run` finds it (the
/// environment's configuration file, the nearest `promptforge.toml` upward from
/// the prompt's folder over the user's file, else the built-in defaults) and
/// trusted as `policy` says; the error is the configuration's, or the refusal of
/// a key that needs trust.
pub fn host_for(path: &Path, policy: &TrustPolicy) -> Result<Host, String> {
    let folder = path.parent().map(Path::to_path_buf);
    let config = Discovery::from_env(None, folder)
        .load(policy)
        .map_err(|e| e.to_string())?
        .trusted_config()?;
    promptforge_shipped::host(config).map_err(|e| e.to_string())
}

/// The runs of a session as its end sees them: one token that cancels them all,
/// and a tracker that says when every one has ended. Cheap to clone.
#[derive(Clone, Default)]
pub struct SessionRuns {
    cancel: CancellationToken,
    tracker: tokio_util::task::TaskTracker,
}

impl SessionRuns {
    /// A token that fires when the session shuts down or ends.
    pub fn ended(&self) -> CancellationToken {
        self.cancel.child_token()
    }

    /// Cancels every run and waits until all have ended, at most `limit`; false
    /// when some had not ended by then. Called when the session ends however it
    /// ends (`exit` with or without `shutdown`, the input closing), so that no run
    /// and no process a run started outlives the server.
    pub async fn end(&self, limit: std::time::Duration) -> bool {
        self.cancel.cancel();
        self.tracker.close();
        tokio::time::timeout(limit, self.tracker.wait())
            .await
            .is_ok()
    }
}

impl Runner {
    /// The runs of a session talking to `client`; `session` ends them all when the
    /// session ends.
    pub fn new(
        client: Client,
        documents: Arc<Documents>,
        publisher: Publisher,
        gates: Gates,
        session: SessionRuns,
        trust: Arc<crate::trust::SessionTrust>,
    ) -> Self {
        Runner {
            client,
            documents,
            publisher,
            gates,
            next: AtomicU64::new(0),
            active: Mutex::new(HashMap::new()),
            shutdown: session.cancel.clone(),
            session,
            progress: AtomicBool::new(false),
            encoding: OnceLock::new(),
            runtime: runtime::RunRuntime::new(),
            trust,
            traces: traces::Traces::default(),
        }
    }

    /// Why a run of the prompt at `path` may not start, when it may not: the
    /// client's Restricted Mode, or a key of its configuration that needs trust.
    pub fn refusal(&self, path: &Path) -> Option<String> {
        if self.trust.restricted() {
            return Some(crate::trust::RESTRICTED.to_owned());
        }
        let folder = path.parent().map(Path::to_path_buf);
        let loaded = Discovery::from_env(None, folder).load(&self.trust.policy());
        loaded.ok()?.trusted_config().err()
    }

    fn active(&self) -> MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.active
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records what `initialize` negotiated: the position encoding, and whether the
    /// client supports work-done progress.
    pub fn initialized(&self, encoding: PositionEncoding, progress: bool) {
        let _ = self.encoding.set(encoding);
        self.progress.store(progress, Ordering::SeqCst);
    }

    /// The text of `uri` as the editor has it now, else as its file holds it; the
    /// error says why there is none.
    pub fn source(&self, uri: &Url) -> Result<Source, String> {
        if let Some(snapshot) = self.documents.snapshot(uri) {
            return Ok(Source {
                snapshot,
                open: true,
            });
        }
        let path = uri
            .to_file_path()
            .map_err(|()| format!("{uri} is not open and names no file"))?;
        let text = promptforge_engine::user_file::read_to_string(&path)
            .map_err(|e| format!("{uri} is not open and cannot be read: {e}"))?;
        let parsed = promptforge_luacheck::parsed(text);
        let encoding = self.encoding.get().copied().unwrap_or_default();
        let analysis = (Arc::default(), CancellationToken::new());
        let snapshot = Snapshot::new(uri.clone(), 0, &parsed, encoding, analysis, false);
        Ok(Source {
            snapshot: Arc::new(snapshot),
            open: false,
        })
    }

    /// Starts `job` and returns its run id; when [`MAX_RUNS`] go on already,
    /// the run ends at once with the refusal instead.
    pub fn start(self: &Arc<Self>, job: Job) -> String {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let run_id = format!("run-{n}");
        let cancel = self.shutdown.child_token();
        let job = {
            let mut active = self.active();
            match job {
                Job::Refused(_) => job,
                _ if active.len() >= MAX_RUNS => Job::Refused(RunEvent::Failed {
                    kind: promptforge_engine::RunErrorKind::Limit.as_str().to_owned(),
                    message: too_many_runs(MAX_RUNS),
                    range: None,
                    trace_id: None,
                }),
                _ => {
                    active.insert(run_id.clone(), cancel.clone());
                    job
                }
            }
        };
        let gate = self.gates.gate(&run_id);
        let runner = Arc::clone(self);
        let id = run_id.clone();
        let run = async move {
            gate.opened().await;
            runner.lifecycle(&id, job, &cancel).await;
        };
        self.runtime.spawn(self.session.tracker.track_future(run));
        run_id
    }

    /// Cancels the run `run_id`; false when no such run goes on.
    pub fn cancel(&self, run_id: &str) -> bool {
        match self.active().get(run_id) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every run, for good (the server shuts down).
    pub fn cancel_all(&self) {
        self.shutdown.cancel();
    }

    /// One run from its first event to its last.
    async fn lifecycle(&self, run_id: &str, job: Job, cancel: &CancellationToken) {
        let (events, received, status) = LspEvents::new();
        let forwarder = tokio::spawn(events::forward(
            self.client.clone(),
            run_id.to_owned(),
            Arc::clone(&events),
            received,
        ));
        let title = match &job {
            Job::Prompt(job) => Some(prompt::title(&job.source.snapshot)),
            Job::Test(job) => Some(test_run::title(&job.source)),
            Job::Refused(_) => None,
        };
        let (end_progress, ended) = oneshot::channel();
        let progress = match title {
            Some(title) if self.progress.load(Ordering::SeqCst) => Some(tokio::spawn(
                progress::drive(self.client.clone(), run_id.to_owned(), title, status, ended),
            )),
            _ => None,
        };
        let work = async {
            match job {
                Job::Prompt(job) => prompt::run_prompt(self, run_id, job, &events, cancel).await,
                Job::Test(job) => test_run::run_tests(self, run_id, job, &events, cancel).await,
                Job::Refused(event) => event,
            }
        };
        let last = match AssertUnwindSafe(work).catch_unwind().await {
            Ok(last) => last,
            Err(payload) => {
                let text = promptforge_transport::payload_text(payload.as_ref());
                let message = format!("run {run_id} panicked: {text}");
                self.client.log_message(MessageType::ERROR, message).await;
                RunEvent::Failed {
                    kind: promptforge_engine::RunErrorKind::Internal
                        .as_str()
                        .to_owned(),
                    message: format!("internal error: the run panicked: {text}"),
                    range: None,
                    trace_id: None,
                }
            }
        };
        let summary = match &last {
            RunEvent::Failed { kind, message, .. } => format!("{kind}: {message}"),
            _ => "finished".to_owned(),
        };
        // The run no longer counts once the editor can learn that it ended.
        self.active().remove(run_id);
        events.finish(last);
        let _ = forwarder.await;
        let _ = end_progress.send(summary);
        if let Some(progress) = progress {
            let _ = progress.await;
        }
    }
}
