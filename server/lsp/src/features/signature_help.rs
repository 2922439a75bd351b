//! `textDocument/signatureHelp`: [`promptforge_analysis::ide::signature_help`] at the position.

use promptforge_analysis::ide;
use tower_lsp::lsp_types::{Position, SignatureHelp};

use crate::convert;
use crate::snapshot::Snapshot;

/// The signature help at `position`.
pub fn signature_help(snapshot: &Snapshot, position: Position) -> Option<SignatureHelp> {
    let offset = snapshot.positions().offset(position);
    let help = ide::signature_help::signature_help(snapshot.ide(), offset)?;
    Some(convert::signature_help(help))
}
