//! The aliases a prompt test file names (`testing.md`): an alias under a case's
//! `expect.calls` or called by a scripted round that the prompt neither binds
//! (its frontmatter's `tools:`) nor registers as a local tool (`tools.add_local`
//! with a literal alias, in any Lua block), and that is no Engine tool, gets a
//! warning at the alias: the engine decides at run time (a script may call an
//! alias out of scope on purpose).

use std::collections::HashSet;

use promptforge_syntax::api_names::is_engine_tool;
use promptforge_syntax::test_file::{Round, Spanned, TestFile};
use promptforge_syntax::{Analysis, Code, Diagnostic};

use crate::source_files::SourceFiles;
use crate::FactsCache;

/// The aliases the prompt binds or registers; None while its frontmatter is
/// unreadable (every alias would look unknown) or a block was not read.
fn known_aliases((text, prompt): (&str, &Analysis)) -> Option<HashSet<String>> {
    let document = &prompt.document;
    let frontmatter = document
        .frontmatter
        .as_ref()
        .filter(|f| !f.keys.is_empty())?;
    let mut known: HashSet<String> = frontmatter
        .tools
        .iter()
        .map(|slot| slot.alias.value.clone())
        .collect();
    known.extend(local_tool_aliases(text, document)?);
    Some(known)
}

/// The literal aliases of a prompt's `tools.add_local` calls, in block order;
/// None when a block was not read ([`crate::read_budget`]): it may register any.
pub fn local_tool_aliases(
    text: &str,
    document: &promptforge_syntax::Document,
) -> Option<Vec<String>> {
    let blocks = FactsCache::default().shared(text, &document.lua_blocks);
    if blocks.iter().any(|facts| facts.unread.is_some()) {
        return None;
    }
    let aliases = blocks
        .iter()
        .flat_map(|facts| {
            facts
                .calls
                .iter()
                .filter(|call| call.callee == "tools.add_local")
                .filter_map(|call| call.first_string())
                .map(|lit| lit.value.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    Some(aliases)
}

/// Every alias the test file names, in file order: per case, its scripted rounds'
/// calls, then its `expect.calls`.
pub fn named_aliases(file: &TestFile) -> Vec<&Spanned<String>> {
    let mut out = Vec::new();
    for case in &file.cases {
        for round in case.model.iter().flatten() {
            if let Round::Calls(calls) = round {
                out.extend(calls.iter().map(|call| &call.alias));
            }
        }
        out.extend(case.expect.calls.iter().map(|(alias, _)| alias));
    }
    out
}

/// The alias warnings of `file` against its prompt's text and analysis (None: no
/// prompt was read, so no warnings), in file order.
pub fn diagnostics(file: &TestFile, prompt: Option<(&str, &Analysis)>) -> Vec<Diagnostic> {
    let Some(known) = prompt.and_then(known_aliases) else {
        return Vec::new();
    };
    let mut out: Vec<Diagnostic> = named_aliases(file)
        .into_iter()
        .filter(|alias| !known.contains(&alias.value) && !is_engine_tool(&alias.value))
        .map(|alias| {
            let code = Code::UnknownAlias {
                alias: alias.value.clone(),
            };
            Diagnostic::new(code, alias.range.clone())
        })
        .collect();
    out.sort_by_key(|d| d.range.start);
    out
}

/// The prompt `file` (read from `test_path`) tests: its path and text. A prompt that
/// is missing, unreadable or not UTF-8 text is the test file's own error, placed at
/// its `prompt:` value (or at the file's start when the prompt is the default). It
/// is read through `files`, the front end's bounded reader (the engine's
/// `user_file::UserFiles`: a device, a pipe or a socket is refused before it is
/// opened, as `/dev/stdin` would be the language server's own message stream, and
/// past 64 MiB reading stops).
pub fn prompt_of(
    files: &dyn SourceFiles,
    test_path: &std::path::Path,
    file: &TestFile,
) -> Result<(std::path::PathBuf, String), Box<Diagnostic>> {
    let path = promptforge_syntax::test_file::prompt_path(test_path, file);
    let reason = match files.read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => return Ok((path, text)),
            Err(_) => "it is not UTF-8 text".to_owned(),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => "no such file".to_owned(),
        Err(error) => error.to_string(),
    };
    let range = file.prompt.as_ref().map_or(0..0, |p| p.range.clone());
    let code = Code::TestFile(promptforge_syntax::test_file::Problem::PromptUnreadable {
        path: path.display().to_string(),
        reason,
    });
    Err(Box::new(Diagnostic::new(code, range)))
}
