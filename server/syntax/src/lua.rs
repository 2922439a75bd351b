//! Lua syntax checks: every executable block is compiled (Lua 5.4) without running it.

use std::cell::RefCell;

use mlua::Lua;

/// A Lua syntax error: the 1-based line inside the block and Lua's own message
/// without its chunk-name and line prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaSyntaxError {
    /// 1-based line within the block's code that Lua names.
    pub line: u32,
    /// Lua's message, such as `unexpected symbol near '='`.
    pub message: String,
}

/// The chunk name given to blocks, so the prefix Lua puts on messages is known.
const CHUNK_NAME: &str = "=block";
/// The prefix Lua writes for [`CHUNK_NAME`].
const CHUNK_PREFIX: &str = "block:";
/// Memory a compile may use; a block that needs more fails with Lua's memory error.
const COMPILE_MEMORY_LIMIT: usize = 256 * 1024 * 1024;

thread_local! {
    static COMPILER: RefCell<Option<Lua>> = const { RefCell::new(None) };
}

/// Compiles `code` as a Lua 5.4 chunk and reports its first syntax error.
pub fn check_syntax(code: &str) -> Result<(), LuaSyntaxError> {
    COMPILER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let lua = slot.get_or_insert_with(new_compiler);
        let result = lua
            .load(code)
            .set_name(CHUNK_NAME)
            .set_mode(mlua::chunk::ChunkMode::Text)
            .into_function();
        match result {
            Ok(_) => Ok(()),
            Err(err) => Err(describe(&err)),
        }
    })
}

fn new_compiler() -> Lua {
    let lua = Lua::new();
    // A failure to set the limit only loses the ceiling, never the check.
    let _ = lua.set_memory_limit(COMPILE_MEMORY_LIMIT);
    lua
}

/// Splits Lua's `block:{line}: {message}` into the line and the message.
fn describe(err: &mlua::Error) -> LuaSyntaxError {
    let raw = match err {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => other.to_string(),
    };
    split_location(&raw).unwrap_or(LuaSyntaxError {
        line: 1,
        message: raw,
    })
}

fn split_location(raw: &str) -> Option<LuaSyntaxError> {
    let rest = raw.strip_prefix(CHUNK_PREFIX)?;
    let (line, message) = rest.split_once(": ")?;
    let line = line.parse().ok()?;
    Some(LuaSyntaxError {
        line,
        message: message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_code_compiles() {
        assert_eq!(check_syntax("local x = 1\nreturn x\n"), Ok(()));
        assert_eq!(check_syntax(""), Ok(()));
    }

    #[test]
    fn syntax_error_has_line_and_bare_message() {
        let err = check_syntax("local x = 1\nx = = 2\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.message, "unexpected symbol near '='");
    }

    #[test]
    fn error_at_end_of_input_names_the_last_line() {
        let err = check_syntax("function f()\n  return 1\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert_eq!(
            err.message,
            "'end' expected (to close 'function' at line 1) near <eof>"
        );
    }

    #[test]
    fn code_is_not_run() {
        assert_eq!(check_syntax("error('boom')\nwhile true do end"), Ok(()));
    }

    #[test]
    fn binary_chunks_are_refused() {
        let err = check_syntax("\x1bLua").unwrap_err();
        assert_eq!(err.line, 1);
    }
}
