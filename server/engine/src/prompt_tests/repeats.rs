//! Repeated live cases (issue 28): `repeat: N` (or `--repeat N`) runs a live
//! case N times, a few at once; `min_pass:` (a share or a count; all runs when
//! absent) decides it. Run `i` (from 0) uses the case's seed plus `i`, so each
//! run has its own nonce and the set repeats. The case fails with its pass
//! rate, then each failed run's failures prefixed with the run's number.

use futures::stream::{self, StreamExt};
use promptforge_syntax::test_file::{Case, MinPass};
use serde::Serialize;

use super::answer_cache::CacheUse;
use super::{messages, run_once, CaseOptions, CaseReport, Failure};
use crate::host::Host;

/// How many runs of one repeated case go at once.
pub const RUNS_AT_ONCE: usize = 4;

/// A repeated case's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PassRate {
    /// Runs that passed.
    pub passed: u64,
    /// Runs made.
    pub runs: u64,
    /// Runs that had to pass.
    pub needed: u64,
}

impl PassRate {
    /// The rate of a case that ran once: `1/1` when it passed, else `0/1`.
    pub fn single(passed: bool) -> PassRate {
        PassRate {
            passed: u64::from(passed),
            runs: 1,
            needed: 1,
        }
    }

    /// The rate as a fraction: `8/10`.
    pub fn fraction(&self) -> String {
        format!("{}/{}", self.passed, self.runs)
    }

    /// The rate as printed: `8/10 runs passed`.
    pub fn text(&self) -> String {
        format!("{} runs passed", self.fraction())
    }
}

/// How many times `case` runs when more than once: a live case's `--repeat`,
/// else its `repeat:` (a scripted case runs once, whatever it says).
pub fn runs_of(case: &Case, options: &CaseOptions) -> Option<u64> {
    if !case.live {
        return None;
    }
    let runs = options
        .repeat
        .or_else(|| case.repeat.as_ref().map(|r| r.value))?;
    (runs > 1).then_some(runs)
}

/// The failed runs whose failures a repeated case's report lists; past them,
/// one line counts the rest, so a case of many failed runs keeps little.
pub const FAILED_RUNS_SHOWN: usize = 10;

/// What a repeated case keeps of its runs as each one ends: the counts, the
/// first failed run's report (else the last run's, to show), and the failures
/// of the first [`FAILED_RUNS_SHOWN`] failed runs. Every other run's report
/// (its log, its trace, its result) is dropped as soon as it is counted.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    shown: Option<CaseReport>,
    failures: Vec<Failure>,
    cache: CacheUse,
}

impl Tally {
    /// Counts run `i` (from 0).
    fn add(mut self, i: u64, report: CaseReport) -> Self {
        self.cache = self.cache.plus(report.cache);
        if report.passed() {
            self.passed += 1;
            if self.failed == 0 {
                self.shown = Some(report);
            }
            return self;
        }
        self.failed += 1;
        if self.failed <= FAILED_RUNS_SHOWN as u64 {
            for failure in &report.failures {
                let mut failure = failure.clone();
                failure.what = format!("run {}: {}", i + 1, failure.what);
                self.failures.push(failure);
            }
        }
        if self.failed == 1 {
            self.shown = Some(report);
        }
        self
    }
}

/// Runs `case` `runs` times and decides it by its `min_pass:`, each run
/// counted as it ends ([`Tally`]).
pub async fn run_repeated(
    base: &Host,
    prompt: &str,
    case: &Case,
    options: CaseOptions,
    seed: u64,
    runs: u64,
) -> CaseReport {
    let started = std::time::Instant::now();
    let tally = stream::iter(0..runs)
        .map(|i| {
            let run = run_once(base, prompt, case, options.clone(), seed.wrapping_add(i));
            async move { (i, run.await) }
        })
        .buffered(RUNS_AT_ONCE)
        .fold(Tally::default(), |tally, (i, report)| async move {
            tally.add(i, report)
        })
        .await;
    let min_pass = case.min_pass.as_ref().map(|m| m.value);
    let needed = min_pass.unwrap_or(MinPass::Count(runs)).needed(runs);
    let passed = tally.passed;
    let rate = PassRate {
        passed,
        runs,
        needed,
    };
    let mut failures = Vec::new();
    if passed < needed {
        let at = case
            .min_pass
            .as_ref()
            .map_or(case.range.clone(), |m| m.range.clone());
        failures.push(
            Failure::new(
                "min_pass",
                messages::pass_rate_too_low(&rate.text(), needed),
            )
            .comparing(format!("{needed} runs"), format!("{passed} runs"))
            .at(Some(at.clone())),
        );
        failures.extend(tally.failures);
        let unshown = tally.failed.saturating_sub(FAILED_RUNS_SHOWN as u64);
        if unshown > 0 {
            failures.push(
                Failure::new(
                    "runs",
                    messages::failed_runs_not_shown(unshown, FAILED_RUNS_SHOWN),
                )
                .at(Some(at)),
            );
        }
    }
    let Some(first) = tally.shown else {
        return run_once(base, prompt, case, options, seed).await;
    };
    CaseReport {
        failures,
        seed,
        duration: started.elapsed(),
        runs: Some(rate),
        cache: tally.cache,
        ..first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_pass_counts_shares_up() {
        assert_eq!(MinPass::Share(700_000).needed(10), 7);
        assert_eq!(MinPass::Share(750_000).needed(10), 8);
        assert_eq!(MinPass::Share(1_000_000).needed(3), 3);
        assert_eq!(MinPass::Count(12).needed(10), 10);
        assert_eq!(MinPass::Count(4).needed(10), 4);
    }
}
