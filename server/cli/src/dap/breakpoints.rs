//! The prompt file's lines and the engine's block lines (the debugger issue):
//! a breakpoint on a file line is placed in the `lua` or `lua shared` block that
//! holds it, moved down past blank and comment-only lines to the next line with
//! code; a stop's frames come back as file lines.

use promptforge_engine::run::BlockLine;
use promptforge_syntax::{Document, Section};

/// Why a breakpoint outside every block is not verified.
pub const OUTSIDE: &str = "not inside a lua block that runs";

/// Why a breakpoint below a block's last line of code is not verified.
pub const NO_CODE_BELOW: &str = "no code on or below this line in its lua block";

/// True for a line Lua runs nothing on: blank, or a `--` comment alone.
fn without_code(line: &str) -> bool {
    let line = line.trim();
    line.is_empty() || (line.starts_with("--") && !line.starts_with("--[["))
}

/// The place of a breakpoint on the 1-based file line `line`: the block line it
/// binds to and the file line it moved to; the error says why it binds nowhere.
pub fn place(document: &Document, line: u32) -> Result<(BlockLine, u32), &'static str> {
    for (block, lua) in document.lua_blocks.iter().enumerate() {
        let lines: Vec<&str> = lua.code.lines().collect();
        let first = lua.first_line + 1;
        let Some(offset) = line.checked_sub(first) else {
            continue;
        };
        let Ok(index) = usize::try_from(offset) else {
            continue;
        };
        if index >= lines.len() {
            continue;
        }
        let code_at = lines
            .iter()
            .enumerate()
            .skip(index)
            .find(|(_, text)| !without_code(text))
            .map(|(at, _)| at);
        let Some(at) = code_at else {
            return Err(NO_CODE_BELOW);
        };
        let chunk_line = u32::try_from(at + 1).unwrap_or(u32::MAX);
        let place = BlockLine {
            block,
            line: chunk_line,
        };
        return Ok((place, lua.file_line(chunk_line)));
    }
    Err(OUTSIDE)
}

/// The 1-based file line of a block line (None for a block the document lacks).
pub fn file_line(document: &Document, place: BlockLine) -> Option<u32> {
    document
        .lua_blocks
        .get(place.block)
        .map(|lua| lua.file_line(place.line))
}

/// The 1-based line of the heading of the section headed `heading` (the H1
/// title for `""`), the first such heading in document order.
pub fn heading_line(document: &Document, heading: &str) -> Option<u32> {
    fn find(sections: &[Section], heading: &str) -> Option<u32> {
        sections.iter().find_map(|section| {
            if section.heading.text == heading {
                Some(section.heading.line + 1)
            } else {
                find(&section.children, heading)
            }
        })
    }
    if heading.is_empty() {
        return document.title.as_ref().map(|title| title.line + 1);
    }
    find(&document.sections, heading)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# P\n\n## Go\n\n```lua\nlocal a = 1\n\n-- a comment\nlocal b = a + 1\nreturn b\n```\n\nprose\n";

    #[test]
    fn breakpoints_bind_to_the_next_line_with_code_of_their_block() {
        let document = promptforge_syntax::parse(PROMPT).document;
        // File lines: 12 `local a = 1`, 13 blank, 14 comment, 15 `local b`, 16 `return b`.
        let at = |line| place(&document, line).map(|(p, moved)| (p.block, p.line, moved));
        assert_eq!(at(12), Ok((0, 1, 12)));
        assert_eq!(at(13), Ok((0, 4, 15)));
        assert_eq!(at(14), Ok((0, 4, 15)));
        assert_eq!(at(16), Ok((0, 5, 16)));
        assert_eq!(at(11), Err(OUTSIDE));
        assert_eq!(at(19), Err(OUTSIDE));
        assert_eq!(
            file_line(&document, BlockLine { block: 0, line: 4 }),
            Some(15)
        );
        assert_eq!(heading_line(&document, "Go"), Some(9));
        assert_eq!(heading_line(&document, ""), Some(7));
    }
}
