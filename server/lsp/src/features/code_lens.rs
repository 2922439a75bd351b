//! `textDocument/codeLens`: `Run` on the H1 line, with the `promptforge.run` command.

use serde_json::json;
use tower_lsp::lsp_types::{CodeLens, Command};

use crate::snapshot::Snapshot;

/// The command a `Run` lens carries (`editor.md` §2).
pub const RUN_COMMAND: &str = "promptforge.run";

/// The code lenses of a snapshot.
pub fn code_lenses(snapshot: &Snapshot) -> Vec<CodeLens> {
    let Some(title) = &snapshot.analysis.document.title else {
        return Vec::new();
    };
    vec![CodeLens {
        range: snapshot.positions().range(&title.line_range),
        command: Some(Command {
            title: "Run".to_owned(),
            command: RUN_COMMAND.to_owned(),
            arguments: Some(vec![json!({ "uri": snapshot.uri })]),
        }),
        data: None,
    }]
}
