//! Where the closing line of a lua block that is never closed goes, for the
//! quick fix of `the lua block opened at line {line} is never closed`.
//!
//! Such a block's code is the rest of the file, the headings below it
//! included. Lua has no statement that starts with `#`, `` ` `` or `~`, so the
//! first line after the opener that Markdown reads as a heading or a fence
//! (0 to 3 spaces, then 1 to 6 `#` and a blank or the line's end, or a run of
//! three or more backticks or tildes) is where the author's code had ended:
//! the closing ```` ``` ```` goes before it, right after the last line that is
//! not blank (the blank lines stay between the block and the heading). Such a
//! line inside a Lua long string or long comment (`[[ ... ]]`, `--[==[ ... ]==]`:
//! a prompt's text is often one) is code, and is passed. With no such line the
//! closing line goes after the file's last line that is not blank.

use std::ops::Range;

/// The edit that closes a block, and the line the closing fence lands on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closing {
    /// Where the text is inserted.
    pub at: usize,
    /// The closing fence, with a line ending after it (or before it, when it
    /// follows a last line that has none).
    pub new_text: String,
    /// The 1-based line of the closing fence once inserted.
    pub line: u32,
}

/// Where the block whose opening line is `opener` (its range, without the line
/// ending) is closed.
pub fn closing_fence(text: &str, opener: &Range<usize>) -> Option<Closing> {
    let (content_end, next) = line_at(text, opener.start)?;
    let newline = text.get(content_end..next).filter(|n| !n.is_empty());
    let newline = newline.unwrap_or("\n");
    // After the last line that is not blank: at first, the opener.
    let (mut at, mut ends_line) = (next, next > content_end);
    let mut long: Option<usize> = None;
    let mut start = next;
    while start < text.len() {
        let (end, after) = line_at(text, start)?;
        let line = text.get(start..end)?;
        if long.is_none() && is_markdown_line(line) {
            break;
        }
        long = scan_line(line.as_bytes(), long);
        if !line.trim().is_empty() {
            (at, ends_line) = (after, after > end);
        }
        start = after;
    }
    let breaks = line_breaks(text.get(..at)?);
    let (new_text, line) = if ends_line {
        (format!("```{newline}"), breaks + 1)
    } else {
        (format!("{newline}```"), breaks + 2)
    };
    Some(Closing {
        at,
        new_text,
        line: u32::try_from(line).ok()?,
    })
}

/// The end of the line that starts at `start` (before its line ending) and the
/// start of the next one; LF, CRLF and a lone CR end a line.
fn line_at(text: &str, start: usize) -> Option<(usize, usize)> {
    let rest = text.get(start..)?;
    Some(match rest.find(['\n', '\r']) {
        None => (text.len(), text.len()),
        Some(i) if rest[i..].starts_with("\r\n") => (start + i, start + i + 2),
        Some(i) => (start + i, start + i + 1),
    })
}

/// How many lines end in `text`.
fn line_breaks(text: &str) -> usize {
    let bytes = text.as_bytes();
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
        .count()
}

/// A heading or a fence line, as the grammar reads them (`grammar/README.md`).
fn is_markdown_line(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line.as_bytes()[indent..];
    let run = |c: u8| rest.iter().take_while(|&&b| b == c).count();
    let marks = run(b'#');
    let heading = (1..=6).contains(&marks) && matches!(rest.get(marks), None | Some(b' ' | b'\t'));
    heading || run(b'`') >= 3 || run(b'~') >= 3
}

/// Reads one line of Lua from inside a long bracket of `level` (None: outside
/// any); gives the long bracket still open at the line's end. A quoted string
/// ends at its line's end, as Lua's does.
fn scan_line(line: &[u8], mut long: Option<usize>) -> Option<usize> {
    let mut i = 0;
    while i < line.len() {
        if let Some(level) = long {
            match closes_long(line, i, level) {
                Some(after) => {
                    long = None;
                    i = after;
                }
                None => i += 1,
            }
            continue;
        }
        match line[i] {
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < line.len() && line[i] != quote {
                    i += if line[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' if line.get(i + 1) == Some(&b'-') => {
                match opens_long(line, i + 2) {
                    Some((level, after)) => {
                        long = Some(level);
                        i = after;
                    }
                    // A line comment: the rest of the line.
                    None => return None,
                }
            }
            b'[' => match opens_long(line, i) {
                Some((level, after)) => {
                    long = Some(level);
                    i = after;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    long
}

/// At `[` `=`* `[`: its level and where its body starts.
fn opens_long(line: &[u8], at: usize) -> Option<(usize, usize)> {
    if line.get(at) != Some(&b'[') {
        return None;
    }
    let level = line[at + 1..].iter().take_while(|&&b| b == b'=').count();
    (line.get(at + 1 + level) == Some(&b'[')).then_some((level, at + level + 2))
}

/// At `]` `=`{level} `]`: where it ends.
fn closes_long(line: &[u8], at: usize, level: usize) -> Option<usize> {
    if line.get(at) != Some(&b']') {
        return None;
    }
    let equals = line[at + 1..].iter().take_while(|&&b| b == b'=').count();
    (equals == level && line.get(at + 1 + level) == Some(&b']')).then_some(at + level + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text with the block opened by its first ```` ```lua ```` line closed,
    /// and the closing line's number.
    fn closed(text: &str) -> (String, u32) {
        let start = text.find("```lua").expect("an opener");
        let end = text[start..]
            .find(['\n', '\r'])
            .map_or(text.len(), |i| start + i);
        let closing = closing_fence(text, &(start..end)).expect("a place");
        let mut out = text.to_owned();
        out.insert_str(closing.at, &closing.new_text);
        (out, closing.line)
    }

    #[test]
    fn the_block_is_closed_after_its_code_before_the_next_heading() {
        let text = "# T\n```lua\nreturn 1\n\n## Next\n\ntext\n";
        assert_eq!(
            closed(text),
            (
                "# T\n```lua\nreturn 1\n```\n\n## Next\n\ntext\n".to_owned(),
                4
            )
        );
        // An empty block is closed right after its opener.
        assert_eq!(
            closed("```lua\n\n   ### Next\n").0,
            "```lua\n```\n\n   ### Next\n"
        );
        // Before a fence too, and any heading level.
        assert_eq!(closed("```lua\nx()\n~~~\n").0, "```lua\nx()\n```\n~~~\n");
        assert_eq!(closed("```lua\nx()\n#\n").0, "```lua\nx()\n```\n#\n");
    }

    #[test]
    fn with_no_heading_after_it_the_block_is_closed_at_the_end() {
        assert_eq!(
            closed("```lua\nreturn 1\n\n\n"),
            ("```lua\nreturn 1\n```\n\n\n".to_owned(), 3)
        );
        assert_eq!(
            closed("```lua\nreturn 1"),
            ("```lua\nreturn 1\n```".to_owned(), 3)
        );
        assert_eq!(closed("```lua"), ("```lua\n```".to_owned(), 2));
        assert_eq!(closed("x\n```lua\n"), ("x\n```lua\n```\n".to_owned(), 3));
    }

    #[test]
    fn the_opener_s_line_ending_is_the_closer_s() {
        assert_eq!(
            closed("```lua\r\nreturn 1\r\n\r\n## A\r\n"),
            ("```lua\r\nreturn 1\r\n```\r\n\r\n## A\r\n".to_owned(), 3)
        );
        assert_eq!(
            closed("\r```lua\rreturn 1\r## A"),
            ("\r```lua\rreturn 1\r```\r## A".to_owned(), 4)
        );
    }

    #[test]
    fn markdown_lines_inside_long_strings_and_comments_are_code() {
        let text = "```lua\nlocal p = [==[\n# Role\n]] ]=]\n]==] .. '[[' -- [[\n--[[\n## x\n]]\nreturn p\n\n## Next\n";
        let (out, _) = closed(text);
        assert_eq!(out, text.replace("return p\n", "return p\n```\n"));
        // A quoted string ends with its line; a line comment hides no bracket.
        let text = "```lua\nx = 'it''s [[\n-- [[ no\n## Next\n";
        assert_eq!(closed(text).0, text.replace("## Next", "```\n## Next"));
    }

    #[test]
    fn hash_lines_that_are_not_headings_are_code() {
        let text = "```lua\nlocal n = #t\n#t\n    # indented\n####### seven\n\t# tab\n## Next\n";
        assert_eq!(closed(text).0, text.replace("## Next", "```\n## Next"));
    }
}
