//! Where saphyr-parser's spans are corrected: the place of an empty value, the indicator of a
//! block scalar, the closing quote of a quoted scalar (saphyr's span of a quoted scalar takes
//! in the blanks and comment after it), and the properties (anchors, tags) before a node.

use std::ops::Range;

/// Whitespace that never ends a node.
pub const BLANKS: [char; 4] = [' ', '\t', '\r', '\n'];

/// Where an empty value is placed: saphyr names the `:` before it; the place is right after
/// the `:` and the blanks that follow it on the same line.
pub fn empty_value_position(text: &str, at: usize) -> usize {
    let rest = text.get(at..).unwrap_or("");
    match rest.strip_prefix(':') {
        Some(after) => at + 1 + (after.len() - after.trim_start_matches([' ', '\t']).len()),
        None => at,
    }
}

/// A block scalar runs from its `|` or `>` indicator to the end of its last content.
pub fn block_scalar_range(text: &str, previous_end: usize, span: Range<usize>) -> Range<usize> {
    let start = block_indicator(text, previous_end, span.start).unwrap_or(span.start);
    let body = text.get(start..span.end).unwrap_or("");
    start..start + body.trim_end_matches(BLANKS).len()
}

/// Finds the block scalar indicator between the previous event and the scalar's content,
/// skipping blanks, comments, indicators, anchors and tags.
fn block_indicator(text: &str, previous_end: usize, content: usize) -> Option<usize> {
    let from = previous_end.min(content);
    let between = text.get(from..content)?;
    let mut chars = between.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '|' | '>' => return Some(from + i),
            '#' => while chars.next_if(|&(_, c)| c != '\n' && c != '\r').is_some() {},
            '&' | '!' => while chars.next_if(|&(_, c)| !c.is_whitespace()).is_some() {},
            ' ' | '\t' | '\r' | '\n' | ':' | '-' | '?' | ',' => {}
            _ => return None,
        }
    }
    None
}

/// The text after a node's properties (anchors `&a` and tags `!t`, each with the blanks after it).
pub fn skip_properties(mut text: &str) -> &str {
    while text.starts_with(['&', '!']) {
        let token = text.find(char::is_whitespace).unwrap_or(text.len());
        text = text.get(token..).unwrap_or("").trim_start();
    }
    text
}

/// Byte length of a quoted scalar's text (properties included) up to its closing quote.
pub fn quoted_len(raw: &str) -> Option<usize> {
    let body = skip_properties(raw);
    let offset = raw.len() - body.len();
    let mut chars = body.char_indices();
    let (_, quote) = chars.next().filter(|(_, c)| matches!(c, '\'' | '"'))?;
    while let Some((i, c)) = chars.next() {
        if c == '\\' && quote == '"' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && body.get(i + 1..).is_some_and(|rest| rest.starts_with('\'')) {
                chars.next();
            } else {
                return Some(offset + i + 1);
            }
        }
    }
    None
}

/// Converts saphyr's marks (character indexes) to byte offsets, walking from the last
/// conversion: marks come nearly in order, so a whole parse walks the text about once.
pub struct CharOffsets<'a> {
    source: &'a str,
    ascii: bool,
    char_index: usize,
    byte_index: usize,
}

impl<'a> CharOffsets<'a> {
    /// A converter for `source`.
    pub fn new(source: &'a str) -> Self {
        CharOffsets {
            source,
            ascii: source.is_ascii(),
            char_index: 0,
            byte_index: 0,
        }
    }

    /// The byte offset of character `target` (the source's length past its end).
    pub fn byte(&mut self, target: usize) -> usize {
        if self.ascii {
            return target.min(self.source.len());
        }
        if target < self.char_index {
            let before = self.source.get(..self.byte_index).unwrap_or("");
            let back = self.char_index - target;
            let found = before.char_indices().rev().nth(back - 1);
            self.byte_index = found.map_or(0, |(b, _)| b);
            self.char_index = if found.is_some() { target } else { 0 };
        } else if target > self.char_index {
            let after = self.source.get(self.byte_index..).unwrap_or("");
            match after.char_indices().nth(target - self.char_index) {
                Some((b, _)) => {
                    self.byte_index += b;
                    self.char_index = target;
                }
                None => {
                    self.char_index += after.chars().count();
                    self.byte_index = self.source.len();
                }
            }
        }
        self.byte_index
    }
}

#[cfg(test)]
mod tests {
    use super::CharOffsets;

    #[test]
    fn char_indexes_become_byte_offsets_in_any_order() {
        let mut offsets = CharOffsets::new("aé日b");
        assert_eq!(offsets.byte(3), 6);
        assert_eq!(offsets.byte(1), 1);
        assert_eq!(offsets.byte(2), 3);
        assert_eq!(offsets.byte(0), 0);
        assert_eq!(offsets.byte(4), 7);
        assert_eq!(offsets.byte(9), 7);
        assert_eq!(offsets.byte(2), 3);
        let mut ascii = CharOffsets::new("abc");
        assert_eq!((ascii.byte(2), ascii.byte(7)), (2, 3));
    }
}
