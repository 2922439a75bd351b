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
