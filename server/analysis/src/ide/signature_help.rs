//! Signature help: the Lua API function whose parentheses hold the cursor, and
//! the argument the cursor is in.

use std::ops::Range;

use super::lua_context::enclosing_call;
use super::PromptText;
use crate::api_reference;

/// A function's signature, its parameters and the one the cursor is at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    /// The signature, as Lua code: `tools.call(alias, args)`.
    pub label: String,
    /// The reference text, in Markdown.
    pub documentation: String,
    /// Each parameter's byte range in `label`, in order.
    pub parameters: Vec<Range<usize>>,
    /// The 0-based index of the parameter the cursor is at (the last one for
    /// any argument past it).
    pub active_parameter: u32,
}

/// The signature help at `offset`.
pub fn signature_help(prompt: PromptText<'_>, offset: usize) -> Option<SignatureHelp> {
    let (_, block) = prompt.lua_block_at(offset)?;
    let (callee, argument) = enclosing_call(prompt.text, block.code_range.start, offset)?;
    let entry = api_reference::lookup(callee).filter(|e| e.function)?;
    let signature = entry.signature;
    // Parameter labels as offsets into the signature, searched after the parenthesis.
    let mut at = signature.find('(').unwrap_or(0);
    let mut parameters = Vec::new();
    for param in entry.params {
        let Some(found) = signature.get(at..).and_then(|rest| rest.find(param)) else {
            break;
        };
        let start = at + found;
        at = start + param.len();
        parameters.push(start..at);
    }
    let last = entry.params.len().saturating_sub(1) as u32;
    Some(SignatureHelp {
        label: signature.to_owned(),
        documentation: entry.doc.to_owned(),
        parameters,
        active_parameter: argument.min(last),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::{Fixture, DEMO};

    #[test]
    fn the_call_around_the_cursor_with_its_argument() {
        let fixture = Fixture::new(DEMO);
        let help = signature_help(fixture.prompt(), fixture.at("{ url", 2)).expect("in a call");
        assert_eq!(help.label, "tools.call(alias, args)");
        assert_eq!(help.parameters, [11..16, 18..22]);
        assert_eq!(help.active_parameter, 1);
        assert!(help.documentation.starts_with("Calls a bound tool"));
        let first = signature_help(fixture.prompt(), fixture.at("'## Write'", 1)).expect("jump");
        assert_eq!(
            (first.label.as_str(), first.active_parameter),
            ("jump(target)", 0)
        );
        assert_eq!(
            signature_help(fixture.prompt(), fixture.at("local page", 0)),
            None
        );
    }
}
