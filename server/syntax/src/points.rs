//! Tree-sitter's points (row and byte column) of byte offsets.

use tree_sitter::Point;

/// Tree-sitter's point of a byte offset: rows end at `\n` only, columns are bytes.
pub(crate) fn point_at(text: &str, offset: usize) -> Point {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    advance(Point { row: 0, column: 0 }, before)
}

/// The point after `bytes` written from `from`.
pub(crate) fn advance(from: Point, bytes: &[u8]) -> Point {
    let rows = memchr::memchr_iter(b'\n', bytes).count();
    match memchr::memrchr(b'\n', bytes) {
        Some(last) => Point {
            row: from.row + rows,
            column: bytes.len() - last - 1,
        },
        None => Point {
            row: from.row,
            column: from.column + bytes.len(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The point of an offset counted from the start, the only way tree-sitter
    /// defines it: rows end at `\n`, columns are bytes.
    fn counted(text: &str, offset: usize) -> Point {
        let before = &text.as_bytes()[..offset];
        let row = before.iter().filter(|&&b| b == b'\n').count();
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        Point {
            row,
            column: offset - start,
        }
    }

    #[test]
    fn a_point_advanced_over_any_span_is_the_point_counted_from_the_start() {
        let text = "a\nbc\r\nd\re\u{e9}\n\nlast";
        for start in 0..=text.len() {
            assert_eq!(point_at(text, start), counted(text, start), "at {start}");
            for end in start..=text.len() {
                let advanced = advance(counted(text, start), &text.as_bytes()[start..end]);
                assert_eq!(advanced, counted(text, end), "{start}..{end}");
            }
        }
    }
}
