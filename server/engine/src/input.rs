//! The input broker: the Host service that asks the operator (`input.ask`, and
//! `promptforge/input-broker` for Plugins).

use async_trait::async_trait;

/// The service id Plugins ask for.
pub const INPUT_BROKER_SERVICE: &str = "promptforge/input-broker";

/// Why the broker gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// No one answered (end of input, closed terminal).
    #[error("no operator is available to answer input.ask")]
    Unavailable,
}

/// Asks the operator and waits for the answer.
#[async_trait]
pub trait InputBroker: Send + Sync {
    /// The operator's answer to `question` (without its line ending).
    async fn ask(&self, question: &str) -> Result<String, InputError>;
}

/// A broker answering from a fixed list, in order (for tests and scripted runs).
#[derive(Debug, Default)]
pub struct ScriptedInput {
    answers: std::sync::Mutex<std::collections::VecDeque<String>>,
}

impl ScriptedInput {
    /// A broker giving `answers` in order, then none.
    pub fn new(answers: impl IntoIterator<Item = String>) -> Self {
        ScriptedInput {
            answers: std::sync::Mutex::new(answers.into_iter().collect()),
        }
    }
}

#[async_trait]
impl InputBroker for ScriptedInput {
    async fn ask(&self, _question: &str) -> Result<String, InputError> {
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        answers.pop_front().ok_or(InputError::Unavailable)
    }
}
