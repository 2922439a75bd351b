//! Byte offsets <-> lines and columns (Unicode scalar values) <-> UTF-16 code units.
//!
//! LF, CRLF and a lone CR each end a line, as in the Language Server Protocol.
//! A leading BOM is ignored: it takes no column.

/// The unit columns are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColumnUnit {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units (the LSP default).
    #[default]
    Utf16,
    /// Unicode scalar values (characters: what `check` prints).
    Utf32,
}

/// A position as a line and a column, both 0-based; the column's unit depends on the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LineCol {
    /// 0-based line.
    pub line: u32,
    /// 0-based column (characters, UTF-16 code units or bytes, as the method says).
    pub col: u32,
}

/// The line starts of one text, for converting positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of each line; the first is always 0. Four bytes
    /// each, not eight: a 10 MiB prompt has 600,000 lines, a document open in the
    /// editor keeps its index. A text past 4 GiB (no editor or file limit allows
    /// one) has the starts beyond saturated, never a panic.
    line_starts: Vec<u32>,
    /// Byte length of the text.
    len: usize,
    /// True when the text starts with a BOM (U+FEFF), which takes no column.
    bom: bool,
}

const BOM: &str = "\u{feff}";

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        // Sized once by the line feeds (lone CRs, rare, may grow it): a vector
        // that doubles holds both copies at once and ends up to twice too large.
        let mut line_starts = Vec::with_capacity(memchr::memchr_iter(b'\n', bytes).count() + 1);
        line_starts.push(0);
        push_line_starts(bytes, 0..bytes.len(), &mut line_starts);
        LineIndex {
            line_starts,
            len: text.len(),
            bom: text.starts_with(BOM),
        }
    }

    /// The index of `text`, which is the text this index was made for with the
    /// bytes `start..old_end` replaced by `start..new_end`: the line starts before
    /// the edit are kept, those after it moved, and only the lines the edit
    /// touched are scanned again.
    pub fn edited(&self, text: &str, start: usize, old_end: usize, new_end: usize) -> Self {
        let bytes = text.as_bytes();
        // A line start at or before the start of the line holding the byte before
        // the edit depends only on bytes the edit left (a CR just before it may
        // become the head of a CRLF).
        let from_line = self.line_of(start.saturating_sub(1)) as usize;
        let from = self.line_starts[from_line] as usize;
        // The first line start far enough past the edit that the byte before it
        // and the one before that are unchanged: from there on, only moved.
        let resume = self
            .line_starts
            .partition_point(|&s| s as usize <= old_end + 1);
        let moved = |s: u32| offset32(s as usize - old_end + new_end);
        let scan_end = self
            .line_starts
            .get(resume)
            .map_or(bytes.len(), |&s| moved(s) as usize);
        let mut line_starts = Vec::with_capacity(self.line_starts.len() + 8);
        line_starts.extend_from_slice(&self.line_starts[..=from_line]);
        push_line_starts(bytes, from..scan_end, &mut line_starts);
        let after = self.line_starts.get(resume + 1..).unwrap_or_default();
        line_starts.extend(after.iter().map(|&s| moved(s)));
        LineIndex {
            line_starts,
            len: text.len(),
            bom: text.starts_with(BOM),
        }
    }

    /// Number of lines (a text ending with a line end has an empty last line).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where the 0-based `line` starts; None past the last line.
    pub fn line_start(&self, line: u32) -> Option<usize> {
        self.line_starts.get(line as usize).map(|&s| s as usize)
    }

    /// Byte range of the 0-based `line` without its line ending.
    pub fn line_range(&self, text: &str, line: u32) -> Option<std::ops::Range<usize>> {
        let start = self.line_start(line)?;
        let next = self.line_start(line + 1).unwrap_or(self.len);
        let bytes = text.as_bytes();
        let mut end = next.min(bytes.len());
        while end > start && matches!(bytes.get(end - 1), Some(b'\n') | Some(b'\r')) {
            end -= 1;
        }
        Some(start..end)
    }

    /// The 0-based line holding byte `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> u32 {
        let offset = offset.min(self.len);
        let line = match self.line_starts.binary_search(&offset32(offset)) {
            Ok(line) => line,
            Err(next) => next.saturating_sub(1),
        };
        line as u32
    }

    /// Start of the column count of `line`: after the BOM on the first line.
    fn column_origin(&self, line: u32) -> usize {
        let start = self.line_start(line).unwrap_or(0);
        if line == 0 && self.bom {
            start + BOM.len()
        } else {
            start
        }
    }

    /// Clamps `offset` into the text and back onto a char boundary.
    fn clamp(text: &str, offset: usize) -> usize {
        let mut offset = offset.min(text.len());
        while offset > 0 && !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// Line and column of byte `offset` in `unit`s, both 0-based (the one
    /// conversion the language server's negotiated encodings and `check` use).
    pub fn line_col_in(&self, text: &str, offset: usize, unit: ColumnUnit) -> LineCol {
        match unit {
            ColumnUnit::Utf8 => self.convert(text, offset, str::len),
            ColumnUnit::Utf16 => self.line_col_utf16(text, offset),
            ColumnUnit::Utf32 => self.line_col(text, offset),
        }
    }

    /// Byte offset of a 0-based line and a column in `unit`s; a column past the
    /// line's end gives the line's end, a line past the end gives the text's end,
    /// and a column inside a character gives the character's start.
    pub fn offset_in(&self, text: &str, pos: LineCol, unit: ColumnUnit) -> usize {
        match unit {
            ColumnUnit::Utf8 => self.offset_by(text, pos, char::len_utf8, char::len_utf8),
            ColumnUnit::Utf16 => self.offset_utf16(text, pos),
            ColumnUnit::Utf32 => self.offset(text, pos),
        }
    }

    /// Line and column in Unicode scalar values of byte `offset`, both 0-based.
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        self.convert(text, offset, |s| s.chars().count())
    }

    /// Line and column in UTF-16 code units of byte `offset`, both 0-based.
    pub fn line_col_utf16(&self, text: &str, offset: usize) -> LineCol {
        self.convert(text, offset, |s| s.encode_utf16().count())
    }

    /// The 1-based `line:column` (columns in characters) that messages print.
    pub fn position(&self, text: &str, offset: usize) -> (u32, u32) {
        let lc = self.line_col(text, offset);
        (lc.line + 1, lc.col + 1)
    }

    fn convert(&self, text: &str, offset: usize, width: impl Fn(&str) -> usize) -> LineCol {
        let offset = Self::clamp(text, offset);
        let line = self.line_of(offset);
        let origin = self.column_origin(line).min(offset);
        let col = text.get(origin..offset).map_or(0, width);
        LineCol {
            line,
            col: col as u32,
        }
    }

    /// Byte offset of a 0-based line and a column in characters; a column past the
    /// line's end gives the line's end, a line past the end gives the text's end.
    pub fn offset(&self, text: &str, pos: LineCol) -> usize {
        self.offset_by(text, pos, char::len_utf8, |_| 1)
    }

    /// Byte offset of a 0-based line and a column in UTF-16 code units; clamped like
    /// [`LineIndex::offset`], and a column inside a surrogate pair gives the character's start.
    pub fn offset_utf16(&self, text: &str, pos: LineCol) -> usize {
        self.offset_by(text, pos, char::len_utf8, char::len_utf16)
    }

    fn offset_by(
        &self,
        text: &str,
        pos: LineCol,
        bytes_of: impl Fn(char) -> usize,
        units_of: impl Fn(char) -> usize,
    ) -> usize {
        let Some(start) = self.line_start(pos.line) else {
            return self.len;
        };
        let range = self.line_range(text, pos.line).unwrap_or(start..start);
        let origin = self.column_origin(pos.line).min(range.end);
        let mut offset = origin;
        let mut units = 0usize;
        for c in text.get(origin..range.end).unwrap_or("").chars() {
            let width = units_of(c);
            if units + width > pos.col as usize {
                break;
            }
            units += width;
            offset += bytes_of(c);
        }
        offset
    }
}

/// Pushes the start of every line that begins after a line end within `scan` of
/// `bytes` (a CR followed by LF ends its line after the LF, wherever the LF is).
fn push_line_starts(bytes: &[u8], scan: std::ops::Range<usize>, line_starts: &mut Vec<u32>) {
    let from = scan.start;
    let scanned = bytes.get(scan).unwrap_or_default();
    for at in memchr::memchr2_iter(b'\n', b'\r', scanned).map(|at| at + from) {
        let crlf_head = bytes.get(at) == Some(&b'\r') && bytes.get(at + 1) == Some(&b'\n');
        if !crlf_head {
            line_starts.push(offset32(at + 1));
        }
    }
}

/// A byte offset as stored in the index (saturated past 4 GiB).
fn offset32(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn an_edited_index_equals_one_made_from_scratch() {
        let texts = [
            "a\r\nb\rc\n\nd",
            "\r\r\n\n\r",
            "\u{feff}x\ny",
            "",
            "one line",
        ];
        let inserts = ["", "\n", "\r", "\r\n", "x", "\ny\r", "\u{e9}\n"];
        for old in texts {
            let index = LineIndex::new(old);
            for start in (0..=old.len()).filter(|&i| old.is_char_boundary(i)) {
                for old_end in (start..=old.len()).filter(|&i| old.is_char_boundary(i)) {
                    for insert in inserts {
                        let mut new = old.to_owned();
                        new.replace_range(start..old_end, insert);
                        let edited = index.edited(&new, start, old_end, start + insert.len());
                        assert_eq!(
                            edited,
                            LineIndex::new(&new),
                            "{old:?} {start}..{old_end} {insert:?}"
                        );
                    }
                }
            }
        }
    }

    fn lc(line: u32, col: u32) -> LineCol {
        LineCol { line, col }
    }

    #[test]
    fn line_ends_lf_crlf_and_lone_cr() {
        let text = "a\nb\r\nc\rd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.line_col(text, 0), lc(0, 0));
        assert_eq!(index.line_col(text, 2), lc(1, 0));
        assert_eq!(index.line_col(text, 5), lc(2, 0));
        assert_eq!(index.line_col(text, 7), lc(3, 0));
        assert_eq!(index.line_range(text, 1), Some(2..3));
        assert_eq!(index.line_range(text, 3), Some(7..8));
    }

    #[test]
    fn crlf_is_one_line_end() {
        let text = "x\r\n\r\ny";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 3);
        assert_eq!(index.position(text, 5), (3, 1));
    }

    #[test]
    fn offset_inside_crlf_stays_on_its_line() {
        let text = "ab\r\ncd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 3), lc(0, 3));
    }

    #[test]
    fn columns_count_characters_and_utf16_units() {
        let text = "é😀\tx";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.line_col(text, x), lc(0, 3));
        assert_eq!(index.line_col_utf16(text, x), lc(0, 4));
        assert_eq!(index.offset(text, lc(0, 3)), x);
        assert_eq!(index.offset_utf16(text, lc(0, 4)), x);
    }

    #[test]
    fn utf16_column_inside_surrogate_pair_gives_char_start() {
        let text = "😀x";
        let index = LineIndex::new(text);
        assert_eq!(index.offset_utf16(text, lc(0, 1)), 0);
        assert_eq!(index.offset_utf16(text, lc(0, 2)), 4);
    }

    #[test]
    fn bom_takes_no_column() {
        let text = "\u{feff}---\nx";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 3), (1, 1));
        assert_eq!(index.line_col_utf16(text, 6), lc(0, 3));
        assert_eq!(index.offset(text, lc(0, 0)), 3);
        assert_eq!(index.position(text, 7), (2, 1));
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "ab\ncd";
        let index = LineIndex::new(text);
        assert_eq!(index.offset(text, lc(0, 99)), 2);
        assert_eq!(index.offset(text, lc(9, 0)), text.len());
        assert_eq!(index.line_col(text, 999), lc(1, 2));
    }

    #[test]
    fn offsets_inside_a_character_clamp_to_its_start() {
        let text = "é";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 1), lc(0, 0));
    }

    #[test]
    fn empty_text_has_one_line() {
        let index = LineIndex::new("");
        assert_eq!(index.line_count(), 1);
        assert_eq!(index.line_col("", 0), lc(0, 0));
    }
}
