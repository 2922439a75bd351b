//! The tokens of a round counted here, when the provider reported none (the
//! offline models, a server that sends no usage): the messages with the chat
//! format's framing and the tools offered as their JSON definitions, then the
//! reply's text and calls, with the model's encoding (`promptforge-tokens`).

use promptforge_tokens::{Encoding, PER_MESSAGE, REPLY_PRIMING};

use super::{ModelReply, ModelRequest};
use crate::trace::Usage;

/// The estimated tokens of `request` and `reply` for the provider's model
/// `model`; None when the encoding cannot load.
pub fn estimate(model: &str, request: &ModelRequest, reply: &ModelReply) -> Option<Usage> {
    let encoding = Encoding::for_model(model);
    let mut input = REPLY_PRIMING;
    for message in &request.messages {
        input += PER_MESSAGE + encoding.count(&message.content)?;
        for call in &message.tool_calls {
            input += encoding.count(&call.name)? + encoding.count(&call.arguments)?;
        }
    }
    for tool in &request.tools {
        let definition = serde_json::json!({
            "name": tool.name, "description": tool.description, "parameters": tool.parameters,
        });
        input += encoding.count(&definition.to_string())?;
    }
    let mut output = encoding.count(&reply.content)?;
    for call in &reply.tool_calls {
        output += encoding.count(&call.name)? + encoding.count(&call.arguments)?;
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
