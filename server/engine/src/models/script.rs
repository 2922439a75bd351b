//! The `script` provider: replies from a YAML list of turns, one per model round,
//! in the format of `testing.md`'s `model:` list (`- text: ...` or
//! `- calls: [ {alias: {arguments}} ]`).

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::messages;
use crate::models::provider::{ModelError, ModelProvider, ModelReply, ModelRequest, ToolCall};

/// One scripted round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// A final text reply.
    Text(String),
    /// Tool calls: (name, JSON arguments text), in order.
    Calls(Vec<(String, String)>),
}

/// Why a turns file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(pub String);

/// Reads a YAML list of turns.
pub fn parse_turns(yaml: &str) -> Result<Vec<Turn>, ScriptError> {
    let value: serde_yaml::Value = serde_yaml::from_str(yaml)
        .map_err(|e| ScriptError(format!("the turns are not valid YAML: {e}")))?;
    if value.is_null() {
        return Ok(Vec::new());
    }
    let Some(list) = value.as_sequence() else {
        return Err(ScriptError("the turns file holds a list of turns".into()));
    };
    list.iter()
        .enumerate()
        .map(|(i, turn)| parse_turn(i + 1, turn))
        .collect()
}

fn parse_turn(number: usize, turn: &serde_yaml::Value) -> Result<Turn, ScriptError> {
    let bad = |what: &str| ScriptError(format!("turn {number}: {what}"));
    let map = turn
        .as_mapping()
        .ok_or_else(|| bad("expected a map with `text` or `calls`"))?;
    if map.len() != 1 {
        return Err(bad("expected exactly one of `text` or `calls`"));
    }
    if let Some(text) = map.get("text") {
        let text = text
            .as_str()
            .ok_or_else(|| bad("`text` must be a string"))?;
        return Ok(Turn::Text(text.to_owned()));
    }
    let calls = map
        .get("calls")
        .and_then(serde_yaml::Value::as_sequence)
        .ok_or_else(|| bad("expected exactly one of `text` or `calls` (a list)"))?;
    let mut out = Vec::new();
    for call in calls {
        let entry = call
            .as_mapping()
            .filter(|m| m.len() == 1)
            .and_then(|m| m.iter().next())
            .ok_or_else(|| bad("each call is a map of one alias to its arguments"))?;
        let name = entry
            .0
            .as_str()
            .ok_or_else(|| bad("a call's alias must be a string"))?;
        let arguments = match entry.1 {
            serde_yaml::Value::String(raw) => raw.clone(),
            other => {
                let json: serde_json::Value = serde_yaml::from_value(other.clone())
                    .map_err(|e| bad(&format!("the arguments of {name} are not JSON data: {e}")))?;
                json.to_string()
            }
        };
        out.push((name.to_owned(), arguments));
    }
    Ok(Turn::Calls(out))
}

/// Replies from scripted turns, in order, for the whole run.
#[derive(Debug)]
pub struct ScriptProvider {
    turns: Vec<Turn>,
    next: Mutex<usize>,
}

impl ScriptProvider {
    /// A provider replaying `turns`.
    pub fn new(turns: Vec<Turn>) -> Self {
        ScriptProvider {
            turns,
            next: Mutex::new(0),
        }
    }

    /// A provider replaying the turns file at `path`.
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScriptError(format!("{}: cannot be read: {e}", path.display())))?;
        parse_turns(&text)
            .map(ScriptProvider::new)
            .map_err(|e| ScriptError(format!("{}: {}", path.display(), e.0)))
    }

    /// How many rounds were replied to.
    pub fn rounds_used(&self) -> usize {
        *self.next.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many turns were never used.
    pub fn rounds_left(&self) -> usize {
        self.turns.len().saturating_sub(self.rounds_used())
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
        let round = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let round = *next;
            if round >= self.turns.len() {
                return Err(ModelError::new(messages::script_ended(self.turns.len())));
            }
            *next += 1;
            round
        };
        Ok(match self.turns.get(round) {
            Some(Turn::Text(text)) => ModelReply {
                content: text.clone(),
                tool_calls: Vec::new(),
            },
            Some(Turn::Calls(calls)) => ModelReply {
                content: String::new(),
                tool_calls: calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, arguments))| ToolCall {
                        id: format!("call_{}_{}", round + 1, i + 1),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    })
                    .collect(),
            },
            None => return Err(ModelError::new(messages::script_ended(self.turns.len()))),
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
    async fn replays_turns_in_order_then_ends() {
        let turns = parse_turns(
            "- calls:\n    - search: { query: \"rust\" }\n    - fetch: { url: \"https://x\" }\n- text: \"Rust is a systems language.\"\n",
        )
        .unwrap();
        let provider = ScriptProvider::new(turns);
        let cancel = CancellationToken::new();
        let first = provider.complete(&request(), &cancel).await.unwrap();
        assert_eq!(first.tool_calls.len(), 2);
        assert_eq!(first.tool_calls[0].name, "search");
        assert_eq!(first.tool_calls[0].arguments, r#"{"query":"rust"}"#);
        assert_eq!(first.tool_calls[1].id, "call_1_2");
        let second = provider.complete(&request(), &cancel).await.unwrap();
        assert_eq!(second.content, "Rust is a systems language.");
        assert_eq!(provider.rounds_left(), 0);
        let error = provider.complete(&request(), &cancel).await.unwrap_err();
        assert_eq!(error.message, "the model script ended after 2 rounds");
    }

    #[test]
    fn malformed_turns_are_refused() {
        assert!(parse_turns("text: x").is_err());
        assert_eq!(
            parse_turns("- {}").unwrap_err().0,
            "turn 1: expected exactly one of `text` or `calls`"
        );
        assert_eq!(
            parse_turns("- text: 3").unwrap_err().0,
            "turn 1: `text` must be a string"
        );
        assert!(parse_turns("- calls: [3]").is_err());
    }
}
