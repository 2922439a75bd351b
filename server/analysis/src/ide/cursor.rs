//! The token before the cursor, read backwards from the text (which may not
//! parse yet while the author types): the one scan completion, hover and the
//! test files' completion share.

/// Where the run of `part` characters that ends at `offset` starts (`offset`
/// itself when the character before it is not a `part`); None when `offset` is
/// past the text or inside a character.
pub fn token_start(text: &str, offset: usize, part: impl Fn(char) -> bool) -> Option<usize> {
    let len: usize = text
        .get(..offset)?
        .chars()
        .rev()
        .take_while(|&c| part(c))
        .map(char::len_utf8)
        .sum();
    Some(offset - len)
}

/// Where the line holding `offset` starts (after the last LF or CR before it);
/// None when `offset` is past the text or inside a character.
pub fn line_start(text: &str, offset: usize) -> Option<usize> {
    Some(
        text.get(..offset)?
            .rfind(['\n', '\r'])
            .map_or(0, |at| at + 1),
    )
}

/// A Lua identifier's character.
pub fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_ends_at_the_cursor_and_stops_at_the_first_other_character() {
        let text = "x = tools.ca";
        assert_eq!(token_start(text, text.len(), is_ident), Some(10));
        let dotted = |c| is_ident(c) || c == '.';
        assert_eq!(token_start(text, text.len(), dotted), Some(4));
        assert_eq!(token_start(text, 3, is_ident), Some(3));
        assert_eq!(token_start("é_a", 4, is_ident), Some(2));
        assert_eq!(token_start("é", 1, is_ident), None);
        assert_eq!(token_start("ab", 9, is_ident), None);
    }

    #[test]
    fn lines_start_after_any_line_end() {
        assert_eq!(line_start("a\nbc", 3), Some(2));
        assert_eq!(line_start("a\r\nbc", 4), Some(3));
        assert_eq!(line_start("a\rbc", 3), Some(2));
        assert_eq!(line_start("abc", 2), Some(0));
        assert_eq!(line_start("abc", 4), None);
    }
}
