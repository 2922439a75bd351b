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
    use promptforge_syntax::LineIndex;

    use super::*;
    use crate::convert::Positions;

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
