//! Inlay hints, token counts: `≈ N tokens` after each string literal that goes
//! to a model (a conversation's `:system`/`:user`/`:assistant` argument,
//! `models.infer`'s). The counting itself is the front end's
//! ([`TokenCounter`]: a tokenizer and its cache); only the literals in the
//! requested range are counted.

use std::ops::Range;

use super::inlay_hints::{InlayHint, InlayHintKind, Tooltip};
use super::PromptText;
use crate::lua_facts::in_file;

/// Counts the tokens of a text, in one encoding.
pub trait TokenCounter {
    /// The encoding's name, as the tooltip names it (`o200k_base`).
    fn encoding_name(&self) -> &str;
    /// The number of tokens of `text`, when it can be counted.
    fn count(&self, text: &str) -> Option<u64>;
}

/// The token count hints of the model texts that end inside `wanted` (its ends included).
pub fn token_hints(
    prompt: PromptText<'_>,
    wanted: &Range<usize>,
    counter: &dyn TokenCounter,
) -> Vec<InlayHint> {
    let texts = prompt
        .model
        .blocks_in_file()
        .flat_map(|(facts, code_start)| {
            facts.model_texts.iter().map(move |text| {
                (
                    in_file(code_start, &text.range),
                    in_file(code_start, &text.content),
                )
            })
        });
    texts
        .filter(|(range, _)| wanted.start <= range.end && range.end <= wanted.end)
        .filter_map(|(range, content)| {
            let content = prompt.text.get(content)?;
            let tokens = counter.count(content)?;
            let unit = if tokens == 1 { "token" } else { "tokens" };
            Some(InlayHint {
                offset: range.end,
                label: format!("≈ {tokens} {unit}"),
                kind: InlayHintKind::TokenCount,
                tooltip: Some(Tooltip::Plain(format!(
                    "Estimated with {}; the model's own count may differ.",
                    counter.encoding_name()
                ))),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::Fixture;

    /// One token per word.
    struct Words;

    impl TokenCounter for Words {
        fn encoding_name(&self) -> &str {
            "words"
        }

        fn count(&self, text: &str) -> Option<u64> {
            Some(text.split_whitespace().count() as u64)
        }
    }

    #[test]
    fn each_text_to_a_model_in_range_shows_its_count() {
        let text = "---\nname: p\npromptforge: 0\n---\n# P\n\n```lua\nlocal m = messages.new():system('be brief'):user('hi')\n```\n";
        let fixture = Fixture::new(text);
        let brief = fixture.at("'be brief'", 10);
        let hi = fixture.at("'hi'", 4);
        let hints = token_hints(fixture.prompt(), &(0..text.len()), &Words);
        let tooltip = Some(Tooltip::Plain(
            "Estimated with words; the model's own count may differ.".to_owned(),
        ));
        assert_eq!(
            hints,
            [
                InlayHint {
                    offset: brief,
                    label: "≈ 2 tokens".to_owned(),
                    kind: InlayHintKind::TokenCount,
                    tooltip: tooltip.clone(),
                },
                InlayHint {
                    offset: hi,
                    label: "≈ 1 token".to_owned(),
                    kind: InlayHintKind::TokenCount,
                    tooltip,
                },
            ]
        );
        assert_eq!(
            token_hints(fixture.prompt(), &(hi..text.len()), &Words).len(),
            1
        );
    }
}
