//! Measurements of the language server over stdio, as an editor drives it:
//! start-up, memory per open document, and keystroke to diagnostics.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::process::resident_kib;
use super::workloads::{middle_block_line, prompt_of_lines};
use crate::lsp_client::{range, uri, LspClient};

/// Start-up: spawn to the `initialize` answer, and spawn to the first
/// diagnostics of a prompt of `lines` lines.
pub struct StartUp {
    /// Spawn to the `initialize` response.
    pub initialize: Duration,
    /// Spawn to the first `publishDiagnostics` of the opened prompt.
    pub first_diagnostics: Duration,
}

/// Starts the server and opens one prompt of `lines` lines.
pub fn start_up(program: &Path, lines: usize) -> StartUp {
    let text = prompt_of_lines(lines);
    let started = Instant::now();
    let mut client = LspClient::start_binary(program, &[]);
    client.initialize(json!({}));
    let initialize = started.elapsed();
    let doc = uri("start.md");
    client.open(&doc, 1, &text);
    let diagnostics = client.diagnostics(&doc, 1);
    let first_diagnostics = started.elapsed();
    assert!(
        diagnostics.is_empty(),
        "the generated prompt is clean: {diagnostics:?}"
    );
    StartUp {
        initialize,
        first_diagnostics,
    }
}

/// The server's resident memory (KiB) with each count of open documents of
/// `lines` lines, opened in order (each count's figure taken once that many are
/// open and analysed).
pub fn memory_by_documents(program: &Path, lines: usize, counts: &[usize]) -> Vec<(usize, u64)> {
    let text = prompt_of_lines(lines);
    let mut client = LspClient::start_binary(program, &[]);
    client.initialize(json!({}));
    let mut open = 0;
    let mut figures = Vec::new();
    for &count in counts {
        while open < count {
            let doc = uri(&format!("doc{open}.md"));
            client.open(&doc, 1, &text);
            open += 1;
            if open == count {
                client.diagnostics(&doc, 1);
            }
        }
        // Let the server settle (deferred work after publishing) before reading.
        std::thread::sleep(Duration::from_millis(200));
        client.notifications.clear();
        figures.push((count, resident_kib(client.pid())));
    }
    figures
}

/// Keystroke to diagnostics on a prompt of `lines` lines: `edits` keystrokes
/// that type then delete one character in a Lua block near the middle, sent as
/// ranged changes (`full` false) or as the whole new text (`full` true). Returns
/// each keystroke's time from `didChange` sent to its diagnostics received.
pub fn keystrokes(program: &Path, lines: usize, edits: usize, full: bool) -> Vec<Duration> {
    let text = prompt_of_lines(lines);
    let mut client = LspClient::start_binary(program, &[]);
    client.initialize(json!({}));
    let doc = uri("keys.md");
    client.open(&doc, 1, &text);
    client.diagnostics(&doc, 1);
    let line = middle_block_line(lines);
    let line_start = text
        .split_inclusive('\n')
        .take(line as usize)
        .map(str::len)
        .sum::<usize>();
    let mut typed = text.clone();
    typed.insert(line_start + 6, 'x');
    let mut samples = Vec::with_capacity(edits);
    for i in 0..edits {
        let version = i as i64 + 2;
        let insert = i % 2 == 0;
        let change = if full {
            json!([{ "text": if insert { &typed } else { &text } }])
        } else if insert {
            json!([{ "range": range(line, 6, line, 6), "text": "x" }])
        } else {
            json!([{ "range": range(line, 6, line, 7), "text": "" }])
        };
        let sent = Instant::now();
        client.change(&doc, version, change);
        client.diagnostics(&doc, version);
        samples.push(sent.elapsed());
        client.notifications.clear();
    }
    samples
}

/// The `p`-quantile (0 to 1) of `samples`, nearest rank.
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at]
}
