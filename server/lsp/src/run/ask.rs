//! `input.ask` in the editor: the run's input broker sends the request
//! `promptforge/ask` `{runId, question}` to the client and waits for `{answer}`;
//! `null`, an error answer or a client that cannot be reached is
//! `input_unavailable`, as with no operator.

use promptforge_engine::input::{InputBroker, InputError};
use tower_lsp::Client;

use crate::run::protocol::{AskParams, AskRequest};

/// The input broker of one run.
pub struct EditorInput {
    client: Client,
    run_id: String,
}

impl EditorInput {
    /// The broker of the run `run_id`, asking `client`.
    pub fn new(client: Client, run_id: String) -> Self {
        EditorInput { client, run_id }
    }
}

#[tower_lsp::async_trait]
impl InputBroker for EditorInput {
    async fn ask(&self, question: &str) -> Result<String, InputError> {
        let params = AskParams {
            run_id: self.run_id.clone(),
            question: question.to_owned(),
        };
        // Detached: a cancelled run drops this future before the client answers.
        let asked = crate::client_request::detached::<AskRequest>(&self.client, params);
        match crate::client_request::answer(asked).await {
            Ok(Some(answer)) => Ok(answer.answer),
            Ok(None) | Err(_) => Err(InputError::Unavailable),
        }
    }
}
