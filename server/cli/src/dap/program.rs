//! A prompt file as the adapter sees it: its document, and for each Lua block
//! the lines where Lua can stop (from the compiled code). It maps the prompt
//! file's lines to the engine's block lines and back: a breakpoint binds to the
//! next line with code of the block that holds it; a frame comes back as a file
//! line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use promptforge_engine::run::vm::code_lines::code_lines;
use promptforge_engine::run::{BlockLine, FramePlace};
use promptforge_syntax::{Document, Section};

/// Why a breakpoint outside every block is not verified.
pub const OUTSIDE: &str = "not inside a lua block that runs";

/// Why a breakpoint below a block's last line of code is not verified.
pub const NO_CODE_BELOW: &str = "no code on or below this line in its lua block";

/// Why a breakpoint in a block that does not compile is not verified.
pub const NOT_COMPILED: &str = "its lua block does not compile";

/// A prompt file read for debugging.
pub struct Program {
    /// Its path as the client named it.
    pub path: PathBuf,
    /// Its parsed text.
    pub document: Document,
    /// Per block (as `Document::lua_blocks`), the lines (in the block's code)
    /// where Lua can stop; None when the block does not compile.
    lines: Vec<Option<BTreeSet<u32>>>,
    /// Per block, the number of lines of its code.
    line_counts: Vec<u32>,
    /// Per block, true when some body runs it.
    runs: Vec<bool>,
}

/// True when `index` is among the blocks of `sections` (or their children).
fn listed(sections: &[Section], index: usize) -> bool {
    sections
        .iter()
        .any(|s| s.body.blocks.contains(&index) || listed(&s.children, index))
}

impl Program {
    /// The prompt at `path`, read and parsed; None when it cannot be read.
    pub fn read(path: &Path) -> Option<Self> {
        let text = crate::files::read_text(path).ok()?;
        Some(Program::of_text(path, &text))
    }

    /// The prompt whose text is `text`.
    pub fn of_text(path: &Path, text: &str) -> Self {
        let document = promptforge_luacheck::parse(text).document;
        let lines = document
            .lua_blocks
            .iter()
            .map(|block| code_lines(block.code(text)).ok())
            .collect();
        let line_counts = document
            .lua_blocks
            .iter()
            .map(|block| u32::try_from(block.code(text).lines().count()).unwrap_or(u32::MAX))
            .collect();
        let runs = (0..document.lua_blocks.len())
            .map(|i| document.h1_body.blocks.contains(&i) || listed(&document.sections, i))
            .collect();
        Program {
            path: path.to_owned(),
            document,
            lines,
            line_counts,
            runs,
        }
    }

    /// The place of a breakpoint on the 1-based file line `line`: the block line
    /// it binds to and the file line it moved to; the error says why it binds
    /// nowhere.
    pub fn place(&self, line: u32) -> Result<(BlockLine, u32), &'static str> {
        for (block, lua) in self.document.lua_blocks.iter().enumerate() {
            let first = lua.first_line + 1;
            let count = self.line_counts.get(block).copied().unwrap_or(0);
            let Some(offset) = line.checked_sub(first) else {
                continue;
            };
            if offset >= count {
                continue;
            }
            if !self.runs.get(block).copied().unwrap_or(false) {
                return Err(OUTSIDE);
            }
            let Some(Some(lines)) = self.lines.get(block) else {
                return Err(NOT_COMPILED);
            };
            let Some(&at) = lines.range(offset + 1..).next() else {
                return Err(NO_CODE_BELOW);
            };
            let place = BlockLine { block, line: at };
            return Ok((place, lua.file_line(at)));
        }
        Err(OUTSIDE)
    }

    /// The 1-based file line of a frame's place (a block line, or a section's
    /// heading; the H1 title for the H1 pass).
    pub fn line_of(&self, place: &FramePlace) -> Option<u32> {
        match place {
            FramePlace::Block(place) => self
                .document
                .lua_blocks
                .get(place.block)
                .map(|lua| lua.file_line(place.line)),
            FramePlace::Section(path) if path.is_empty() => {
                self.document.title.as_ref().map(|title| title.line + 1)
            }
            FramePlace::Section(path) => self
                .document
                .section_at(path)
                .map(|section| section.heading.line + 1),
        }
    }

    /// The file's name, as a source's `name`.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# P\n\n## Go\n\n```lua\nlocal a = 1\n\n-- a comment\nlocal b = a + 1\nif b then\nend\nreturn b\n```\n\nprose\n\n---\n\n```lua\nlog('never')\n```\n";

    #[test]
    fn breakpoints_bind_to_the_next_line_with_code_of_their_block() {
        let program = Program::of_text(Path::new("p.md"), PROMPT);
        // File lines: 12 `local a = 1`, 13 blank, 14 comment, 15 `local b`,
        // 16 `if b then`, 17 `end`, 18 `return b`; 26 is below a comment `---`.
        let at = |line| {
            program
                .place(line)
                .map(|(p, moved)| (p.block, p.line, moved))
        };
        assert_eq!(at(12), Ok((0, 1, 12)));
        assert_eq!(at(13), Ok((0, 4, 15)));
        assert_eq!(at(14), Ok((0, 4, 15)));
        assert_eq!(at(17), Ok((0, 7, 18)), "an `if`'s end has no code");
        assert_eq!(at(11), Err(OUTSIDE));
        assert_eq!(at(20), Err(OUTSIDE));
        assert_eq!(at(26), Err(OUTSIDE), "a block below a comment never runs");
        let block = BlockLine { block: 0, line: 4 };
        assert_eq!(program.line_of(&FramePlace::Block(block)), Some(15));
        assert_eq!(program.line_of(&FramePlace::Section(vec![0])), Some(9));
        assert_eq!(program.line_of(&FramePlace::Section(Vec::new())), Some(7));
    }
}
