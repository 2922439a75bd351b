//! Prints the benchmark table of the product, measured on the release binary
//! (or the one `PROMPTFORGE_BENCH_BIN` names).
//!
//! `cargo run --release -p promptforge-tests --bin bench-table -- [--quick]
//! [--compare tests/bench-baseline.json] [--write FILE]`: `--quick` takes fewer
//! samples (CI), `--compare` exits 1 when a figure is more than twice as bad as
//! the file's (a figure that is gets one second measure, and the better of the
//! two counts, so one noisy sample on a busy machine does not fail CI),
//! `--write` saves the figures as a new baseline.

use std::path::PathBuf;
use std::process::ExitCode;

use promptforge_tests::perf::{baseline_json, best, measure, regressions, table, Effort};

fn main() -> ExitCode {
    let mut effort = Effort::FULL;
    let (mut compare, mut write) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => effort = Effort::QUICK,
            "--compare" => compare = args.next().map(PathBuf::from),
            "--write" => write = args.next().map(PathBuf::from),
            other => {
                eprintln!("bench-table: unknown argument {other:?} (expected --quick, --compare FILE, --write FILE)");
                return ExitCode::from(2);
            }
        }
    }
    let program = std::env::var_os("PROMPTFORGE_BENCH_BIN")
        .map_or_else(promptforge_tests::release_binary, PathBuf::from);
    eprintln!("measuring {}", program.display());
    let figures = measure(&program, effort);
    print!("{}", table(&figures));
    if let Some(path) = write {
        if let Err(error) = std::fs::write(&path, baseline_json(&figures)) {
            eprintln!("bench-table: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if let Some(path) = compare {
        let baseline = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        let Some(baseline) = baseline else {
            eprintln!(
                "bench-table: {} is not a readable JSON baseline",
                path.display()
            );
            return ExitCode::from(2);
        };
        let mut problems = regressions(&figures, &baseline, 2.0);
        if !problems.is_empty() {
            eprintln!(
                "{} figure(s) more than 2x worse: measuring again",
                problems.len()
            );
            let again = best(&figures, &measure(&program, effort));
            print!("{}", table(&again));
            problems = regressions(&again, &baseline, 2.0);
        }
        if !problems.is_empty() {
            eprintln!("regressions against {}:", path.display());
            for problem in &problems {
                eprintln!("  {problem}");
            }
            return ExitCode::from(1);
        }
        eprintln!("no figure is more than 2x worse than {}", path.display());
    }
    ExitCode::SUCCESS
}
