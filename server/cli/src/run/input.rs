//! The terminal's input broker: `input.ask` prints the question on stderr and reads
//! the operator's answer from stdin, with the status line hidden meanwhile.

use std::io::{BufRead, Write};

use async_trait::async_trait;
use promptforge_engine::input::{InputBroker, InputError};

use super::status::StatusPause;

/// Asks on the terminal.
#[derive(Clone, Default)]
pub struct TerminalInput {
    pause: StatusPause,
}

impl TerminalInput {
    /// Asks with the status line `pause` hides.
    pub fn new(pause: StatusPause) -> Self {
        TerminalInput { pause }
    }
}

#[async_trait]
impl InputBroker for TerminalInput {
    async fn ask(&self, question: &str) -> Result<String, InputError> {
        let question = question.to_owned();
        let pause = self.pause.clone();
        let answer = tokio::task::spawn_blocking(move || pause.around(|| read_answer(&question)))
            .await
            .ok()
            .flatten();
        answer.ok_or(InputError::Unavailable)
    }
}

/// Prints `question` on stderr and reads one line of stdin (None at its end).
fn read_answer(question: &str) -> Option<String> {
    let mut stderr = std::io::stderr();
    let _ = write!(stderr, "{question} ");
    let _ = stderr.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
    }
}
