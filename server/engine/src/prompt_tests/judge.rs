//! `expect.judge` (`testing.md`): after the run, one model request grades the
//! result against the case's rubric. The judge is a Host model like a label's
//! (`model:`, else the Host's default), also under `test --models`, which pins
//! the prompt's labels only; in a scripted case every label, the judge
//! included, is the script, so the judge's answer is the round after the
//! run's rounds. Its verdict is a JSON object `{"pass": bool, "reason": text}`;
//! the reason is shown when it fails.

use promptforge_syntax::test_file::ExpectJudge;
use tokio_util::sync::CancellationToken;

use super::failure::Failure;
use super::messages;
use crate::host::Host;
use crate::models::{ChatMessage, ModelRequest, Role};

/// The judge's label in binding errors.
const JUDGE_LABEL: &str = "judge";

/// What the judge is told, before the rubric and the result.
pub const INSTRUCTIONS: &str = "You grade the result of a prompt against a rubric. \
Answer with one JSON object and nothing else: {\"pass\": true or false, \"reason\": \"one sentence saying why\"}.";

/// The judge's verdict, read from its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// True when the result meets the rubric.
    pub pass: bool,
    /// Why (empty when the judge gave no reason).
    pub reason: String,
}

/// The request that asks the judge about `result`.
pub fn request(provider_model: &str, rubric: &str, result: &str) -> ModelRequest {
    ModelRequest {
        model: provider_model.to_owned(),
        messages: vec![
            ChatMessage::text(Role::System, INSTRUCTIONS),
            ChatMessage::text(
                Role::User,
                format!("Rubric:\n{rubric}\n\nResult:\n{result}"),
            ),
        ],
        tools: Vec::new(),
        temperature: Some(0.0),
        max_tokens: None,
    }
}

/// The verdict in `answer`: its first JSON object that has a boolean `pass`
/// (models often wrap it in prose or a code fence). None: no verdict.
pub fn read_verdict(answer: &str) -> Option<Verdict> {
    let mut rest = answer;
    while let Some(start) = rest.find('{') {
        let candidate = &rest[start..];
        let mut objects =
            serde_json::Deserializer::from_str(candidate).into_iter::<serde_json::Value>();
        if let Some(Ok(value)) = objects.next() {
            if let Some(pass) = value.get("pass").and_then(serde_json::Value::as_bool) {
                let reason = value
                    .get("reason")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                return Some(Verdict { pass, reason });
            }
        }
        rest = &candidate[1..];
    }
    None
}

/// Grades `result` with the judge of `judge`; the failure when it does not pass.
pub async fn grade(
    host: &Host,
    judge: &ExpectJudge,
    result: Option<&str>,
    cancel: &CancellationToken,
) -> Option<Failure> {
    let at = Some(judge.range.clone());
    let fail = |message: String| Some(Failure::new("expect.judge", message).at(at.clone()));
    let Some(result) = result else {
        return fail(messages::NOTHING_TO_JUDGE.to_owned());
    };
    let model = judge.model.as_ref().map(|m| m.value.as_str());
    // With `test --models`, the judge stays the judge: not the model under test.
    let resolved = match host.resolve_unpinned(JUDGE_LABEL, model) {
        Ok(resolved) => resolved,
        Err(message) => return fail(messages::judge_unavailable(&message)),
    };
    let provider = match &resolved.provider {
        Ok(provider) => provider.clone(),
        Err(message) => return fail(messages::judge_unavailable(message)),
    };
    let request = request(&resolved.provider_model, &judge.rubric.value, result);
    let reply = match provider.complete(&request, cancel).await {
        Ok(reply) => reply,
        Err(error) => return fail(messages::judge_unavailable(&error.message)),
    };
    match read_verdict(&reply.content) {
        Some(Verdict { pass: true, .. }) => None,
        Some(Verdict { reason, .. }) => Some(
            Failure::new("expect.judge", messages::judge_failed(&reason))
                .comparing(judge.rubric.value.as_str(), result)
                .at(at),
        ),
        None => Some(
            Failure::new("expect.judge", messages::JUDGE_GAVE_NO_VERDICT)
                .comparing(judge.rubric.value.as_str(), reply.content.as_str())
                .at(at),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_read_from_prose_or_a_fence() {
        assert_eq!(
            read_verdict("{\"pass\": true, \"reason\": \"names Paris\"}"),
            Some(Verdict {
                pass: true,
                reason: "names Paris".to_owned()
            })
        );
        assert_eq!(
            read_verdict("Sure.\n```json\n{\"pass\": false, \"reason\": \"wrong city\"}\n```"),
            Some(Verdict {
                pass: false,
                reason: "wrong city".to_owned()
            })
        );
        // An object without a boolean `pass` is passed over for a later one.
        assert_eq!(
            read_verdict("{\"note\": 1} then {\"pass\": false}"),
            Some(Verdict {
                pass: false,
                reason: String::new()
            })
        );
    }

    #[test]
    fn an_answer_without_a_verdict_is_none() {
        assert_eq!(read_verdict("yes, it passes"), None);
        assert_eq!(read_verdict("{\"pass\": \"yes\"}"), None);
        assert_eq!(read_verdict("{ broken"), None);
    }

    #[test]
    fn the_request_holds_the_instructions_the_rubric_and_the_result() {
        let request = request("m", "names the capital", "Paris");
        assert_eq!(request.model, "m");
        assert_eq!(request.messages[0].content, INSTRUCTIONS);
        assert_eq!(
            request.messages[1].content,
            "Rubric:\nnames the capital\n\nResult:\nParis"
        );
        assert!(request.tools.is_empty());
        assert_eq!(request.temperature, Some(0.0));
    }
}
