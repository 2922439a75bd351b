//! The one place the server converts between the protocol and the analysis
//! layer's plain answers ([`promptforge_analysis::ide`]): byte offsets <-> LSP
//! positions and ranges in the negotiated encoding ([`Positions`]), Markdown
//! into markup content, and each feature's result into its protocol type.

use std::ops::Range;

use ide::completion_item::CompletionKind;
use ide::inlay_hints::{InlayHintKind, Tooltip};
use promptforge_analysis::ide;
use promptforge_syntax::{LineCol, LineIndex};
use tower_lsp::lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, Hover, HoverContents,
    InlayHint, InlayHintKind as LspInlayHintKind, InlayHintLabel, InlayHintTooltip, MarkupContent,
    MarkupKind, ParameterInformation, ParameterLabel, Position, Range as LspRange, SignatureHelp,
    SignatureInformation, TextEdit,
};

use crate::encoding::PositionEncoding;

/// A text with its line index, converting positions in one encoding.
#[derive(Debug, Clone, Copy)]
pub struct Positions<'a> {
    /// The text.
    pub text: &'a str,
    /// Its line index.
    pub index: &'a LineIndex,
    /// The column unit.
    pub encoding: PositionEncoding,
}

impl Positions<'_> {
    /// The LSP position of byte `offset` (clamped into the text, onto a character start).
    pub fn position(&self, offset: usize) -> Position {
        let LineCol { line, col } = self
            .index
            .line_col_in(self.text, offset, self.encoding.unit());
        Position::new(line, col)
    }

    /// The LSP range of a byte range.
    pub fn range(&self, bytes: &Range<usize>) -> LspRange {
        LspRange::new(self.position(bytes.start), self.position(bytes.end))
    }

    /// The byte offset of an LSP position; a column past the line's end gives the
    /// line's end, a line past the last gives the text's end, and a column inside a
    /// character gives the character's start.
    pub fn offset(&self, position: Position) -> usize {
        let pos = LineCol {
            line: position.line,
            col: position.character,
        };
        self.index.offset_in(self.text, pos, self.encoding.unit())
    }

    /// The byte range of an LSP range (each end converted as [`Positions::offset`] does; a
    /// reversed range is put in order).
    pub fn byte_range(&self, range: LspRange) -> Range<usize> {
        let start = self.offset(range.start);
        let end = self.offset(range.end);
        start.min(end)..start.max(end)
    }
}

/// Markdown as the protocol's markup content.
pub fn markdown(value: String) -> MarkupContent {
    MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    }
}

/// A hover in the protocol's terms.
pub fn hover(positions: &Positions<'_>, hover: ide::hover::Hover) -> Hover {
    Hover {
        contents: HoverContents::Markup(markdown(hover.markdown)),
        range: Some(positions.range(&hover.range)),
    }
}

/// A completion kind in the protocol's terms.
pub fn completion_kind(kind: CompletionKind) -> CompletionItemKind {
    match kind {
        CompletionKind::Property => CompletionItemKind::PROPERTY,
        CompletionKind::Function => CompletionItemKind::FUNCTION,
        CompletionKind::Variable => CompletionItemKind::VARIABLE,
        CompletionKind::EnumMember => CompletionItemKind::ENUM_MEMBER,
        CompletionKind::Module => CompletionItemKind::MODULE,
    }
}

/// A completion item in the protocol's terms: its text replaces its range.
pub fn completion_item(
    positions: &Positions<'_>,
    item: ide::completion_item::CompletionItem,
) -> CompletionItem {
    CompletionItem {
        label: item.label,
        kind: Some(completion_kind(item.kind)),
        detail: item.detail,
        documentation: item
            .documentation
            .map(|doc| Documentation::MarkupContent(markdown(doc))),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
            range: positions.range(&item.replace),
            new_text: item.insert_text,
        })),
        ..CompletionItem::default()
    }
}

/// Signature help in the protocol's terms: one signature, its parameters as
/// offsets into its label.
pub fn signature_help(help: ide::signature_help::SignatureHelp) -> SignatureHelp {
    let parameters = help
        .parameters
        .iter()
        .map(|param| ParameterInformation {
            label: ParameterLabel::LabelOffsets([param.start as u32, param.end as u32]),
            documentation: None,
        })
        .collect();
    SignatureHelp {
        signatures: vec![SignatureInformation {
            label: help.label,
            documentation: Some(Documentation::MarkupContent(markdown(help.documentation))),
            parameters: Some(parameters),
            active_parameter: None,
        }],
        active_signature: Some(0),
        active_parameter: Some(help.active_parameter),
    }
}

/// An inlay hint in the protocol's terms: a token count is a type hint, a tool
/// path a hint of no kind; both with a space before them.
pub fn inlay_hint(positions: &Positions<'_>, hint: ide::inlay_hints::InlayHint) -> InlayHint {
    let kind = match hint.kind {
        InlayHintKind::ToolPath => None,
        InlayHintKind::TokenCount => Some(LspInlayHintKind::TYPE),
    };
    let tooltip = hint.tooltip.map(|tooltip| match tooltip {
        Tooltip::Plain(text) => InlayHintTooltip::String(text),
        Tooltip::Markdown(text) => InlayHintTooltip::MarkupContent(markdown(text)),
    });
    InlayHint {
        position: positions.position(hint.offset),
        label: InlayHintLabel::String(hint.label),
        kind,
        text_edits: None,
        tooltip,
        padding_left: Some(true),
        padding_right: None,
        data: None,
    }
}

#[cfg(test)]
mod tests {
    use ropey::Rope;

    use super::*;
    use crate::encoding::rope_offset;

    fn both(text: &str, line: u32, character: u32, encoding: PositionEncoding) -> (usize, usize) {
        let index = LineIndex::new(text);
        let positions = Positions {
            text,
            index: &index,
            encoding,
        };
        let position = Position::new(line, character);
        (
            positions.offset(position),
            rope_offset(&Rope::from_str(text), position, encoding),
        )
    }

    #[test]
    fn rope_and_line_index_agree_on_every_line_end_and_width() {
        let text = "\u{feff}a😀b\r\nc\rd\né\n";
        for encoding in [
            PositionEncoding::Utf16,
            PositionEncoding::Utf8,
            PositionEncoding::Utf32,
        ] {
            for line in 0..6 {
                for character in 0..8 {
                    let (index, rope) = both(text, line, character, encoding);
                    assert_eq!(index, rope, "{encoding:?} {line}:{character}");
                }
            }
        }
        // After the BOM, 'a', then the astral character (2 UTF-16 units, 4 bytes).
        assert_eq!(both(text, 0, 3, PositionEncoding::Utf16).0, 8);
        assert_eq!(both(text, 0, 2, PositionEncoding::Utf16).0, 4);
        assert_eq!(both(text, 0, 5, PositionEncoding::Utf8).0, 8);
        assert_eq!(both(text, 2, 0, PositionEncoding::Utf16).0, 13);
    }

    #[test]
    fn positions_round_trip() {
        let text = "x😀\r\n\tÿz";
        let index = LineIndex::new(text);
        for encoding in [
            PositionEncoding::Utf16,
            PositionEncoding::Utf8,
            PositionEncoding::Utf32,
        ] {
            let positions = Positions {
                text,
                index: &index,
                encoding,
            };
            for (offset, _) in text.char_indices().filter(|(i, _)| *i != 6) {
                assert_eq!(positions.offset(positions.position(offset)), offset);
            }
        }
        let utf8 = Positions {
            text,
            index: &index,
            encoding: PositionEncoding::Utf8,
        };
        assert_eq!(utf8.position(text.len()), Position::new(1, 4));
    }

    #[test]
    fn utf32_columns_count_characters() {
        let text = "a😀b";
        let index = LineIndex::new(text);
        let utf32 = Positions {
            text,
            index: &index,
            encoding: PositionEncoding::Utf32,
        };
        assert_eq!(utf32.position(5), Position::new(0, 2));
        assert_eq!(utf32.offset(Position::new(0, 2)), 5);
    }
}
