//! Go to definition: an alias or label use -> its frontmatter key; a target ->
//! its heading. Every symbol is declared in the same prompt, so the answer is a
//! byte range of it.

use std::ops::Range;

use super::PromptText;
use crate::symbols::{occurrences, symbol_at};

/// The byte range of the declaration of the symbol at `offset`.
pub fn definition(prompt: PromptText<'_>, offset: usize) -> Option<Range<usize>> {
    let document = &prompt.analysis.document;
    let (symbol, _) = symbol_at(document, prompt.model, offset)?;
    occurrences(document, prompt.model, &symbol)
        .into_iter()
        .find(|o| o.declaration)
        .map(|o| o.range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{Fixture, DEMO};

    #[test]
    fn a_use_leads_to_its_declaration() {
        let fixture = Fixture::new(DEMO);
        let key = fixture.at("fetch: ", 0);
        let use_ = fixture.at("fetch', {", 2);
        assert_eq!(definition(fixture.prompt(), use_), Some(key..key + 5));
        let heading = fixture.at("## Write\n", 3);
        let target = fixture.at("## Write'", 5);
        assert_eq!(
            definition(fixture.prompt(), target),
            Some(heading..heading + 5)
        );
        assert_eq!(
            definition(fixture.prompt(), fixture.at("local page", 2)),
            None
        );
    }
}
