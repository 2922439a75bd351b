//! `textDocument/codeLens` (`editor.md` §1, §2): on a prompt's H1 line `Run`
//! (`promptforge.run`), `Debug` (`promptforge.debug`, which the editors
//! implement by starting their debugger on `promptforge dap`), `Run with
//! arguments…` (`promptforge.runWithArguments`, which the editors implement by
//! asking for the text) and, when a test file is
//! beside it, `Run tests` (`promptforge.test`); on a test file `Run all tests` on
//! its first line and `Run test` on each case's `- name:` line. Every lens carries
//! its command and arguments, so a client without extension code runs it.

use serde_json::{json, Value};
use tower_lsp::lsp_types::{CodeLens, Command, Position, Range};

use crate::documents::Documents;
use crate::run::protocol::{DEBUG, RUN, RUN_WITH_ARGUMENTS, TEST};
use crate::snapshot::Snapshot;
use crate::test_files;

fn lens(range: Range, title: &str, command: &str, argument: Value) -> CodeLens {
    CodeLens {
        range,
        command: Some(Command {
            title: title.to_owned(),
            command: command.to_owned(),
            arguments: Some(vec![argument]),
        }),
        data: None,
    }
}

/// The code lenses of a snapshot (a prompt's or a test file's).
pub fn code_lenses(snapshot: &Snapshot, documents: &Documents) -> Vec<CodeLens> {
    if snapshot.is_test_file {
        return test_file_lenses(snapshot);
    }
    let Some(title) = &snapshot.analysis.document.title else {
        return Vec::new();
    };
    let range = snapshot.positions().range(&title.line_range);
    let uri = json!({ "uri": snapshot.uri });
    let mut lenses = vec![
        lens(range, "Run", RUN, uri.clone()),
        lens(range, "Debug", DEBUG, uri.clone()),
        lens(
            range,
            "Run with arguments…",
            RUN_WITH_ARGUMENTS,
            uri.clone(),
        ),
    ];
    let tested =
        crate::test_uris::beside(&snapshot.uri).is_some_and(|t| test_files::exists(documents, &t));
    if tested {
        lenses.push(lens(range, "Run tests", TEST, uri));
    }
    lenses
}

fn test_file_lenses(snapshot: &Snapshot) -> Vec<CodeLens> {
    let (file, _) = promptforge_syntax::test_file::parse(&snapshot.text);
    let start = Position::new(0, 0);
    let mut lenses = vec![lens(
        Range::new(start, start),
        "Run all tests",
        TEST,
        json!({ "uri": snapshot.uri }),
    )];
    let index = &snapshot.analysis.line_index;
    for case in &file.cases {
        let Some(name) = &case.name else { continue };
        let line = index.line_of(case.range.start);
        let Some(bytes) = index.line_range(&snapshot.text, line) else {
            continue;
        };
        lenses.push(lens(
            snapshot.positions().range(&bytes),
            "Run test",
            TEST,
            json!({ "uri": snapshot.uri, "case": name.value }),
        ));
    }
    lenses
}
