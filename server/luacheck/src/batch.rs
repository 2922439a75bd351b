//! Compiling many blocks in one load. Each Lua load has a fixed cost (the
//! parser's state, the main function, the interned names) that dwarfs a block
//! of a few lines, so a large prompt's blocks are compiled 64 to a chunk, each
//! wrapped as `_=function(...)` … `end` on lines of their own. A chunk that
//! compiles means each of its blocks compiles alone; one that does not is
//! compiled block by block, so every message is the one the block gets alone.
//!
//! A batch only says something about a block whose tokens stay inside its
//! wrapper: `x end if true then y` compiles wrapped (its `end` closes the
//! wrapper, ours the `if`) but not alone. [`stays_wrapped`] lets into a batch
//! only blocks that Lua's lexer cuts the way it reads them here: ending outside
//! any string or comment, with every `end` and `until` closing a construct the
//! block itself opened, and none left open. Then the wrapper's body is exactly
//! the block's tokens, parsed as the statements of a vararg function, as a
//! chunk is; where unsure, it says no and the block is compiled alone.

/// How many blocks go into one load, at most.
pub const BATCH: usize = 64;
/// A load takes no more blocks once it holds this many bytes.
pub const BATCH_BYTES: usize = 64 * 1024;
/// A block larger than this is compiled alone (its load's fixed cost is small
/// beside its own, and a batch of large blocks would be a large copy).
pub const SMALL: usize = 4 * 1024;

/// The line that opens a block's wrapper.
pub const OPEN: &str = "_=function(...)\n";
/// The lines that close it (the first ends a short comment the block ends with).
pub const CLOSE: &str = "\nend\n";

/// True when `code`'s tokens cannot reach outside a wrapper (see the module's
/// documentation): no string or comment left open at its end, no `end` or
/// `until` that would close the wrapper, no construct left open.
pub fn stays_wrapped(code: &str) -> bool {
    let bytes = code.as_bytes();
    let mut depth: u32 = 0;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'-' if bytes.get(at + 1) == Some(&b'-') => {
                at += 2;
                match long_bracket(bytes, at) {
                    Bracket::Long(level) => match long_end(bytes, at, level) {
                        Some(end) => at = end,
                        None => return false,
                    },
                    // A short comment runs to the end of its line.
                    Bracket::Not | Bracket::Invalid => {
                        while bytes.get(at).is_some_and(|b| *b != b'\n' && *b != b'\r') {
                            at += 1;
                        }
                    }
                }
            }
            b'[' => match long_bracket(bytes, at) {
                Bracket::Long(level) => match long_end(bytes, at, level) {
                    Some(end) => at = end,
                    None => return false,
                },
                Bracket::Not => at += 1,
                Bracket::Invalid => return false,
            },
            b'"' | b'\'' => match short_string_end(bytes, at) {
                Some(end) => at = end,
                None => return false,
            },
            b'0'..=b'9' => at = numeral_end(bytes, at),
            b'.' if bytes.get(at + 1).is_some_and(u8::is_ascii_digit) => {
                at = numeral_end(bytes, at);
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let start = at;
                while bytes
                    .get(at)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    at += 1;
                }
                match &bytes[start..at] {
                    b"function" | b"if" | b"do" | b"repeat" => depth += 1,
                    b"end" | b"until" => match depth.checked_sub(1) {
                        Some(less) => depth = less,
                        None => return false,
                    },
                    _ => {}
                }
            }
            _ => at += 1,
        }
    }
    depth == 0
}

/// What a `[` at some offset starts.
enum Bracket {
    /// A long bracket of this level (`[[`, `[=[`, …).
    Long(usize),
    /// A plain `[`.
    Not,
    /// `[=` not followed by `[`: Lua's lexer refuses it in code.
    Invalid,
}

/// What the `[` at `at` starts, as Lua's lexer reads it.
fn long_bracket(bytes: &[u8], at: usize) -> Bracket {
    if bytes.get(at) != Some(&b'[') {
        return Bracket::Not;
    }
    let mut level = 0;
    while bytes.get(at + 1 + level) == Some(&b'=') {
        level += 1;
    }
    match (bytes.get(at + 1 + level), level) {
        (Some(b'['), _) => Bracket::Long(level),
        (_, 0) => Bracket::Not,
        _ => Bracket::Invalid,
    }
}

/// The offset after the `]=…]` of `level` that closes the long bracket opened
/// at `at`, or None when it is never closed.
fn long_end(bytes: &[u8], at: usize, level: usize) -> Option<usize> {
    let mut close = Vec::with_capacity(level + 2);
    close.push(b']');
    close.resize(level + 1, b'=');
    close.push(b']');
    let from = at + level + 2;
    bytes
        .get(from..)?
        .windows(close.len())
        .position(|window| window == close.as_slice())
        .map(|found| from + found + close.len())
}

/// The offset after the quote that closes the short string opened at `at`, or
/// None when a line ends or the text ends first (where Lua would say the string
/// is unfinished; a line break escaped with `\` or skipped by `\z` also counts
/// as None: the block is then compiled alone, which costs only time).
fn short_string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let quote = *bytes.get(at)?;
    let mut here = at + 1;
    loop {
        match *bytes.get(here)? {
            b'\\' => {
                let escaped = *bytes.get(here + 1)?;
                if escaped == b'\n' || escaped == b'\r' {
                    return None;
                }
                here += 2;
            }
            b'\n' | b'\r' => return None,
            byte if byte == quote => return Some(here + 1),
            _ => here += 1,
        }
    }
}

/// The offset after the numeral at `at`, cut as Lua's lexer cuts it: digits,
/// letters, `.` and `_`, and a sign only right after the exponent's mark (`e`
/// or `E`, `p` or `P` in a hexadecimal numeral). It may take more than Lua
/// takes only where Lua refuses the numeral (one touching a letter).
fn numeral_end(bytes: &[u8], mut at: usize) -> usize {
    let hexadecimal =
        bytes.get(at) == Some(&b'0') && matches!(bytes.get(at + 1), Some(b'x' | b'X'));
    let marks: &[u8] = if hexadecimal { b"pP" } else { b"eE" };
    while let Some(&byte) = bytes.get(at) {
        let exponent_sign = (byte == b'+' || byte == b'-')
            && at > 0
            && bytes.get(at - 1).is_some_and(|mark| marks.contains(mark));
        if byte.is_ascii_alphanumeric() || byte == b'.' || byte == b'_' || exponent_sign {
            at += 1;
        } else {
            break;
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::stays_wrapped;

    #[test]
    fn ordinary_blocks_stay_wrapped() {
        for code in [
            "",
            "local x = 1\nreturn x",
            "for i = 1, 3 do\n  if i > 1 then print(i) end\nend",
            "repeat x = x + 1 until x > 3",
            "local f = function(...) return ... end",
            "local s = [[ end ]] .. [==[ ]] end ]==] .. 'end' .. \"until\"",
            "-- end\nx = 1 --[[ end\nend ]] y = 2",
            "x = 1 -- a comment at the very end",
            "x = 0x1p-4 + 1e+3 + .5",
            // In a hexadecimal numeral `e` is a digit: the `-` after it is a
            // minus, and the `function` after that opens a construct.
            "x = 0x1e-function() end",
            "local t = { [1] = 'a', ['b'] = 2 }",
            "::top:: goto top",
        ] {
            assert!(stays_wrapped(code), "{code:?}");
        }
    }

    #[test]
    fn blocks_that_could_reach_outside_their_wrapper_do_not() {
        for code in [
            // An `end` or `until` closing the wrapper, or something before it.
            "x = 1 end if true then y = 2",
            "x = 1 end _=function(...) y = 2",
            "end",
            "until x",
            "do end end do",
            "do x = 0x1e-function() end",
            // A construct left open: the wrapper's `end` would close it.
            "if x then",
            "function f()",
            // A string or comment left open swallows the wrapper's end.
            "x = [[ open",
            "--[==[ open ]] ]=]",
            "x = 'open",
            "x = \"line\nbreak\"",
            "x = 'escaped \\\n line'",
            "x = '\\z\n  skipped'",
            // Lua's lexer refuses `[=` without a second `[`.
            "x = [=",
        ] {
            assert!(!stays_wrapped(code), "{code:?}");
        }
    }
}
