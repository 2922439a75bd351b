//! The tokens of a round counted here, when the provider reported none (the
//! offline models, a server that sends no usage): the messages with the chat
//! format's framing and the tools offered as their JSON definitions, then the
//! reply's text and calls, with the model's encoding (`promptforge-tokens`).
//!
//! Each round's request holds the conversation so far, so a run's texts are
//! counted once each ([`TokenMemo`]): counting is linear in the conversation,
//! not in the sum of its rounds.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;

use promptforge_tokens::{Encoding, PER_MESSAGE, REPLY_PRIMING};

use super::{ModelReply, ModelRequest};
use crate::trace::Usage;

/// Texts shorter than this are counted each time (a lookup costs about as much).
const MEMO_FROM: usize = 256;

/// The token counts of a run's texts counted so far, by encoding, length and
/// hash: the earlier messages of a conversation are not counted again at each
/// round.
#[derive(Debug, Default)]
pub struct TokenMemo {
    counts: Mutex<HashMap<(Encoding, usize, u64), u64>>,
}

impl TokenMemo {
    /// The tokens of `text` with `encoding`, counted once per text.
    pub fn count(&self, encoding: Encoding, text: &str) -> Option<u64> {
        if text.len() < MEMO_FROM {
            return encoding.count(text);
        }
        let key = (
            encoding,
            text.len(),
            rustc_hash::FxBuildHasher.hash_one(text),
        );
        let lock = || self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = lock().get(&key) {
            return Some(*count);
        }
        // Counted unlocked: other chains' rounds need not wait for this one.
        let count = encoding.count(text)?;
        lock().insert(key, count);
        Some(count)
    }
}

/// The estimated tokens of `request` and `reply` for the provider's model
/// `model`, each text counted once per run through `memo`; None when the
/// encoding cannot load.
pub fn estimate(
    model: &str,
    request: &ModelRequest,
    reply: &ModelReply,
    memo: &TokenMemo,
) -> Option<Usage> {
    let encoding = Encoding::for_model(model);
    let count = |text: &str| memo.count(encoding, text);
    let mut input = REPLY_PRIMING;
    for message in &request.messages {
        input += PER_MESSAGE + count(&message.content)?;
        for call in &message.tool_calls {
            input += count(&call.name)? + count(&call.arguments)?;
        }
    }
    for tool in &request.tools {
        let definition = serde_json::json!({
            "name": tool.name, "description": tool.description, "parameters": tool.parameters,
        });
        input += count(&definition.to_string())?;
    }
    let mut output = count(&reply.content)?;
    for call in &reply.tool_calls {
        output += count(&call.name)? + count(&call.arguments)?;
    }
    Some(Usage {
        input_tokens: input,
        output_tokens: output,
        estimated: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{ChatMessage, Role};

    #[test]
    fn a_round_is_counted_with_its_framing() {
        let request = ModelRequest {
            model: "gpt-4o".into(),
            messages: vec![ChatMessage::text(Role::User, "hello world")],
            tools: Vec::new(),
            temperature: None,
            max_tokens: None,
        };
        let usage = estimate(
            "gpt-4o",
            &request,
            &ModelReply::new("hello world", Vec::new()),
            &TokenMemo::default(),
        );
        assert_eq!(
            usage,
            Some(Usage {
                input_tokens: 2 + PER_MESSAGE + REPLY_PRIMING,
                output_tokens: 2,
                estimated: true
            })
        );
    }
}
