//! Lua syntax errors: the parse compiles every executable block (Lua 5.4)
//! without running it, through a [`LuaCompiler`] its caller gives, so that this
//! crate runs no Lua itself (the compiler, Lua's own, is `promptforge-luacheck`'s).

/// A Lua syntax error: the 1-based line inside the block and Lua's own message
/// without its chunk-name and line prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaSyntaxError {
    /// 1-based line within the block's code that Lua names.
    pub line: u32,
    /// Lua's message, such as `unexpected symbol near '='`.
    pub message: String,
}

/// Compiles a block's code without running it and reports its first syntax
/// error: the seam through which the parse gets Lua's own messages.
pub trait LuaCompiler: Send + Sync {
    /// `Ok` when `code` compiles as a Lua 5.4 chunk, else its first syntax error.
    fn check(&self, code: &str) -> Result<(), LuaSyntaxError>;

    /// [`LuaCompiler::check`] of each of `codes`, in order (a compiler may
    /// compile them together where that gives the same results).
    fn check_all(&self, codes: &[&str]) -> Vec<Result<(), LuaSyntaxError>> {
        codes.iter().map(|code| self.check(code)).collect()
    }
}

/// Compile results of Lua blocks, keyed by their code's byte range in the file.
pub(crate) type CompiledBlocks = rustc_hash::FxHashMap<(usize, usize), Result<(), LuaSyntaxError>>;

/// `message` with the lines Lua names inside it (`to close '(' at line 1`,
/// `label 'x' already defined on line 2`), which count the block's lines, turned
/// into lines of the file whose line `first_line` (0-based) the block's code starts on.
pub fn in_file_lines(message: &str, first_line: u32) -> String {
    let mut out = String::with_capacity(message.len() + 4);
    let mut rest = message;
    while let Some(at) = ["at line ", "on line "]
        .iter()
        .filter_map(|marker| rest.find(marker).map(|at| at + marker.len()))
        .min()
    {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match after[..digits].parse::<u32>() {
            Ok(line) => out.push_str(&(line.saturating_add(first_line)).to_string()),
            Err(_) => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_inside_a_message_count_the_file() {
        // Issue 23, trap 5: a block whose code starts on the file's line 9 (0-based 8).
        assert_eq!(
            in_file_lines("')' expected (to close '(' at line 1) near 'return'", 8),
            "')' expected (to close '(' at line 9) near 'return'"
        );
        assert_eq!(
            in_file_lines("label 'a' already defined on line 2", 20),
            "label 'a' already defined on line 22"
        );
        assert_eq!(in_file_lines("no line here", 3), "no line here");
        assert_eq!(in_file_lines("at line x", 3), "at line x");
    }
}
