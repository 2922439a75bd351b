//! `textDocument/semanticTokens/full`: aliases, model labels, Plugin ids and tool
//! paths in the frontmatter; aliases, labels and targets in Lua.

use std::ops::Range;

use tower_lsp::lsp_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens, SemanticTokensLegend,
};

use crate::snapshot::Snapshot;
use promptforge_analysis::lua_facts::in_file;
use promptforge_analysis::symbols::{
    literal_uses, ALIAS_FUNCTIONS, LABEL_FUNCTIONS, TARGET_FUNCTIONS,
};

/// The token types, indexed by the `u32` sent on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenType {
    /// A Plugin id (`namespace`).
    Plugin = 0,
    /// A tool path (`type`).
    ToolPath = 1,
    /// A tool alias (`function`).
    Alias = 2,
    /// A model label (`variable`).
    Label = 3,
    /// A section target (`enumMember`).
    Target = 4,
}

/// The modifier bit for a declaration (a `tools:` or `models:` key).
const DECLARATION: u32 = 1;

/// The legend announced in the capabilities.
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: vec![
            SemanticTokenType::NAMESPACE,
            SemanticTokenType::TYPE,
            SemanticTokenType::FUNCTION,
            SemanticTokenType::VARIABLE,
            SemanticTokenType::ENUM_MEMBER,
        ],
        token_modifiers: vec![SemanticTokenModifier::DECLARATION],
    }
}

/// The tokens of a snapshot, delta-encoded.
pub fn semantic_tokens(snapshot: &Snapshot) -> SemanticTokens {
    let document = &snapshot.analysis.document;
    let model = snapshot.model();
    let mut raw: Vec<(Range<usize>, TokenType, u32)> = Vec::new();
    if let Some(frontmatter) = &document.frontmatter {
        raw.extend(
            frontmatter
                .plugins
                .iter()
                .map(|p| (p.id.range.clone(), TokenType::Plugin, 0)),
        );
        for slot in &frontmatter.tools {
            raw.push((slot.alias.range.clone(), TokenType::Alias, DECLARATION));
            if let Some(path) = &slot.path {
                raw.push((path.range.clone(), TokenType::ToolPath, 0));
            }
        }
        raw.extend(
            frontmatter
                .models
                .iter()
                .map(|m| (m.label.range.clone(), TokenType::Label, DECLARATION)),
        );
        for (facts, code_start) in model.blocks_in_file() {
            for ident in &facts.identifiers {
                let range = in_file(code_start, &ident.range);
                if frontmatter.slot(&ident.name).is_some() {
                    raw.push((range, TokenType::Alias, 0));
                } else if frontmatter.model(&ident.name).is_some() {
                    raw.push((range, TokenType::Label, 0));
                }
            }
            raw.extend(
                facts
                    .calls_reads
                    .iter()
                    .filter(|r| frontmatter.slot(&r.key).is_some())
                    .map(|r| (in_file(code_start, &r.range), TokenType::Alias, 0)),
            );
        }
    }
    for used in literal_uses(model) {
        let kind = if ALIAS_FUNCTIONS.contains(&used.callee) {
            TokenType::Alias
        } else if LABEL_FUNCTIONS.contains(&used.callee) {
            TokenType::Label
        } else if TARGET_FUNCTIONS.contains(&used.callee) {
            TokenType::Target
        } else {
            continue;
        };
        raw.push((used.content(), kind, 0));
    }
    raw.sort_by_key(|(range, _, _)| (range.start, range.end));
    let positions = snapshot.positions();
    let mut data = Vec::with_capacity(raw.len());
    let (mut last_line, mut last_start, mut last_end) = (0u32, 0u32, 0usize);
    for (range, kind, modifiers) in raw {
        if range.start < last_end || range.is_empty() {
            continue;
        }
        let start = positions.position(range.start);
        let end = positions.position(range.end);
        if start.line != end.line || end.character <= start.character {
            continue;
        }
        let delta_line = start.line.saturating_sub(last_line);
        let delta_start = if delta_line == 0 {
            start.character.saturating_sub(last_start)
        } else {
            start.character
        };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: kind as u32,
            token_modifiers_bitset: modifiers,
        });
        last_line = start.line;
        last_start = start.character;
        last_end = range.end;
    }
    SemanticTokens {
        result_id: None,
        data,
    }
}
