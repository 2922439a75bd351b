//! Lua's own syntax check for the parse: every executable block is compiled by
//! Lua 5.4 (mlua) without running it, and its first error reported in Lua's own
//! words. The syntax crate defines the seam ([`LuaCompiler`]) and runs no Lua; the
//! front ends and the engine parse through [`parse`] and [`compiler`] here.

mod batch;

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use mlua::Lua;

use promptforge_syntax::lua::{LuaCompiler, LuaSyntaxError};
use promptforge_syntax::parsed_file::ParsedFile;
use promptforge_syntax::{Analysis, Indexed};

/// Lua 5.4's compiler, one per thread, reused.
#[derive(Debug, Default, Clone, Copy)]
pub struct Lua54;

impl LuaCompiler for Lua54 {
    fn check(&self, code: &str) -> Result<(), LuaSyntaxError> {
        check_syntax(code)
    }

    /// Compiles the small blocks that [`batch::stays_wrapped`] lets in, up to
    /// [`batch::BATCH`] to a load; every block of a load that fails, and every
    /// other block, alone.
    fn check_all(&self, codes: &[&str]) -> Vec<Result<(), LuaSyntaxError>> {
        let mut results = vec![Ok(()); codes.len()];
        let mut chunk = String::new();
        let mut members = Vec::with_capacity(batch::BATCH);
        for (index, code) in codes.iter().enumerate() {
            if code.len() > batch::SMALL || !batch::stays_wrapped(code) {
                results[index] = check_syntax(code);
                continue;
            }
            chunk.push_str(batch::OPEN);
            chunk.push_str(code);
            chunk.push_str(batch::CLOSE);
            members.push(index);
            if members.len() == batch::BATCH || chunk.len() >= batch::BATCH_BYTES {
                compile_batch(&chunk, &members, codes, &mut results);
                chunk.clear();
                members.clear();
            }
        }
        compile_batch(&chunk, &members, codes, &mut results);
        results
    }
}

/// The compiler every parse of the product uses (one, shared).
pub fn compiler() -> Arc<dyn LuaCompiler> {
    static SHARED: OnceLock<Arc<dyn LuaCompiler>> = OnceLock::new();
    Arc::clone(SHARED.get_or_init(|| Arc::new(Lua54)))
}

/// Parses and analyses `text` from scratch, its Lua checked by Lua 5.4.
pub fn parse(text: &str) -> Analysis {
    parse_owned(text.to_owned()).0
}

/// Like [`parse`], without copying `text`: it is handed back with the analysis.
pub fn parse_owned(text: String) -> (Analysis, String) {
    ParsedFile::analyse_once(text, compiler())
}

/// Like [`parse_owned`], for a caller that reads the sections index and never
/// the section tree (`check`): the tree is not built ([`ParsedFile::index_once`]).
pub fn index_owned(text: String) -> (Indexed, String) {
    ParsedFile::index_once(text, compiler())
}

/// A [`ParsedFile`] of `text` (for edits after), its Lua checked by Lua 5.4.
pub fn parsed(text: String) -> ParsedFile {
    ParsedFile::new(text, compiler())
}

/// Compiles `chunk`, the wrapped blocks `members` of `codes`; when it fails,
/// each of them alone, its result in `results` (left `Ok` otherwise).
fn compile_batch(
    chunk: &str,
    members: &[usize],
    codes: &[&str],
    results: &mut [Result<(), LuaSyntaxError>],
) {
    if members.is_empty() || compile(chunk).is_ok() {
        return;
    }
    for &index in members {
        results[index] = check_syntax(codes[index]);
    }
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

/// The message for code that nests deeper than Lua's parser allows (Lua itself
/// says only `C stack overflow`, with no line; the spec leaves the text open).
pub const NESTED_TOO_DEEPLY: &str =
    "the code nests too deeply: Lua reads at most about 200 nested expressions or blocks";

/// Compiles `code` as a Lua 5.4 chunk and reports its first syntax error.
pub fn check_syntax(code: &str) -> Result<(), LuaSyntaxError> {
    match compile(code) {
        Ok(()) => Ok(()),
        Err(err) if is_stack_overflow(&err) => Err(LuaSyntaxError {
            line: overflow_line(code),
            message: NESTED_TOO_DEEPLY.to_owned(),
        }),
        Err(err) => Err(describe(&err)),
    }
}

fn compile(code: &str) -> Result<(), mlua::Error> {
    COMPILER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let lua = slot.get_or_insert_with(new_compiler);
        lua.load(code)
            .set_name(CHUNK_NAME)
            .set_mode(mlua::chunk::ChunkMode::Text)
            .into_function()
            .map(|_| ())
    })
}

/// True for the error Lua's parser raises when the code nests too deeply: a
/// runtime error raised while compiling, without a position.
fn is_stack_overflow(err: &mlua::Error) -> bool {
    matches!(err, mlua::Error::RuntimeError(message) if message.starts_with("C stack overflow"))
        || matches!(err, mlua::Error::StackError)
}

/// The 1-based line on which the parser runs out of nesting levels: the first
/// line whose prefix of the code already overflows (the parser reads tokens in
/// order, so every longer prefix overflows too), found by bisection.
fn overflow_line(code: &str) -> u32 {
    let ends: Vec<usize> = code
        .match_indices('\n')
        .map(|(at, _)| at)
        .chain(std::iter::once(code.len()))
        .collect();
    let overflows = |lines: usize| {
        let end = ends
            .get(lines.saturating_sub(1))
            .copied()
            .unwrap_or(code.len());
        let prefix = code.get(..end).unwrap_or(code);
        compile(prefix).is_err_and(|e| is_stack_overflow(&e))
    };
    let (mut low, mut high) = (1, ends.len());
    while low < high {
        let middle = low + (high - low) / 2;
        if overflows(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    u32::try_from(low).unwrap_or(u32::MAX)
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
        // One line: no `runtime error: ` prefix, no traceback.
        mlua::Error::RuntimeError(message) | mlua::Error::MemoryError(message) => {
            message.lines().next().unwrap_or_default().to_owned()
        }
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
    use promptforge_syntax::lua::in_file_lines;

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
    fn lines_inside_lua_s_own_message_count_the_file() {
        // Issue 23, trap 5: the block's code starts on the file's line 9 (0-based 8).
        let err = check_syntax("local x = (1 +\n  2\nreturn x\n").unwrap_err();
        assert_eq!(
            in_file_lines(&err.message, 8),
            "')' expected (to close '(' at line 9) near 'return'"
        );
        // (in_file_lines on its own is the syntax crate's test.)
    }

    #[test]
    fn code_is_not_run() {
        assert_eq!(check_syntax("error('boom')\nwhile true do end"), Ok(()));
    }

    #[test]
    fn code_nested_too_deeply_is_one_line_at_its_line() {
        let deep = format!(
            "local x = 1\nlocal y = 2\nreturn {}1{}\n",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let err = check_syntax(&deep).unwrap_err();
        assert_eq!((err.line, err.message.as_str()), (3, NESTED_TOO_DEEPLY));
        let spread: String = (0..400).map(|_| "(\n").collect();
        let err = check_syntax(&format!("return {spread}1")).unwrap_err();
        assert_eq!(err.message, NESTED_TOO_DEEPLY);
        assert!((190..=202).contains(&err.line), "{}", err.line);
        let blocks = format!("{}{}", "do ".repeat(1000), "end ".repeat(1000));
        assert_eq!(
            check_syntax(&blocks).unwrap_err().message,
            NESTED_TOO_DEEPLY
        );
        assert_eq!(
            check_syntax(&format!("return {}1{}", "(".repeat(100), ")".repeat(100))),
            Ok(())
        );
    }

    #[test]
    fn binary_chunks_are_refused() {
        let err = check_syntax("\x1bLua").unwrap_err();
        assert_eq!(err.line, 1);
    }
}
