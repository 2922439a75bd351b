//! The workspace's tool catalogs: for each configuration file (None: the built-in
//! defaults) one Host, and for each Plugin id a document declares the outcome of
//! activating it (its tools, or why it failed), cached until the configuration
//! changes. A failed activation is tried again when a document of its Host is
//! saved ([`Catalogs::retry_failed`]) or once it is [`RETRY_FAILED_AFTER`] old;
//! the failure stays shown while the retry runs, and a background failure wakes
//! the documents declaring the Plugin when it falls due, so starting an MCP
//! server's dependency fixes the diagnostics without restarting the editor.
//!
//! Built-in Plugins (`promptforge/web`) activate at once, on the asking thread.
//! Plugins of `[plugin."ns/name"]` tables (MCP servers) activate in a background
//! task with a timeout ([`ACTIVATION_TIMEOUT`]): nothing ever waits for one. Until
//! it finishes the Plugin is [`PluginState::Pending`]; when it finishes, its id is
//! sent on the channel given to [`Catalogs::new`], so the server re-publishes the
//! diagnostics of the documents that declare it. The tools' descriptions are
//! copied out and the activation's cancel signal fired right after listing, so a
//! started MCP server lives only as long as it takes to list its tools. Every
//! activation is cancelled by [`Catalogs::shutdown`] and [`Catalogs::reset`].

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use promptforge_engine::harness::{Activation, ActivationError, Plugin};
use promptforge_engine::host::discovery::load_found;
use promptforge_engine::host::{Discovery, Found, Host, Part};
use promptforge_engine::requirements::{self, declared_ids, CatalogView, PluginState, PluginView};
use promptforge_engine::Store;
use promptforge_syntax::Frontmatter;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::Url;

use crate::trust::SessionTrust;

/// How long an MCP server may take to start and list its tools for the editor.
pub const ACTIVATION_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a failed activation is kept before the next look at the Plugin
/// activates it again.
pub const RETRY_FAILED_AFTER: Duration = Duration::from_secs(30);

/// What is cached of one Plugin's activation.
#[derive(Debug, Clone)]
struct Known {
    state: PluginState,
    /// When it settled; None for one still pending, or a failure to retry at the
    /// next look (a document was saved).
    settled: Option<Instant>,
    /// True while a retry of this failure runs (the failure is shown meanwhile).
    retrying: bool,
    /// True when a view read this outcome while it was about to change (pending,
    /// or a failure being retried): that view's documents are woken when it
    /// settles, even when it settles on the asking thread.
    read_unsettled: bool,
}

impl Known {
    /// An activation that has not finished.
    fn pending() -> Self {
        Known {
            state: PluginState::Pending,
            settled: None,
            retrying: false,
            read_unsettled: false,
        }
    }

    /// An outcome that settled at `now`.
    fn settled(state: PluginState, now: Instant) -> Self {
        Known {
            state,
            settled: Some(now),
            retrying: false,
            read_unsettled: false,
        }
    }

    /// True when the Plugin should be activated again at `now`: a failure no retry
    /// is running for, marked for retry or settled [`RETRY_FAILED_AFTER`] ago.
    fn retry_due(&self, now: Instant) -> bool {
        matches!(self.state, PluginState::Failed(_))
            && !self.retrying
            && self
                .settled
                .is_none_or(|at| now.saturating_duration_since(at) >= RETRY_FAILED_AFTER)
    }
}

/// The Host of one configuration and its Plugins' activation outcomes.
struct HostEntry {
    host: Result<Arc<Host>, String>,
    config: Option<PathBuf>,
    plugins: Mutex<HashMap<String, Known>>,
    /// Fires on reset and shutdown: cancels this Host's activations.
    cancel: CancellationToken,
}

#[derive(Default)]
struct State {
    /// A document folder -> the configuration files discovery found for it.
    configs: HashMap<Option<PathBuf>, Found>,
    /// The configuration files -> their Host.
    hosts: HashMap<Found, Arc<HostEntry>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The catalogs of every configuration the open documents use.
pub struct Catalogs {
    state: Mutex<State>,
    runtime: Option<tokio::runtime::Handle>,
    shutdown: CancellationToken,
    ready: UnboundedSender<String>,
    timeout: Mutex<Duration>,
    trust: Arc<SessionTrust>,
}

impl Catalogs {
    /// The catalogs; the id of every Plugin whose background activation finishes is
    /// sent on `ready`. Background activations run on the current tokio runtime.
    /// A project configuration is trusted as `trust` says; untrusted, its acting
    /// keys are withheld (its Plugins are not started).
    pub fn new(ready: UnboundedSender<String>, trust: Arc<SessionTrust>) -> Self {
        Catalogs {
            state: Mutex::new(State::default()),
            runtime: tokio::runtime::Handle::try_current().ok(),
            shutdown: CancellationToken::new(),
            ready,
            timeout: Mutex::new(ACTIVATION_TIMEOUT),
            trust,
        }
    }

    /// Sets how long a background activation may take (the client's
    /// `initializationOptions.activationTimeoutMs`).
    pub fn set_timeout(&self, timeout: Duration) {
        *lock(&self.timeout) = timeout;
    }

    /// Forgets every Host and activation outcome (the configuration changed) and
    /// cancels the activations still running.
    pub fn reset(&self) {
        let mut state = lock(&self.state);
        for entry in state.hosts.values() {
            entry.cancel.cancel();
        }
        *state = State::default();
    }

    /// Cancels every activation, for good (the server shuts down).
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// Marks the failed activations of the Host of the document at `uri` for a
    /// retry at the next look (the document was saved).
    pub fn retry_failed(&self, uri: &Url) {
        let entry = self.entry(folder_of(uri));
        for known in lock(&entry.plugins).values_mut() {
            if matches!(known.state, PluginState::Failed(_)) && !known.retrying {
                known.settled = None;
            }
        }
    }

    /// True when the Host of the document at `uri` is known, so [`Catalogs::view`]
    /// reads no file (a folder seen first discovers and loads its configuration).
    pub fn is_loaded(&self, uri: &Url) -> bool {
        let state = lock(&self.state);
        state
            .configs
            .get(&folder_of(uri))
            .is_some_and(|found| state.hosts.contains_key(found))
    }

    /// The view of the document at `uri` for what `frontmatter` declares (its
    /// Plugins, its model labels), starting the activations not started yet; never
    /// waits for a background activation.
    pub fn view(&self, uri: &Url, frontmatter: Option<&Frontmatter>) -> CatalogView {
        let entry = self.entry(folder_of(uri));
        let host = match &entry.host {
            Ok(host) => Arc::clone(host),
            Err(error) => {
                return CatalogView {
                    config: entry.config.clone(),
                    error: Some(error.clone()),
                    ..CatalogView::default()
                }
            }
        };
        let plugins = frontmatter
            .map(declared_ids)
            .unwrap_or_default()
            .iter()
            .map(|id| self.plugin(&entry, &host, id))
            .collect();
        let mut view = CatalogView {
            config: entry.config.clone(),
            error: None,
            registered: host.harness().ids(),
            plugins,
            labels: Vec::new(),
        };
        if let Some(frontmatter) = frontmatter {
            requirements::bind_labels(&mut view, &host, frontmatter);
        }
        view
    }

    /// The Host entry of a document folder, built on first use.
    fn entry(&self, dir: Option<PathBuf>) -> Arc<HostEntry> {
        let mut state = lock(&self.state);
        let found = match state.configs.get(&dir) {
            Some(found) => found.clone(),
            None => {
                let found = Discovery::from_env(None, dir.clone()).find();
                state.configs.insert(dir, found.clone());
                found
            }
        };
        if let Some(entry) = state.hosts.get(&found) {
            return Arc::clone(entry);
        }
        for skipped in &found.skipped {
            eprintln!("promptforge: {skipped}");
        }
        let loaded = load_found(found.clone(), &self.trust.policy());
        let host = loaded.map_err(|e| e.to_string()).and_then(|loaded| {
            promptforge_shipped::host(loaded.withheld).map_err(|e| e.to_string())
        });
        let entry = Arc::new(HostEntry {
            host: host.map(Arc::new),
            config: found.top().map(Path::to_path_buf),
            plugins: Mutex::new(HashMap::new()),
            cancel: self.shutdown.child_token(),
        });
        state.hosts.insert(found, Arc::clone(&entry));
        entry
    }

    fn plugin(&self, entry: &Arc<HostEntry>, host: &Arc<Host>, id: &str) -> PluginView {
        let Some(plugin) = host.harness().get(id).cloned() else {
            let withheld = host.config().withheld(&Part::Plugin(id.to_owned()));
            return PluginView {
                id: id.to_owned(),
                state: withheld.map_or(PluginState::Unregistered, |need| {
                    PluginState::Untrusted(need.to_string())
                }),
                conflicts: Vec::new(),
            };
        };
        let conflicts = plugin.conflicts();
        let state = match self.claim(entry, id) {
            None => self.activate(entry, host, plugin, id),
            Some((failed, true)) => match self.activate(entry, host, plugin, id) {
                // The failure stays shown until the retry finishes.
                PluginState::Pending => failed,
                settled => settled,
            },
            Some((state, false)) => state,
        };
        PluginView {
            id: id.to_owned(),
            state,
            conflicts,
        }
    }

    /// What is known of `id`'s activation, and whether this caller is to activate
    /// it again (a failure due for a retry). None: nothing was known, and this
    /// caller activates it (it is recorded pending meanwhile). An outcome read
    /// while it is about to change is marked, so the reader is woken when it
    /// settles ([`Catalogs::settle`]).
    fn claim(&self, entry: &HostEntry, id: &str) -> Option<(PluginState, bool)> {
        let mut plugins = lock(&entry.plugins);
        let Some(known) = plugins.get_mut(id) else {
            plugins.insert(id.to_owned(), Known::pending());
            return None;
        };
        let retry = known.retry_due(Instant::now());
        known.read_unsettled |= known.state == PluginState::Pending || known.retrying;
        known.retrying |= retry;
        Some((known.state.clone(), retry))
    }

    /// Records an activation that settled on the asking thread. Another handler
    /// may have read it pending meanwhile (a `codeAction` beside the first
    /// publication of a document) and published without its tools; the
    /// documents declaring it are then woken, as for a background activation.
    fn settle(&self, entry: &HostEntry, id: &str, state: PluginState) {
        let known = Known::settled(state, Instant::now());
        let previous = lock(&entry.plugins).insert(id.to_owned(), known);
        if previous.is_some_and(|p| p.read_unsettled) {
            let _ = self.ready.send(id.to_owned());
        }
    }

    /// Starts activating `plugin`: a built-in one that finishes on its first poll
    /// is settled at once; any other runs in the background (Pending meanwhile).
    fn activate(
        &self,
        entry: &Arc<HostEntry>,
        host: &Host,
        plugin: Arc<dyn Plugin>,
        id: &str,
    ) -> PluginState {
        let cancel = entry.cancel.child_token();
        let activation = Activation::new(
            Arc::new(Store::in_memory()),
            cancel.clone(),
            host.services(),
        );
        if !host.config().plugins.contains_key(id) {
            let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
                plugin.activate(activation.clone()).now_or_never()
            }));
            let outcome = match polled {
                Ok(outcome) => outcome,
                Err(_) => Some(Err(ActivationError::new(PANICKED))),
            };
            if let Some(outcome) = outcome {
                let state = requirements::settled_state(id, outcome);
                cancel.cancel();
                self.settle(entry, id, state.clone());
                return state;
            }
        }
        let Some(runtime) = &self.runtime else {
            let state =
                PluginState::Failed("the language server has no runtime to start it in".to_owned());
            self.settle(entry, id, state.clone());
            return state;
        };
        let entry = Arc::clone(entry);
        let ready = self.ready.clone();
        let timeout = *lock(&self.timeout);
        let id = id.to_owned();
        runtime.spawn(async move {
            let outcome = tokio::select! {
                finished = tokio::time::timeout(timeout, AssertUnwindSafe(plugin.activate(activation)).catch_unwind()) => match finished {
                    Ok(Ok(outcome)) => outcome,
                    Ok(Err(_)) => Err(ActivationError::new(PANICKED)),
                    Err(_) => Err(ActivationError::new(timed_out(timeout))),
                },
                () = cancel.cancelled() => return,
            };
            let state = requirements::settled_state(&id, outcome);
            // The tools are copied out: the started server can stop now.
            cancel.cancel();
            if entry.cancel.is_cancelled() {
                return;
            }
            let failed = matches!(state, PluginState::Failed(_));
            let known = Known::settled(state, Instant::now());
            lock(&entry.plugins).insert(id.clone(), known);
            let _ = ready.send(id.clone());
            if failed {
                // When the failure falls due, the documents declaring it look again
                // (and so retry it).
                tokio::select! {
                    () = tokio::time::sleep(RETRY_FAILED_AFTER) => {
                        let _ = ready.send(id);
                    }
                    () = entry.cancel.cancelled() => {}
                }
            }
        });
        PluginState::Pending
    }
}

/// The folder of the document at `uri` (None: not a file).
fn folder_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
}

impl Drop for Catalogs {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The reason of an activation that panicked.
pub const PANICKED: &str = "it panicked while activating";

/// The reason of an activation that took longer than `timeout`.
pub fn timed_out(timeout: Duration) -> String {
    format!(
        "it did not list its tools within {} s",
        timeout.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use std::sync::Arc;

    use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
    use tower_lsp::lsp_types::Url;

    use super::{folder_of, Catalogs, Known, PluginState, RETRY_FAILED_AFTER};
    use crate::trust::SessionTrust;

    const WEB: &str = "promptforge/web";

    /// Catalogs with no runtime (built-in Plugins activate on the asking thread),
    /// the channel that wakes documents, and a prompt declaring the web Plugin in
    /// a folder of its own (no configuration: the built-in defaults).
    fn catalogs_and_prompt(
        name: &str,
    ) -> (
        Catalogs,
        UnboundedReceiver<String>,
        Url,
        promptforge_syntax::Frontmatter,
    ) {
        let (ready, woken) = unbounded_channel();
        let catalogs = Catalogs::new(ready, Arc::new(SessionTrust::default()));
        let dir = std::env::temp_dir().join(format!("pf-catalog-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let uri = Url::from_file_path(dir.join("p.md")).unwrap();
        let text = format!("---\nname: p\npromptforge: 0\nplugins:\n  - {WEB}\n---\n# P\n");
        let analysis = promptforge_luacheck::parse(&text);
        let frontmatter = analysis
            .document
            .frontmatter
            .expect("the prompt's frontmatter");
        (catalogs, woken, uri, frontmatter)
    }

    #[test]
    fn a_view_that_read_a_plugin_activating_on_another_thread_is_woken_when_it_settles() {
        let (catalogs, mut woken, uri, frontmatter) = catalogs_and_prompt("woken");
        // One handler claims the activation of the built-in Plugin ...
        let entry = catalogs.entry(folder_of(&uri));
        assert!(catalogs.claim(&entry, WEB).is_none());
        // ... another reads the catalog before that activation settles: it sees
        // the Plugin pending, so its diagnostics leave the Plugin's tools out ...
        let read = catalogs.view(&uri, Some(&frontmatter));
        assert_eq!(read.plugins.len(), 1);
        assert_eq!(read.plugins[0].state, PluginState::Pending);
        assert!(woken.try_recv().is_err());
        // ... and when the first settles it, the documents declaring it are woken.
        let host = Arc::clone(entry.host.as_ref().unwrap());
        let plugin = host.harness().get(WEB).cloned().unwrap();
        let settled = catalogs.activate(&entry, &host, plugin, WEB);
        assert!(matches!(settled, PluginState::Ready(_)), "{settled:?}");
        assert_eq!(woken.try_recv().ok().as_deref(), Some(WEB));
        assert!(woken.try_recv().is_err());
        let again = catalogs.view(&uri, Some(&frontmatter));
        assert!(matches!(again.plugins[0].state, PluginState::Ready(_)));
        forget(&uri);
    }

    #[test]
    fn a_view_that_read_a_failure_being_retried_is_woken_when_the_retry_settles() {
        let (catalogs, mut woken, uri, frontmatter) = catalogs_and_prompt("retried");
        let entry = catalogs.entry(folder_of(&uri));
        let failed = PluginState::Failed("no".to_owned());
        let retrying = Known {
            retrying: true,
            ..Known::settled(failed.clone(), Instant::now())
        };
        entry
            .plugins
            .lock()
            .unwrap()
            .insert(WEB.to_owned(), retrying);
        // The failure stays shown while the retry runs, and the reader is marked.
        let read = catalogs.view(&uri, Some(&frontmatter));
        assert_eq!(read.plugins[0].state, failed);
        catalogs.settle(&entry, WEB, PluginState::Ready(Default::default()));
        assert_eq!(woken.try_recv().ok().as_deref(), Some(WEB));
        forget(&uri);
    }

    #[test]
    fn a_plugin_settled_on_the_asking_thread_wakes_nobody_when_nobody_read_it_pending() {
        let (catalogs, mut woken, uri, frontmatter) = catalogs_and_prompt("quiet");
        let first = catalogs.view(&uri, Some(&frontmatter));
        assert!(matches!(first.plugins[0].state, PluginState::Ready(_)));
        let second = catalogs.view(&uri, Some(&frontmatter));
        assert!(matches!(second.plugins[0].state, PluginState::Ready(_)));
        assert!(woken.try_recv().is_err());
        forget(&uri);
    }

    /// Removes the folder [`catalogs_and_prompt`] made.
    fn forget(uri: &Url) {
        if let Some(dir) = folder_of(uri) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn a_failure_is_retried_once_due_and_never_twice_at_once() {
        let start = Instant::now();
        let failed = Known::settled(PluginState::Failed("no".to_owned()), start);
        assert!(!failed.retry_due(start));
        assert!(!failed.retry_due(start + RETRY_FAILED_AFTER - Duration::from_millis(1)));
        assert!(failed.retry_due(start + RETRY_FAILED_AFTER));
        // A clock before the settling time is no reason to retry.
        if let Some(earlier) = start.checked_sub(Duration::from_secs(1)) {
            assert!(!failed.retry_due(earlier));
        }
        let retrying = Known {
            retrying: true,
            ..failed.clone()
        };
        assert!(!retrying.retry_due(start + RETRY_FAILED_AFTER * 2));
        // A save marks it for a retry at the next look.
        let saved = Known {
            settled: None,
            ..failed
        };
        assert!(saved.retry_due(start));
    }

    #[test]
    fn only_failures_are_retried() {
        let start = Instant::now();
        let late = start + RETRY_FAILED_AFTER * 2;
        assert!(!Known::pending().retry_due(late));
        let ready = Known::settled(PluginState::Ready(Default::default()), start);
        assert!(!ready.retry_due(late));
        let unregistered = Known::settled(PluginState::Unregistered, start);
        assert!(!unregistered.retry_due(late));
    }
}
