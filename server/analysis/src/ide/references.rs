//! Find references: every place an alias, a label or a section is named in the prompt.

use std::ops::Range;

use super::PromptText;
use crate::symbols::{occurrences, symbol_at};

/// The byte ranges where the symbol at `offset` appears, in document order (its
/// declaration among them when `include_declaration`); None when nothing there is one.
pub fn references(
    prompt: PromptText<'_>,
    offset: usize,
    include_declaration: bool,
) -> Option<Vec<Range<usize>>> {
    let document = &prompt.analysis.document;
    let (symbol, _) = symbol_at(document, prompt.model, offset)?;
    Some(
        occurrences(document, prompt.model, &symbol)
            .into_iter()
            .filter(|o| include_declaration || !o.declaration)
            .map(|o| o.range)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{Fixture, DEMO};

    #[test]
    fn every_use_of_a_label_with_or_without_its_declaration() {
        let fixture = Fixture::new(DEMO);
        let key = fixture.at("writer: ", 0);
        let use_ = fixture.at("writer')", 0);
        assert_eq!(
            references(fixture.prompt(), use_ + 1, true),
            Some(vec![key..key + 6, use_..use_ + 6])
        );
        let uses = references(fixture.prompt(), key, false).expect("a label");
        assert_eq!(uses.as_slice(), std::slice::from_ref(&(use_..use_ + 6)));
        assert_eq!(
            references(fixture.prompt(), fixture.at("Fetches the", 3), false),
            None
        );
    }
}
