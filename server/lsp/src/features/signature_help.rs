//! `textDocument/signatureHelp`: the Lua API function whose parentheses hold the cursor.

use tower_lsp::lsp_types::{
    Documentation, MarkupContent, MarkupKind, ParameterInformation, ParameterLabel, Position,
    SignatureHelp, SignatureInformation,
};

use crate::snapshot::Snapshot;
use promptforge_analysis::api_reference;
use promptforge_analysis::ide::lua_context::enclosing_call;

/// The signature help at `position`.
pub fn signature_help(snapshot: &Snapshot, position: Position) -> Option<SignatureHelp> {
    let offset = snapshot.positions().offset(position);
    let block = snapshot
        .analysis
        .document
        .lua_blocks
        .iter()
        .find(|b| b.code_range.start <= offset && offset <= b.code_range.end)?;
    let (callee, argument) = enclosing_call(&snapshot.text, block.code_range.start, offset)?;
    let entry = api_reference::lookup(callee).filter(|e| e.function)?;
    let signature = entry.signature;
    // Parameter labels as offsets into the signature, searched after the parenthesis.
    let mut at = signature.find('(').unwrap_or(0);
    let mut parameters = Vec::new();
    for param in entry.params {
        let Some(found) = signature.get(at..).and_then(|rest| rest.find(param)) else {
            break;
        };
        let start = at + found;
        at = start + param.len();
        parameters.push(ParameterInformation {
            label: ParameterLabel::LabelOffsets([start as u32, at as u32]),
            documentation: None,
        });
    }
    let last = entry.params.len().saturating_sub(1) as u32;
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label: signature.to_owned(),
            documentation: Some(Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: entry.doc.to_owned(),
            })),
            parameters: Some(parameters),
            active_parameter: None,
        }],
        active_signature: Some(0),
        active_parameter: Some(argument.min(last)),
    })
}
