//! The terminal's input broker: `input.ask` prints the question on stderr and reads
//! the operator's answer from stdin.

use std::io::{BufRead, Write};

use async_trait::async_trait;
use promptforge_engine::input::{InputBroker, InputError};

/// Asks on the terminal.
#[derive(Debug, Default)]
pub struct TerminalInput;

#[async_trait]
impl InputBroker for TerminalInput {
    async fn ask(&self, question: &str) -> Result<String, InputError> {
        let question = question.to_owned();
        let answer = tokio::task::spawn_blocking(move || {
            let mut stderr = std::io::stderr();
            let _ = write!(stderr, "{question} ");
            let _ = stderr.flush();
            let mut line = String::new();
            match std::io::stdin().lock().read_line(&mut line) {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
            }
        })
        .await
        .ok()
        .flatten();
        answer.ok_or(InputError::Unavailable)
    }
}
