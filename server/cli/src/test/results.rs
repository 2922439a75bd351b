//! What a test run found, as every output format prints it: per test file its
//! problems and its cases, per case its verdict and its failures, each placed at a
//! 1-based line and column (in characters) of the test file.

use std::ops::Range;
use std::time::Duration;

use promptforge_engine::prompt_tests::answer_cache::CacheUse;
use promptforge_engine::prompt_tests::repeats::PassRate;
use promptforge_engine::prompt_tests::Failure;
use promptforge_syntax::LineIndex;

use crate::problem::Problem;

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every expectation held.
    Ok,
    /// Some expectation failed.
    Failed,
    /// A live case, run only with `--live`.
    Skipped,
}

impl Status {
    /// The status as the JSON format writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
        }
    }
}

/// A failure and where it is printed.
#[derive(Debug, Clone)]
pub struct Placed {
    /// The failure.
    pub failure: Failure,
    /// 1-based line and column: the failure's own place, else its case's.
    pub position: (u32, u32),
}

/// One case's verdict.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// The `--models` model it ran on (None: the prompt's own labels).
    pub model: Option<String>,
    /// 1-based line and column of the case in its test file.
    pub position: (u32, u32),
    /// How it ended.
    pub status: Status,
    /// How long it ran (zero when skipped).
    pub duration: Duration,
    /// The seed it ran with (would run with, when skipped).
    pub seed: u64,
    /// Its failures, in the runner's order.
    pub failures: Vec<Placed>,
    /// A repeated live case's pass rate.
    pub runs: Option<PassRate>,
    /// The answers its runs got and how many a cache gave (`--cache`).
    pub cache: CacheUse,
    /// The trace of a failed case's run, when `--trace` asked for traces.
    pub trace: Option<Box<promptforge_engine::trace::Trace>>,
}

impl CaseResult {
    /// The case's pass rate: a repeated case's, else `1/1` or `0/1` (None when
    /// it was skipped).
    pub fn pass_rate(&self) -> Option<PassRate> {
        match self.status {
            Status::Skipped => None,
            status => Some(
                self.runs
                    .unwrap_or_else(|| PassRate::single(status == Status::Ok)),
            ),
        }
    }

    /// True when the verdict rests on some answer a cache gave rather than a
    /// model asked now.
    pub fn rests_on_cache(&self) -> bool {
        self.cache.reused > 0
    }

    /// The case's name as printed: with the `--models` model it ran on in
    /// brackets, `knows the capital [gpt]`.
    pub fn label(&self) -> String {
        match &self.model {
            Some(model) => format!("{} [{model}]", self.name),
            None => self.name.clone(),
        }
    }
}

/// One test file's part of the run.
#[derive(Debug, Clone)]
pub struct FileResult {
    /// The file's path as printed.
    pub file: String,
    /// The file's own problems (warnings, or the errors that kept its cases from running).
    pub problems: Vec<Problem>,
    /// True when the file has errors: it counts as one failure and ran no case.
    pub broken: bool,
    /// Its cases that ran or were skipped, in file order.
    pub cases: Vec<CaseResult>,
}

impl FileResult {
    /// The file's counts.
    pub fn totals(&self) -> Totals {
        let mut totals = Totals::default();
        if self.broken {
            totals.failed += 1;
        }
        for case in &self.cases {
            match case.status {
                Status::Ok => totals.passed += 1,
                Status::Failed => totals.failed += 1,
                Status::Skipped => totals.skipped += 1,
            }
        }
        totals
    }

    /// How long its cases ran, added up.
    pub fn duration(&self) -> Duration {
        self.cases.iter().map(|c| c.duration).sum()
    }
}

/// Passed, failed and skipped counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed, and test files that could not run.
    pub failed: usize,
    /// Live cases skipped.
    pub skipped: usize,
}

impl Totals {
    /// The counts of every file.
    pub fn of(files: &[FileResult]) -> Totals {
        files
            .iter()
            .map(FileResult::totals)
            .fold(Totals::default(), |a, b| Totals {
                passed: a.passed + b.passed,
                failed: a.failed + b.failed,
                skipped: a.skipped + b.skipped,
            })
    }

    /// The closing line: `N passed, N failed`, and `, N skipped` when some were.
    pub fn line(&self) -> String {
        let mut line = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            line.push_str(&format!(", {} skipped", self.skipped));
        }
        line
    }
}

/// Where byte `range` of a test file's `text` starts, 1-based.
pub fn position(text: &str, index: &LineIndex, range: &Range<usize>) -> (u32, u32) {
    index.position(text, range.start)
}

/// Milliseconds of a duration, saturated.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_mentions_skips_only_when_some() {
        let mut totals = Totals {
            passed: 3,
            failed: 1,
            skipped: 0,
        };
        assert_eq!(totals.line(), "3 passed, 1 failed");
        totals.skipped = 2;
        assert_eq!(totals.line(), "3 passed, 1 failed, 2 skipped");
    }
}
