//! The `Plugin` trait and what a Plugin receives when it activates.

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

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
/// signal and the Host's services.
#[derive(Debug, Clone)]
pub struct Activation {
    /// The run's store: the files its tools read and write are the ones the store sees.
    pub filesystem: Arc<Store>,
    /// Fires when the run is cancelled.
    pub cancel: CancellationToken,
    /// The Host's services.
    pub services: Services,
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
    /// The run log lines of the latest activations (such as tools an MCP server
    /// lists that the Plugin skipped), drained: prepare appends them to the run log
    /// right after `activate` returns.
    fn take_log(&self) -> Vec<String> {
        Vec::new()
    }
}
