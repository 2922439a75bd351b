//! The `echo` provider: offline and deterministic, it replies with the text of the
//! last user message and never calls a tool.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::models::provider::{ModelError, ModelProvider, ModelReply, ModelRequest, Role};

/// The built-in offline model.
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoProvider;

#[async_trait]
impl ModelProvider for EchoProvider {
    fn kind(&self) -> &str {
        "echo"
    }

    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::cancelled());
        }
        let content = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        Ok(ModelReply {
            content,
            tool_calls: Vec::new(),
            ..ModelReply::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::provider::ChatMessage;

    #[tokio::test]
    async fn replies_with_the_last_user_message() {
        let request = ModelRequest {
            model: "echo".into(),
            messages: vec![
                ChatMessage::text(Role::System, "be brief"),
                ChatMessage::text(Role::User, "first"),
                ChatMessage::text(Role::User, "second"),
                ChatMessage::text(Role::Assistant, "reply"),
            ],
            tools: Vec::new(),
            temperature: None,
            max_tokens: None,
        };
        let reply = EchoProvider
            .complete(&request, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(reply.content, "second");
        assert!(reply.tool_calls.is_empty());
        let empty = ModelRequest {
            messages: Vec::new(),
            ..request
        };
        assert_eq!(
            EchoProvider
                .complete(&empty, &CancellationToken::new())
                .await
                .unwrap()
                .content,
            ""
        );
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(
            EchoProvider
                .complete(&empty, &cancel)
                .await
                .unwrap_err()
                .cancelled
        );
    }
}
