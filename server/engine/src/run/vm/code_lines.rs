//! The lines of a block where Lua can stop (the debugger issue): the lines its
//! compiled instructions carry, nested functions included, read from the
//! chunk's bytecode (Lua 5.4's binary chunk format, `ldump.c`). A breakpoint
//! binds to one of them; any other line (a comment, a blank, the inside of a
//! long string, the `end` of an `if`) would never be reached by the line hook.

use std::collections::BTreeSet;

use mlua::Lua;

/// Why a chunk's lines could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeLinesError {
    /// The code does not compile: Lua's message.
    Compile(String),
    /// The bytecode is not in the format this reader knows.
    Format,
}

/// The lines (1-based, in the block's code) where the line hook can fire.
pub fn code_lines(code: &str) -> Result<BTreeSet<u32>, CodeLinesError> {
    let lua = Lua::new();
    let function = lua
        .load(code)
        .set_name("=lines")
        .into_function()
        .map_err(|e| CodeLinesError::Compile(e.to_string()))?;
    let bytes = function.dump(false);
    let mut reader = Reader {
        bytes: &bytes,
        at: 0,
    };
    let mut lines = BTreeSet::new();
    reader.header().ok_or(CodeLinesError::Format)?;
    reader
        .function(&mut lines, 0)
        .ok_or(CodeLinesError::Format)?;
    Ok(lines)
}

/// How deep functions may nest in a chunk (Lua's own parser stops far earlier).
const MAX_NESTING: usize = 256;

/// `lineinfo`'s mark for an instruction whose line is in `abslineinfo`.
const ABSOLUTE_LINE: i8 = -0x80;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        let end = self.at.checked_add(n)?;
        (end <= self.bytes.len()).then(|| self.at = end)
    }

    /// `loadUnsigned`: 7 bits a byte, most significant first, the last byte
    /// marked with its high bit.
    fn size(&mut self) -> Option<usize> {
        let mut value: usize = 0;
        loop {
            let byte = self.byte()?;
            value = value
                .checked_mul(128)?
                .checked_add(usize::from(byte & 0x7f))?;
            if byte & 0x80 != 0 {
                return Some(value);
            }
        }
    }

    fn int(&mut self) -> Option<i64> {
        i64::try_from(self.size()?).ok()
    }

    /// `loadString`: its size plus one (0 for none), then its bytes.
    fn string(&mut self) -> Option<()> {
        match self.size()? {
            0 => Some(()),
            n => self.skip(n - 1),
        }
    }

    fn header(&mut self) -> Option<()> {
        let signature = b"\x1bLua\x54\x00\x19\x93\r\n\x1a\n";
        if !self.bytes.starts_with(signature) {
            return None;
        }
        self.skip(signature.len())?;
        // Sizes of an instruction, an integer and a number, then a check integer
        // and a check number of those sizes.
        let instruction = self.byte()?;
        let integer = self.byte()?;
        let number = self.byte()?;
        if instruction != 4 {
            return None;
        }
        self.skip(usize::from(integer) + usize::from(number))?;
        // The main function's number of upvalues.
        self.byte().map(|_| ())
    }

    fn function(&mut self, lines: &mut BTreeSet<u32>, nesting: usize) -> Option<()> {
        if nesting > MAX_NESTING {
            return None;
        }
        self.string()?; // source
        let line_defined = self.int()?;
        self.int()?; // last line defined
        self.byte()?; // parameters
        let vararg = self.byte()? != 0;
        self.byte()?; // stack size
        let instructions = self.size()?;
        self.skip(instructions.checked_mul(4)?)?;
        for _ in 0..self.size()? {
            match self.byte()? {
                // A float or an integer.
                0x13 | 0x03 => self.skip(8)?,
                // A short or a long string.
                0x04 | 0x14 => self.string()?,
                _ => {}
            }
        }
        let upvalues = self.size()?;
        self.skip(upvalues.checked_mul(3)?)?;
        for _ in 0..self.size()? {
            self.function(lines, nesting + 1)?;
        }
        // Debug information: relative lines, then absolute ones.
        let count = self.size()?;
        let start = self.at;
        self.skip(count)?;
        let relative = self.bytes.get(start..self.at)?;
        let mut absolute = Vec::new();
        for _ in 0..self.size()? {
            let pc = self.int()?;
            let line = self.int()?;
            absolute.push((pc, line));
        }
        let mut line = line_defined;
        for (pc, delta) in relative.iter().enumerate() {
            let delta = *delta as i8;
            if delta == ABSOLUTE_LINE {
                let pc = i64::try_from(pc).ok()?;
                line = absolute.iter().find(|(at, _)| *at == pc)?.1;
            } else {
                line += i64::from(delta);
            }
            // A vararg function's first instruction prepares its arguments: no line
            // event happens there.
            if vararg && pc == 0 {
                continue;
            }
            if let Ok(line) = u32::try_from(line) {
                if line > 0 {
                    lines.insert(line);
                }
            }
        }
        for _ in 0..self.size()? {
            self.string()?;
            self.int()?;
            self.int()?;
        }
        for _ in 0..self.size()? {
            self.string()?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(code: &str) -> Vec<u32> {
        code_lines(code).unwrap().into_iter().collect()
    }

    #[test]
    fn lines_with_instructions_are_found_in_nested_functions_too() {
        let code = "local a = 1\n\n-- comment\nlocal s = [[\ninside\n]]\nlocal function f(x)\n  if x then\n    return x * 2\n  end\nend\nreturn f(a)\n";
        // The long string's value loads on the line it ends; the function's
        // closure is made on its `end` line.
        assert_eq!(lines(code), [1, 6, 8, 9, 11, 12]);
        assert_eq!(fired(code), [1, 6, 8, 9, 11, 12]);
    }

    /// The lines the line hook fires on when `code` runs.
    fn fired(code: &str) -> Vec<u32> {
        use std::sync::{Arc, Mutex};
        let lua = Lua::new();
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let out = seen.clone();
        lua.set_hook(mlua::HookTriggers::EVERY_LINE, move |_, debug| {
            if let Some(line) = debug.current_line() {
                out.lock().unwrap().insert(line as u32);
            }
            Ok(mlua::VmState::Continue)
        })
        .unwrap();
        lua.load(code).exec().unwrap();
        let lines = seen.lock().unwrap().iter().copied().collect();
        lines
    }

    #[test]
    fn many_lines_use_absolute_line_info() {
        let mut code = String::new();
        for i in 0..300 {
            code.push_str(&format!("v{i} = {i}\n"));
            code.push_str(&"\n".repeat(150));
        }
        let found = lines(&code);
        assert_eq!(found.len(), 300);
        assert_eq!(found.last(), Some(&(299 * 151 + 1)));
    }

    #[test]
    fn code_that_does_not_compile_says_so() {
        assert!(matches!(
            code_lines("local = 1"),
            Err(CodeLinesError::Compile(_))
        ));
    }
}
