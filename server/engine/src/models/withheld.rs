//! A Host model of a project configuration that is not trusted (`host.md` §1.1):
//! named, so labels bind and the editor checks the prompt, but never built: its
//! key is not read, its turns file not opened, and every round fails with the
//! refusal that says how to trust the configuration.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::models::provider::{ModelError, ModelProvider, ModelReply, ModelRequest};

/// A model withheld until its configuration is trusted.
#[derive(Debug, Clone)]
pub struct WithheldProvider {
    refusal: String,
}

impl WithheldProvider {
    /// A model whose every round fails with `refusal`.
    pub fn new(refusal: String) -> Self {
        WithheldProvider { refusal }
    }
}

#[async_trait]
impl ModelProvider for WithheldProvider {
    fn kind(&self) -> &str {
        "withheld"
    }

    async fn complete(
        &self,
        _request: &ModelRequest,
        _cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        Err(ModelError::naming_model(self.refusal.clone()))
    }
}
