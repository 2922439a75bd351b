//! The text format of `promptforge test`: one verdict line per case as soon as it
//! and every earlier one are decided (`ok      FILE: NAME (N ms)`, `FAILED  ...`,
//! `skipped FILE: NAME (live)`; with `--models`, `NAME [MODEL]`), the table of
//! pass rates per case and model (with `--models`), the failures' details, and
//! the closing line.

use std::io::{self, Write};

use indicatif::ProgressBar;

use crate::output::text_line;
use crate::test::matrix::Matrix;
use crate::test::results::{millis, CaseResult, FileResult, Status, Totals};
use crate::test::runner::Observer;

/// The name a test file with problems is reported under, as one failed case.
pub const TEST_FILE_CASE: &str = "(test file)";

/// A verdict line: the status padded to 8 columns, the file, the case and its time.
pub fn verdict_line(file: &str, case: &CaseResult) -> String {
    let mut rate = case
        .runs
        .map_or(String::new(), |rate| format!("{}, ", rate.text()));
    if case.rests_on_cache() {
        rate.push_str(&format!("{}, ", case.cache.text()));
    }
    match case.status {
        Status::Ok => format!(
            "{:<8}{file}: {} ({rate}{} ms)",
            "ok",
            case.label(),
            millis(case.duration)
        ),
        Status::Failed => format!(
            "{:<8}{file}: {} ({rate}{} ms)",
            "FAILED",
            case.label(),
            millis(case.duration)
        ),
        Status::Skipped => format!("{:<8}{file}: {} (live)", "skipped", case.label()),
    }
}

/// The verdict line of a test file that could not run.
pub fn broken_line(file: &str) -> String {
    format!("{:<8}{file}: {TEST_FILE_CASE}", "FAILED")
}

/// The details of every failure, one block per failed case (and per test file with
/// errors), in order: `---- FILE:LINE:COL: NAME ----`, then each failure as
/// `FILE:LINE:COL: ` and its rendering (for a test file, its problems as `check`
/// prints them).
pub fn detail_blocks(files: &[FileResult]) -> Vec<String> {
    let mut blocks = Vec::new();
    for file in files {
        if file.broken {
            let mut block = format!("---- {}: {TEST_FILE_CASE} ----", file.file);
            for problem in &file.problems {
                block.push('\n');
                block.push_str(&text_line(problem));
            }
            blocks.push(block);
        }
        for case in file.cases.iter().filter(|c| c.status == Status::Failed) {
            blocks.push(case_block(&file.file, case));
        }
    }
    blocks
}

/// One failed case's details.
pub fn case_block(file: &str, case: &CaseResult) -> String {
    let (line, column) = case.position;
    let mut block = format!("---- {file}:{line}:{column}: {} ----", case.label());
    for placed in &case.failures {
        block.push('\n');
        block.push_str(&failure_line(file, placed));
    }
    block
}

/// One failure as printed: `FILE:LINE:COL: ` and its rendering (which may continue
/// on further lines).
pub fn failure_line(file: &str, placed: &crate::test::results::Placed) -> String {
    let (line, column) = placed.position;
    format!("{file}:{line}:{column}: {}", placed.failure.render())
}

/// Prints verdict lines as the runner decides them (nothing with `-q`), keeping a
/// progress bar out of their way.
pub struct TextObserver {
    quiet: bool,
    bar: Option<ProgressBar>,
    /// The first write error met.
    pub error: Option<io::Error>,
}

impl TextObserver {
    /// An observer; `quiet` prints no verdict line, `bar` is suspended while printing.
    pub fn new(quiet: bool, bar: Option<ProgressBar>) -> Self {
        TextObserver {
            quiet,
            bar,
            error: None,
        }
    }

    fn print(&mut self, lines: &[String]) {
        if self.quiet || lines.is_empty() || self.error.is_some() {
            return;
        }
        let write = || -> io::Result<()> {
            let mut out = io::stdout().lock();
            for line in lines {
                writeln!(out, "{line}")?;
            }
            out.flush()
        };
        let written = match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        };
        if let Err(error) = written {
            self.error = Some(error);
        }
    }
}

impl Observer for TextObserver {
    fn file(&mut self, file: &FileResult) {
        let lines: Vec<String> = if file.broken {
            vec![broken_line(&file.file)]
        } else {
            // Warnings: the cases still run.
            file.problems.iter().map(text_line).collect()
        };
        self.print(&lines);
    }

    fn case(&mut self, file: &FileResult, case: &CaseResult) {
        self.print(&[verdict_line(&file.file, case)]);
    }
}

/// Writes what follows the verdict lines: with `models` (`--models`) and some
/// live case run on them, a blank line and the table of pass rates; when something failed, a blank line and the
/// detail blocks (separated by blank lines); then the closing line. With `quiet`
/// no verdict line was printed, so no blank line comes first.
pub fn write_end(
    files: &[FileResult],
    models: &[String],
    quiet: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let mut blocks = detail_blocks(files);
    let matrix = Matrix::of(files, models);
    if !matrix.rows.is_empty() {
        blocks.insert(0, matrix.text());
    }
    for (at, block) in blocks.iter().enumerate() {
        if at > 0 || !quiet {
            writeln!(out)?;
        }
        writeln!(out, "{block}")?;
    }
    if !blocks.is_empty() {
        writeln!(out)?;
    }
    writeln!(out, "{}", Totals::of(files).line())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn case(status: Status) -> CaseResult {
        CaseResult {
            name: "counts words".into(),
            model: None,
            position: (3, 5),
            status,
            duration: Duration::from_millis(12),
            seed: 1,
            failures: Vec::new(),
            runs: None,
            cache: Default::default(),
            trace: None,
        }
    }

    #[test]
    fn the_table_of_models_comes_first_and_only_with_live_runs() {
        let end = |case: CaseResult| {
            let files = [FileResult {
                file: "a.test.yaml".into(),
                problems: Vec::new(),
                broken: false,
                cases: vec![case],
            }];
            let mut out = Vec::new();
            write_end(&files, &["m".to_owned()], true, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let mut live = case(Status::Ok);
        live.model = Some("m".into());
        assert_eq!(
            end(live),
            format!(
                "{:<25} | m\na.test.yaml: counts words | 1/1\n\n1 passed, 0 failed\n",
                "case"
            )
        );
        assert_eq!(end(case(Status::Ok)), "1 passed, 0 failed\n");
    }

    #[test]
    fn verdict_lines_pad_the_status_to_eight_columns() {
        assert_eq!(
            verdict_line("a.test.yaml", &case(Status::Ok)),
            "ok      a.test.yaml: counts words (12 ms)"
        );
        assert_eq!(
            verdict_line("a.test.yaml", &case(Status::Failed)),
            "FAILED  a.test.yaml: counts words (12 ms)"
        );
        assert_eq!(
            verdict_line("a.test.yaml", &case(Status::Skipped)),
            "skipped a.test.yaml: counts words (live)"
        );
        assert_eq!(
            broken_line("b.test.yaml"),
            "FAILED  b.test.yaml: (test file)"
        );
    }
}
