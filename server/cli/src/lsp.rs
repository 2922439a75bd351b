//! `promptforge lsp`: the language server on stdio (`editor.md`).

use std::io::Write;

use crate::exit::Exit;

/// Serves the Language Server Protocol on stdin/stdout until the client exits.
/// Exit status 0 after `shutdown` and `exit`, 1 after `exit` (or the end of the
/// input) without `shutdown`, 2 when the async runtime cannot start.
pub fn run() -> Exit {
    crate::allocator::tune_for_server();
    match promptforge_lsp::run_stdio() {
        Ok(true) => Exit::Ok,
        Ok(false) => Exit::Problems,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "promptforge: lsp: {error}");
            Exit::Usage
        }
    }
}
