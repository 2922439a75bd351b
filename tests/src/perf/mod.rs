//! The benchmark table of the whole product (`cargo run --release -p
//! promptforge-tests --bin bench-table`): memory per open document, keystroke
//! latency, `check` throughput and peak memory, start-up, `run` and `test`, each
//! measured on the real binary as a user or an editor drives it, printed as one
//! table and compared with the figures committed in `tests/bench-baseline.json`.

mod editor;
pub mod process;
pub mod workloads;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::Scratch;
use process::{best_of, cost};

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Time, memory: less is better.
    Lower,
    /// Throughput: more is better.
    Higher,
}

/// One measured figure of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Stable key, as in the baseline file.
    pub key: &'static str,
    /// What was measured, as the table prints it.
    pub label: &'static str,
    /// The value, in `unit`.
    pub value: f64,
    /// `ms`, `KiB`, `MiB`, `MB/s`.
    pub unit: &'static str,
    /// Which way it improves.
    pub better: Better,
}

/// How much work each measure does.
#[derive(Debug, Clone, Copy)]
pub struct Effort {
    /// Keystrokes per latency measure.
    pub keystrokes: usize,
    /// Repetitions of each whole-process measure (the best counts).
    pub repeats: usize,
}

impl Effort {
    /// The contributor's run: enough samples for a stable p99.
    pub const FULL: Effort = Effort {
        keystrokes: 1000,
        repeats: 5,
    };
    /// CI's quick run: fewer samples, same workloads.
    pub const QUICK: Effort = Effort {
        keystrokes: 200,
        repeats: 2,
    };
}

/// The open-document counts of the memory measure.
const DOCUMENT_COUNTS: [usize; 4] = [1, 10, 100, 300];
/// Lines of each open document of the memory measure.
const DOCUMENT_LINES: usize = 412;
/// Lines of the prompt the keystrokes edit.
const EDITED_LINES: usize = 4012;

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Measures every figure of the table with `program` (a `promptforge` binary).
pub fn measure(program: &Path, effort: Effort) -> Vec<Figure> {
    let mut figures = Vec::new();
    let mut push = |key, label, value, unit, better| {
        figures.push(Figure {
            key,
            label,
            value,
            unit,
            better,
        })
    };

    let memory = editor::memory_by_documents(program, DOCUMENT_LINES, &DOCUMENT_COUNTS);
    let kib = |count: usize| memory.iter().find(|(c, _)| *c == count).map_or(0, |m| m.1);
    for (key, label, count) in [
        ("rss_1_doc", "RSS, 1 document of 412 lines open", 1),
        ("rss_100_docs", "RSS, 100 documents open", 100),
        ("rss_300_docs", "RSS, 300 documents open", 300),
    ] {
        push(key, label, kib(count) as f64 / 1024.0, "MiB", Better::Lower);
    }
    let slope = (kib(300) as f64 - kib(1) as f64) / 299.0;
    push(
        "rss_per_doc",
        "RSS per open document (slope 1 -> 300)",
        slope,
        "KiB",
        Better::Lower,
    );

    for (full, keys) in [
        (false, ["ranged_p50", "ranged_p99"]),
        (true, ["full_p50", "full_p99"]),
    ] {
        let mut samples = editor::keystrokes(program, EDITED_LINES, effort.keystrokes, full);
        let labels = if full {
            [
                "keystroke -> diagnostics, 4,012 lines, full sync, p50",
                "same, full sync, p99",
            ]
        } else {
            [
                "keystroke -> diagnostics, 4,012 lines, ranged edit, p50",
                "same, ranged edit, p99",
            ]
        };
        for (i, p) in [0.5, 0.99].into_iter().enumerate() {
            let value = ms(editor::percentile(&mut samples, p));
            push(keys[i], labels[i], value, "ms", Better::Lower);
        }
    }

    let start = (0..effort.repeats)
        .map(|_| editor::start_up(program, EDITED_LINES))
        .min_by_key(|s| s.first_diagnostics)
        .expect("at least one repeat");
    push(
        "initialize",
        "start -> initialize answered",
        ms(start.initialize),
        "ms",
        Better::Lower,
    );
    push(
        "cold_start",
        "start -> first diagnostics, 4,012 lines",
        ms(start.first_diagnostics),
        "ms",
        Better::Lower,
    );

    let scratch = Scratch::new("bench-table");
    for (mib, keys, labels) in [
        (
            1,
            ["check_1mib_rate", "check_1mib_peak"],
            ["check of a 1 MiB prompt", "same, peak RSS"],
        ),
        (
            10,
            ["check_10mib_rate", "check_10mib_peak"],
            ["check of a 10 MiB prompt", "same, peak RSS"],
        ),
    ] {
        let text = workloads::prompt_of_bytes(mib << 20);
        let name = format!("big{mib}.md");
        scratch.write(&name, &text);
        let repeats = if mib == 1 { effort.repeats } else { 1 };
        let run = best_of(repeats, || {
            cost(program, scratch.path(), &["check", &name], &[0, 1])
        });
        let rate = text.len() as f64 / 1e6 / run.wall.as_secs_f64();
        push(keys[0], labels[0], rate, "MB/s", Better::Higher);
        push(
            keys[1],
            labels[1],
            run.peak_kib as f64 / 1024.0,
            "MiB",
            Better::Lower,
        );
    }

    for i in 0..1000 {
        scratch.write(&format!("many/p{i}.md"), workloads::SMALL_PROMPT);
    }
    let run = best_of(effort.repeats, || {
        cost(program, scratch.path(), &["check", "many"], &[0])
    });
    push(
        "check_1000",
        "check of 1,000 small prompts",
        ms(run.wall),
        "ms",
        Better::Lower,
    );

    scratch.write("words/words.md", workloads::SMALL_PROMPT);
    let run = best_of(effort.repeats, || {
        cost(
            program,
            scratch.path(),
            &["run", "words/words.md", "the quick brown fox"],
            &[0],
        )
    });
    push(
        "run_lua",
        "run of a pure-Lua prompt",
        ms(run.wall),
        "ms",
        Better::Lower,
    );

    scratch.write("words/words.test.yaml", workloads::small_prompt_tests(200));
    let run = best_of(effort.repeats, || {
        cost(program, scratch.path(), &["test", "words"], &[0])
    });
    push(
        "test_200",
        "200 prompt-test cases",
        ms(run.wall),
        "ms",
        Better::Lower,
    );
    figures
}

/// Figure by figure, the better of two measures of the same table.
pub fn best(first: &[Figure], second: &[Figure]) -> Vec<Figure> {
    first
        .iter()
        .map(|a| {
            let Some(b) = second.iter().find(|b| b.key == a.key) else {
                return a.clone();
            };
            let b_better = match a.better {
                Better::Lower => b.value < a.value,
                Better::Higher => b.value > a.value,
            };
            if b_better {
                b.clone()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// The figures as a Markdown table (what the contributor reads and pastes).
pub fn table(figures: &[Figure]) -> String {
    let mut out = String::from("| measure | value |\n| --- | --- |\n");
    for figure in figures {
        let digits = if figure.value < 10.0 { 2 } else { 1 };
        let _ = writeln!(
            out,
            "| {} | {:.*} {} |",
            figure.label, digits, figure.value, figure.unit
        );
    }
    out
}

/// The figures as a baseline file: a JSON object from key to value.
pub fn baseline_json(figures: &[Figure]) -> String {
    let map: BTreeMap<&str, f64> = figures.iter().map(|f| (f.key, f.value)).collect();
    serde_json::to_string_pretty(&map).expect("numbers serialise") + "\n"
}

/// Each figure more than `factor` times worse than its baseline value (a
/// figure without a baseline, or a baseline key no figure has, is a problem
/// too: the file must follow the table).
pub fn regressions(figures: &[Figure], baseline: &serde_json::Value, factor: f64) -> Vec<String> {
    let mut problems = Vec::new();
    for figure in figures {
        let Some(base) = baseline.get(figure.key).and_then(serde_json::Value::as_f64) else {
            problems.push(format!("{}: no baseline value", figure.key));
            continue;
        };
        let worse = match figure.better {
            Better::Lower => figure.value > base * factor,
            Better::Higher => figure.value * factor < base,
        };
        if worse {
            problems.push(format!(
                "{} ({}): {:.2} {} against a baseline of {:.2} {} (more than {factor}x worse)",
                figure.key, figure.label, figure.value, figure.unit, base, figure.unit
            ));
        }
    }
    if let Some(keys) = baseline.as_object() {
        for key in keys.keys() {
            if !figures.iter().any(|f| f.key == key) {
                problems.push(format!("{key}: in the baseline but not measured"));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn figure(key: &'static str, value: f64, better: Better) -> Figure {
        Figure {
            key,
            label: key,
            value,
            unit: "ms",
            better,
        }
    }

    #[test]
    fn a_figure_twice_as_bad_is_a_regression_and_within_is_not() {
        let baseline = json!({ "t": 10.0, "r": 20.0 });
        let fine = [
            figure("t", 19.9, Better::Lower),
            figure("r", 10.1, Better::Higher),
        ];
        assert!(regressions(&fine, &baseline, 2.0).is_empty());
        let slow = [
            figure("t", 20.1, Better::Lower),
            figure("r", 9.9, Better::Higher),
        ];
        let problems = regressions(&slow, &baseline, 2.0);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("t (t): 20.10 ms against a baseline of 10.00 ms"));
    }

    #[test]
    fn the_best_of_two_measures_takes_each_figure_its_own_way() {
        let first = [
            figure("t", 5.0, Better::Lower),
            figure("r", 5.0, Better::Higher),
        ];
        let second = [
            figure("t", 4.0, Better::Lower),
            figure("r", 4.0, Better::Higher),
        ];
        let values: Vec<f64> = best(&first, &second).iter().map(|f| f.value).collect();
        assert_eq!(values, [4.0, 5.0]);
    }

    #[test]
    fn the_baseline_and_the_table_must_name_the_same_figures() {
        let baseline = json!({ "gone": 1.0 });
        let problems = regressions(&[figure("new", 1.0, Better::Lower)], &baseline, 2.0);
        assert_eq!(
            problems,
            [
                "new: no baseline value",
                "gone: in the baseline but not measured"
            ]
        );
    }

    #[test]
    fn generated_prompts_have_the_asked_size() {
        let text = workloads::prompt_of_lines(412);
        assert!(
            (403..=412).contains(&text.lines().count()),
            "{}",
            text.lines().count()
        );
        assert!(workloads::prompt_of_bytes(1 << 20).len() >= 1 << 20);
        let line = workloads::middle_block_line(4012) as usize;
        let lines: Vec<_> = workloads::prompt_of_lines(4012)
            .lines()
            .map(str::to_owned)
            .collect();
        assert!(lines[line].starts_with("local page = "), "{}", lines[line]);
    }
}
