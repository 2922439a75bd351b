//! The `script` provider: replies from a YAML list of rounds, one per model round,
//! in the format of `testing.md`'s `model:` list (`- text: ...` or
//! `- calls: [ {alias: {arguments}} ]`), read by the test file reader
//! ([`promptforge_syntax::test_file::parse_rounds`]) with the same rules and messages.

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use promptforge_syntax::test_file::{parse_rounds, Round};
use promptforge_syntax::{Code, Diagnostic, LineIndex};
use tokio_util::sync::CancellationToken;

use crate::messages;
use crate::models::provider::{ModelError, ModelProvider, ModelReply, ModelRequest, ToolCall};

/// Why a turns file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(pub String);

/// Reads a YAML list of rounds; the first problem as `{line}:{column}: {message}`.
pub fn parse_turns(yaml: &str) -> Result<Vec<Round>, ScriptError> {
    read_turns(yaml, &|diagnostic| diagnostic.message.clone())
}

/// Reads a YAML list of rounds; the first problem at its line and column, worded
/// by `describe`.
fn read_turns(
    yaml: &str,
    describe: &dyn Fn(&Diagnostic) -> String,
) -> Result<Vec<Round>, ScriptError> {
    let (rounds, diagnostics) = parse_rounds(yaml);
    match diagnostics.first() {
        None => Ok(rounds),
        Some(first) => {
            let (line, column) = LineIndex::new(yaml).position(yaml, first.offset);
            Err(ScriptError(format!("{line}:{column}: {}", describe(first))))
        }
    }
}

/// A problem of a turns file a configuration names, without any of the file's
/// text: the file may be anything (a key, a `.env`), and the message may reach a
/// public CI log.
fn without_content(diagnostic: &Diagnostic) -> String {
    let shape = match &diagnostic.code {
        Code::TestFile(problem) => problem.without_content(),
        _ => "the YAML does not parse".to_owned(),
    };
    format!("not a turns file: {shape}")
}

/// Where the replay stands.
#[derive(Debug, Default)]
struct Progress {
    /// The next round to reply with.
    next: usize,
    /// True once a round was asked for after the script ended.
    ran_out: bool,
}

/// Replies from scripted rounds, in order, for the whole run.
#[derive(Debug)]
pub struct ScriptProvider {
    rounds: Vec<Round>,
    progress: Mutex<Progress>,
}

impl ScriptProvider {
    /// A provider replaying `rounds`.
    pub fn new(rounds: Vec<Round>) -> Self {
        ScriptProvider {
            rounds,
            progress: Mutex::new(Progress::default()),
        }
    }

    /// A provider replaying the turns file at `path`; a problem of the file as
    /// `{path}:{line}:{column}: not a turns file: {what}`, never quoting the file.
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = crate::user_file::read_to_string(path)
            .map_err(|e| ScriptError(format!("{}: cannot be read: {e}", path.display())))?;
        read_turns(&text, &without_content)
            .map(ScriptProvider::new)
            .map_err(|e| ScriptError(format!("{}:{}", path.display(), e.0)))
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many rounds were replied to.
    pub fn rounds_used(&self) -> usize {
        self.progress().next
    }

    /// How many rounds were never used.
    pub fn rounds_left(&self) -> usize {
        self.rounds.len().saturating_sub(self.rounds_used())
    }

    /// True once a round was asked for after the script ended.
    pub fn ran_out(&self) -> bool {
        self.progress().ran_out
    }
}

#[async_trait]
impl ModelProvider for ScriptProvider {
    fn kind(&self) -> &str {
        "script"
    }

    async fn complete(
        &self,
        _request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::cancelled());
        }
        let ended = || ModelError::new(messages::script_ended(self.rounds.len()));
        let round = {
            let mut progress = self.progress();
            let round = progress.next;
            if round >= self.rounds.len() {
                progress.ran_out = true;
                return Err(ended());
            }
            progress.next += 1;
            round
        };
        Ok(match self.rounds.get(round) {
            Some(Round::Text(text)) => ModelReply {
                content: text.clone(),
                tool_calls: Vec::new(),
                ..ModelReply::default()
            },
            Some(Round::Calls(calls)) => ModelReply {
                content: String::new(),
                tool_calls: calls
                    .iter()
                    .enumerate()
                    .map(|(i, call)| ToolCall {
                        id: format!("call_{}_{}", round + 1, i + 1),
                        name: call.alias.value.clone(),
                        arguments: call.arguments.clone(),
                    })
                    .collect(),
                ..ModelReply::default()
            },
            None => return Err(ended()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ModelRequest {
        ModelRequest {
            model: "s".into(),
            messages: Vec::new(),
            tools: Vec::new(),
            temperature: None,
            max_tokens: None,
        }
    }

    #[tokio::test]
    async fn replays_rounds_in_order_then_ends() {
        let rounds = parse_turns(
            "- calls:\n    - search: { query: \"rust\" }\n    - fetch: { url: \"https://x\" }\n- text: \"Rust is a systems language.\"\n",
        )
        .unwrap();
        let provider = ScriptProvider::new(rounds);
        let cancel = CancellationToken::new();
        let first = provider.complete(&request(), &cancel).await.unwrap();
        assert_eq!(first.tool_calls.len(), 2);
        assert_eq!(first.tool_calls[0].name, "search");
        assert_eq!(first.tool_calls[0].arguments, r#"{"query":"rust"}"#);
        assert_eq!(first.tool_calls[0].id, "call_1_1");
        assert_eq!(first.tool_calls[1].id, "call_1_2");
        let second = provider.complete(&request(), &cancel).await.unwrap();
        assert_eq!(second.content, "Rust is a systems language.");
        assert_eq!((provider.rounds_used(), provider.rounds_left()), (2, 0));
        assert!(!provider.ran_out());
        let error = provider.complete(&request(), &cancel).await.unwrap_err();
        assert_eq!(error.message, "the model script ended after 2 rounds");
        assert!(provider.ran_out());
        assert_eq!(provider.rounds_used(), 2);
    }

    #[tokio::test]
    async fn a_script_not_used_up_has_rounds_left_and_did_not_run_out() {
        let provider = ScriptProvider::new(parse_turns("- text: a\n- text: b\n").unwrap());
        let reply = provider
            .complete(&request(), &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(reply.content, "a");
        assert_eq!((provider.rounds_left(), provider.ran_out()), (1, false));
    }

    #[test]
    fn malformed_rounds_are_refused_at_their_line_and_column() {
        assert_eq!(
            parse_turns("text: x").unwrap_err().0,
            "1:1: invalid type: map, expected a sequence"
        );
        assert_eq!(
            parse_turns("- {}").unwrap_err().0,
            "1:3: a model round holds exactly one of `text` or `calls`"
        );
        assert_eq!(
            parse_turns("- text: 3").unwrap_err().0,
            "1:9: invalid type: integer `3`, expected a string"
        );
        assert_eq!(
            parse_turns("- calls: [3]").unwrap_err().0,
            "1:11: a scripted call is a map of one alias to its arguments"
        );
        assert_eq!(parse_turns(""), Ok(Vec::new()));
    }

    #[test]
    fn a_turns_file_names_its_path_before_the_position() {
        let dir = std::env::temp_dir().join(format!("pf-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("turns.yaml");
        std::fs::write(&path, "- text: ok\n- texts: x\n").unwrap();
        let error = ScriptProvider::from_file(&path).unwrap_err().0;
        assert_eq!(
            error,
            format!(
                "{}:2:3: not a turns file: an unknown key, expected `text` or `calls`",
                path.display()
            )
        );
        // A file that is no turns file at all (a private key, a `.env`) is never quoted.
        let secret = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n";
        std::fs::write(&path, secret).unwrap();
        let error = ScriptProvider::from_file(&path).unwrap_err().0;
        assert_eq!(
            error,
            format!(
                "{}:1:1: not a turns file: invalid type, expected a sequence",
                path.display()
            )
        );
        std::fs::write(&path, "AWS_SECRET=abc123: [x\n").unwrap();
        let error = ScriptProvider::from_file(&path).unwrap_err().0;
        assert!(!error.contains("abc123"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
