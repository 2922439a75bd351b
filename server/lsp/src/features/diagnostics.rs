//! `textDocument/publishDiagnostics`: every syntax problem, then every static
//! Lua check problem, then every prepare problem against the Host's catalog
//! ([`crate::catalog::problems`]) and the Lua uses of slots it leaves unbound
//! ([`crate::catalog::unbound`]), with exact ranges, a severity, a stable code
//! and related information.

use std::ops::Range;

use tower_lsp::lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
};

use crate::catalog::problems::{self, Severity};
use crate::catalog::unbound;
use crate::catalog::DocCatalog;
use crate::snapshot::Snapshot;

/// The `source` of every diagnostic the server publishes.
pub const SOURCE: &str = "promptforge";

/// The diagnostics of a snapshot against its catalog; none for a document that is
/// not a prompt.
pub fn diagnostics(snapshot: &Snapshot, catalog: &DocCatalog) -> Vec<Diagnostic> {
    if !snapshot.is_prompt {
        return Vec::new();
    }
    let positions = snapshot.positions();
    // The other places of a two-place problem, as the protocol's related information.
    let related = |places: &mut dyn Iterator<Item = (&Range<usize>, &String)>| {
        places
            .map(|(range, message)| DiagnosticRelatedInformation {
                location: Location::new(snapshot.uri.clone(), positions.range(range)),
                message: message.clone(),
            })
            .collect::<Vec<_>>()
    };
    let mut out: Vec<Diagnostic> = snapshot
        .analysis
        .diagnostics
        .iter()
        .map(|d| {
            diagnostic(
                positions.range(&d.range),
                d.kind.as_str(),
                d.message.clone(),
                related(&mut d.related.iter().map(|r| (&r.range, &r.message))),
            )
        })
        .collect();
    out.extend(snapshot.model().problems.iter().map(|p| {
        diagnostic(
            positions.range(&p.range),
            p.code,
            p.message.clone(),
            related(&mut p.related.iter().map(|(range, message)| (range, message))),
        )
    }));
    if let Some(frontmatter) = &snapshot.analysis.document.frontmatter {
        out.extend(
            problems::problems(frontmatter, catalog)
                .into_iter()
                .map(|p| {
                    let places =
                        related(&mut p.related.iter().map(|(range, message)| (range, message)));
                    let mut found =
                        diagnostic(positions.range(&p.range), p.code, p.message, places);
                    if p.severity == Severity::Warning {
                        found.severity = Some(DiagnosticSeverity::WARNING);
                    }
                    found
                }),
        );
        let unbound = unbound::problems(frontmatter, snapshot.model(), catalog);
        out.extend(
            unbound
                .into_iter()
                .map(|p| diagnostic(positions.range(&p.range), p.code, p.message, Vec::new())),
        );
    }
    out
}

fn diagnostic(
    range: tower_lsp::lsp_types::Range,
    code: &str,
    message: String,
    related: Vec<DiagnosticRelatedInformation>,
) -> Diagnostic {
    Diagnostic {
        range,
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String(code.to_owned())),
        source: Some(SOURCE.to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}
