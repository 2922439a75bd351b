//! Rename: an alias or a label everywhere it is used; a section heading and
//! every target naming it. The new name is checked here, with the reason when
//! it is not allowed.

use std::ops::Range;

use promptforge_syntax::frontmatter::messages::{invalid_alias, reserved_name};
use promptforge_syntax::frontmatter::names::{is_reserved, is_valid_alias};

use super::PromptText;
use crate::symbols::{occurrences, symbol_at, Symbol};

/// Why a document with a Lua block the analysis does not read renames nothing:
/// the uses in that block would be left behind.
pub const UNREAD_BLOCKS: &str = "cannot rename here: this prompt has Lua blocks too large to analyse (see their LuaBlockNotRead information), and their uses would not be renamed";

/// What can be renamed at a place: the name's range and its current text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameTarget {
    /// The byte range of the name.
    pub range: Range<usize>,
    /// The name as the author reads it (a string's quotes left out).
    pub placeholder: String,
}

/// What can be renamed at `offset`.
pub fn prepare_rename(prompt: PromptText<'_>, offset: usize) -> Option<RenameTarget> {
    let (_, range) = symbol_at(&prompt.analysis.document, prompt.model, offset)?;
    let placeholder = prompt
        .text
        .get(range.clone())?
        .trim_matches(['"', '\''])
        .to_owned();
    Some(RenameTarget { range, placeholder })
}

/// The byte ranges to replace with `new_name` to rename the symbol at `offset`;
/// Err with the reason when the new name is not allowed, Ok(None) when nothing
/// there can be renamed.
pub fn rename(
    prompt: PromptText<'_>,
    offset: usize,
    new_name: &str,
) -> Result<Option<Vec<Range<usize>>>, String> {
    let document = &prompt.analysis.document;
    let model = prompt.model;
    let Some((symbol, _)) = symbol_at(document, model, offset) else {
        return Ok(None);
    };
    if model.blocks.iter().any(|facts| facts.unread.is_some()) {
        return Err(UNREAD_BLOCKS.to_owned());
    }
    match &symbol {
        Symbol::Alias(old) | Symbol::Label(old) => {
            if !is_valid_alias(new_name) {
                return Err(invalid_alias(new_name));
            }
            if is_reserved(new_name) {
                return Err(reserved_name(new_name));
            }
            let taken = document.frontmatter.as_ref().is_some_and(|f| {
                f.tools.iter().any(|s| s.alias.value == new_name)
                    || f.models.iter().any(|m| m.label.value == new_name)
            });
            if taken && new_name != old {
                return Err(format!(
                    "'{new_name}' is already a tool alias or a model label"
                ));
            }
        }
        Symbol::Section(index) => {
            if new_name.trim().is_empty()
                || new_name.contains(['\n', '\r'])
                || new_name != new_name.trim()
            {
                return Err(
                    "a section heading is one line of text without surrounding blanks".to_owned(),
                );
            }
            let sections = &model.sections;
            let parent = sections.get(*index).map(|s| s.parent);
            let duplicate = sections.all().iter().enumerate().any(|(i, s)| {
                i != *index && Some(s.parent) == parent && *s.heading.text == *new_name
            });
            if duplicate {
                return Err(format!("a sibling section is already named \"{new_name}\""));
            }
        }
    }
    Ok(Some(
        occurrences(document, model, &symbol)
            .into_iter()
            .map(|o| o.range)
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{Fixture, DEMO};

    #[test]
    fn a_target_renames_its_heading_and_every_target() {
        let fixture = Fixture::new(DEMO);
        let target = fixture.at("## Write'", 5);
        assert_eq!(
            prepare_rename(fixture.prompt(), target),
            Some(RenameTarget {
                range: target - 5..target + 3,
                placeholder: "## Write".to_owned()
            })
        );
        let heading = fixture.at("## Write\n", 3);
        assert_eq!(
            rename(fixture.prompt(), target, "Answer"),
            Ok(Some(vec![heading..heading + 5, target - 2..target + 3]))
        );
        assert_eq!(
            rename(fixture.prompt(), target, "Fetch"),
            Err("a sibling section is already named \"Fetch\"".to_owned())
        );
    }

    #[test]
    fn an_alias_takes_only_a_free_valid_name() {
        let fixture = Fixture::new(DEMO);
        let use_ = fixture.at("fetch', {", 1);
        let taken = rename(fixture.prompt(), use_, "writer");
        assert_eq!(
            taken,
            Err("'writer' is already a tool alias or a model label".to_owned())
        );
        assert_eq!(
            rename(fixture.prompt(), use_, "a b"),
            Err(invalid_alias("a b"))
        );
        assert_eq!(
            rename(fixture.prompt(), use_, "tools"),
            Err(reserved_name("tools"))
        );
        let key = fixture.at("fetch: ", 0);
        assert_eq!(
            rename(fixture.prompt(), use_, "get"),
            Ok(Some(vec![key..key + 5, use_ - 1..use_ + 4]))
        );
        assert_eq!(
            rename(fixture.prompt(), fixture.at("Fetches the", 0), "x"),
            Ok(None)
        );
    }
}
