//! The encoding the client and the server agreed on for LSP columns (UTF-16
//! code units by default, UTF-8 bytes or UTF-32 characters when the client
//! offers them), and the byte offset of a position in an edited rope. Offsets
//! of an analysed text convert in [`crate::convert::Positions`], with the syntax
//! crate's `LineIndex` in a [`ColumnUnit`]. Lines end at LF, CRLF and a lone CR,
//! as in the protocol; a leading BOM takes no column, as in `promptforge check`.

use promptforge_syntax::ColumnUnit;
use ropey::Rope;
use tower_lsp::lsp_types::{Position, PositionEncodingKind};

const BOM: char = '\u{feff}';

/// The unit of LSP columns for one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    /// UTF-16 code units: the protocol's default.
    #[default]
    Utf16,
    /// UTF-8 bytes, when the client offers `utf-8` in `general.positionEncodings`.
    Utf8,
    /// Unicode scalar values, when the client offers `utf-32` (and not `utf-8`).
    Utf32,
}

impl PositionEncoding {
    /// The encoding to use for a client offering `offered` (in its order of preference).
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Self {
        let offers =
            |kind: &PositionEncodingKind| offered.is_some_and(|kinds| kinds.contains(kind));
        if offers(&PositionEncodingKind::UTF8) {
            PositionEncoding::Utf8
        } else if offers(&PositionEncodingKind::UTF32) {
            PositionEncoding::Utf32
        } else {
            PositionEncoding::Utf16
        }
    }

    /// The syntax crate's column unit of this encoding.
    pub fn unit(self) -> ColumnUnit {
        match self {
            PositionEncoding::Utf16 => ColumnUnit::Utf16,
            PositionEncoding::Utf8 => ColumnUnit::Utf8,
            PositionEncoding::Utf32 => ColumnUnit::Utf32,
        }
    }

    /// The protocol's name for this encoding.
    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    /// Width of `c` in this encoding's units.
    pub fn width(self, c: char) -> usize {
        match self {
            PositionEncoding::Utf16 => c.len_utf16(),
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf32 => 1,
        }
    }

    /// Width of `s` in this encoding's units.
    pub fn len(self, s: &str) -> usize {
        match self {
            PositionEncoding::Utf16 => s.encode_utf16().count(),
            PositionEncoding::Utf8 => s.len(),
            PositionEncoding::Utf32 => s.chars().count(),
        }
    }
}

/// The byte offset in `rope` of an LSP position, clamped as [`crate::convert::Positions::offset`] does.
pub fn rope_offset(rope: &Rope, position: Position, encoding: PositionEncoding) -> usize {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let mut offset = rope.line_to_byte(line);
    let mut units = 0usize;
    let mut chars = rope.line(line).chars().peekable();
    if line == 0 && chars.peek() == Some(&BOM) {
        chars.next();
        offset += BOM.len_utf8();
    }
    for c in chars {
        if c == '\n' || c == '\r' {
            break;
        }
        let width = encoding.width(c);
        if units + width > position.character as usize {
            break;
        }
        units += width;
        offset += c.len_utf8();
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_chosen_only_when_offered() {
        assert_eq!(PositionEncoding::negotiate(None), PositionEncoding::Utf16);
        let offered = [PositionEncodingKind::UTF16, PositionEncodingKind::UTF8];
        assert_eq!(
            PositionEncoding::negotiate(Some(&offered)),
            PositionEncoding::Utf8
        );
        let offered = [PositionEncodingKind::UTF32, PositionEncodingKind::UTF16];
        assert_eq!(
            PositionEncoding::negotiate(Some(&offered)),
            PositionEncoding::Utf32
        );
    }
}
