//! Text from outside (a name, a line a program printed, a value) quoted in a
//! message: at most so many characters, so a huge input never makes a huge
//! message.

/// At most `chars` characters of `text`, then `…` when some were left out.
pub fn at_most(text: &str, chars: usize) -> String {
    let mut shown: String = text.chars().take(chars).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::at_most;

    #[test]
    fn a_long_text_is_cut_at_a_character_and_marked() {
        assert_eq!(at_most("short", 5), "short");
        assert_eq!(at_most("longer", 5), "longe…");
        assert_eq!(at_most("ééé", 2), "éé…");
        assert_eq!(at_most("", 0), "");
    }
}
