//! The `Plugin` trait and what a Plugin receives when it activates.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::harness::run_end::RunEnd;
use crate::harness::tool::Tool;
use crate::input::{InputBroker, INPUT_BROKER_SERVICE};
use crate::store::Store;

/// The services the Host offers Plugins, each named by an id.
#[derive(Clone, Default)]
pub struct Services {
    input_broker: Option<Arc<dyn InputBroker>>,
}

impl Services {
    /// Services with the operator's input broker, when there is an operator.
    pub fn new(input_broker: Option<Arc<dyn InputBroker>>) -> Self {
        Services { input_broker }
    }

    /// The ids of the services offered.
    pub fn ids(&self) -> Vec<&'static str> {
        self.input_broker
            .iter()
            .map(|_| INPUT_BROKER_SERVICE)
            .collect()
    }

    /// `promptforge/input-broker`, where there is an operator.
    pub fn input_broker(&self) -> Option<Arc<dyn InputBroker>> {
        self.input_broker.clone()
    }
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("ids", &self.ids())
            .finish()
    }
}

/// What a Plugin receives when it activates: only the run's filesystem, its cancel
/// signal, its end and the Host's services, plus where it writes its run log lines.
#[derive(Debug, Clone)]
pub struct Activation {
    /// The run's store: the files its tools read and write are the ones the store sees.
    pub filesystem: Arc<Store>,
    /// Fires when the run is cancelled.
    pub cancel: CancellationToken,
    /// The end of the run: what the Plugin starts for the run (a process) is
    /// undone there ([`RunEnd::on_end`]), however the run ends. An activation
    /// outside a run (listing a catalog) has an end of its own, never reached.
    pub end: RunEnd,
    /// The Host's services.
    pub services: Services,
    /// The run log lines of this activation (such as the tools an MCP server lists
    /// that the Plugin skipped); prepare appends them to the run log.
    pub log: ActivationLog,
}

impl Activation {
    /// An activation with an empty log and an end of its own.
    pub fn new(filesystem: Arc<Store>, cancel: CancellationToken, services: Services) -> Self {
        Activation {
            filesystem,
            cancel,
            end: RunEnd::default(),
            services,
            log: ActivationLog::default(),
        }
    }

    /// The activation for the run whose end is `end`.
    pub fn for_run(mut self, end: &RunEnd) -> Self {
        self.end = end.clone();
        self
    }
}

/// The log lines one activation writes; each activation has its own, so two runs
/// activating one Plugin at once never see each other's lines.
#[derive(Debug, Clone, Default)]
pub struct ActivationLog(Arc<Mutex<Vec<String>>>);

impl ActivationLog {
    /// Adds a line.
    pub fn line(&self, line: String) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(line);
    }

    /// Every line written so far, in order, leaving the log empty.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// Why a Plugin failed to activate (the reason the skip line or notice gives).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ActivationError {
    /// The reason.
    pub reason: String,
}

impl ActivationError {
    /// A failure with its reason.
    pub fn new(reason: impl Into<String>) -> Self {
        ActivationError {
            reason: reason.into(),
        }
    }
}

/// A Plugin the Host registers with the Harness.
#[async_trait]
pub trait Plugin: Send + Sync {
    /// The Plugin id, `namespace/plugin`.
    fn id(&self) -> &str;
    /// The ids of Plugins this one cannot be activated together with.
    fn conflicts(&self) -> Vec<String> {
        Vec::new()
    }
    /// Activates the Plugin for one run and returns its tools, in its own order.
    async fn activate(&self, activation: Activation)
        -> Result<Vec<Arc<dyn Tool>>, ActivationError>;
}
