//! `promptforge test --models A,B`: each live case runs once per Host model
//! named (its labels all resolved to it), and the pass rates are laid out as a
//! table, one row per live case and one column per model. Scripted cases run
//! once, as without the flag, and are not in the table.

use std::collections::BTreeMap;

use promptforge_engine::prompt_tests::repeats::PassRate;

use crate::test::hosts::PinnedHost;
use crate::test::results::FileResult;
use crate::test::runner::PlannedCase;

/// The header of the table's first column.
const CASE_COLUMN: &str = "case";

/// After a rate that rests on answers a cache gave.
const CACHED_MARK: &str = "*";

/// Under a table with some rate marked [`CACHED_MARK`].
pub const CACHED_NOTE: &str = "* rests on answers reused from the cache";

/// Checks the names of `--models`; the error is the usage message.
pub fn check_names(models: &[String]) -> Result<(), String> {
    for (at, name) in models.iter().enumerate() {
        if name.trim().is_empty() {
            return Err("--models: a model name is empty".to_owned());
        }
        if models[..at].contains(name) {
            return Err(format!("--models: \"{name}\" is named twice"));
        }
    }
    Ok(())
}

/// `planned` once per model of `pinned` when it is a live case, else as it is
/// (a scripted case, or no `--models`).
pub fn per_model(planned: PlannedCase, pinned: &[PinnedHost]) -> Vec<PlannedCase> {
    if !planned.case.live || pinned.is_empty() {
        return vec![planned];
    }
    pinned
        .iter()
        .map(|model| PlannedCase {
            case: planned.case.clone(),
            runs: planned.runs,
            name: planned.name.clone(),
            position: planned.position,
            seed: planned.seed,
            model: Some(model.clone()),
        })
        .collect()
}

/// The pass rates of the live cases, per model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    /// The models, in the order of `--models`.
    pub models: Vec<String>,
    /// One row per live case that ran, in file order, then case order.
    pub rows: Vec<Row>,
}

/// One live case's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The test file, as printed.
    pub file: String,
    /// The case's name.
    pub case: String,
    /// Its pass rate on each model (None: it did not run on it), and whether
    /// it rests on answers a cache gave.
    pub rates: Vec<Option<(PassRate, bool)>>,
}

impl Matrix {
    /// The table of `files`' results over `models`.
    pub fn of(files: &[FileResult], models: &[String]) -> Matrix {
        let mut rows = Vec::new();
        for file in files {
            // Cases by their place in the file: one row each, whatever its name.
            let mut by_case: BTreeMap<(u32, u32), Row> = BTreeMap::new();
            for case in &file.cases {
                let Some(model) = &case.model else { continue };
                let Some(column) = models.iter().position(|m| m == model) else {
                    continue;
                };
                let row = by_case.entry(case.position).or_insert_with(|| Row {
                    file: file.file.clone(),
                    case: case.name.clone(),
                    rates: vec![None; models.len()],
                });
                row.rates[column] = case.pass_rate().map(|r| (r, case.rests_on_cache()));
            }
            rows.extend(by_case.into_values());
        }
        Matrix {
            models: models.to_vec(),
            rows,
        }
    }

    /// The table as text: a header `case | A | B`, then one line per case,
    /// `FILE: NAME | 1/1 | 0/1` (`-` where it did not run; `1/1*` where the
    /// rate rests on cached answers, and [`CACHED_NOTE`] under the table),
    /// columns padded.
    pub fn text(&self) -> String {
        let mut lines: Vec<Vec<String>> = vec![std::iter::once(CASE_COLUMN.to_owned())
            .chain(self.models.iter().cloned())
            .collect()];
        for row in &self.rows {
            let rates = row.rates.iter().map(|rate| match rate {
                None => "-".to_owned(),
                Some((rate, false)) => rate.fraction(),
                Some((rate, true)) => format!("{}{CACHED_MARK}", rate.fraction()),
            });
            lines.push(
                std::iter::once(format!("{}: {}", row.file, row.case))
                    .chain(rates)
                    .collect(),
            );
        }
        let widths: Vec<usize> = (0..=self.models.len())
            .map(|column| {
                lines
                    .iter()
                    .map(|cells| cells[column].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut table = lines
            .iter()
            .map(|cells| {
                let padded: Vec<String> = cells
                    .iter()
                    .zip(&widths)
                    .map(|(cell, width)| format!("{cell:<width$}"))
                    .collect();
                padded.join(" | ").trim_end().to_owned()
            })
            .collect::<Vec<_>>();
        let cached = self
            .rows
            .iter()
            .flat_map(|r| &r.rates)
            .any(|r| matches!(r, Some((_, true))));
        if cached {
            table.push(CACHED_NOTE.to_owned());
        }
        table.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        let names = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(check_names(&names(&["a", "b"])), Ok(()));
        assert_eq!(
            check_names(&names(&["a", "b", "a"])),
            Err("--models: \"a\" is named twice".to_owned())
        );
        assert_eq!(
            check_names(&names(&["a", ""])),
            Err("--models: a model name is empty".to_owned())
        );
    }

    #[test]
    fn the_table_pads_its_columns() {
        let matrix = Matrix {
            models: vec!["right".into(), "wrong-model".into()],
            rows: vec![
                Row {
                    file: "a.test.yaml".into(),
                    case: "knows the capital".into(),
                    rates: vec![
                        Some((PassRate::single(true), false)),
                        Some((PassRate::single(false), false)),
                    ],
                },
                Row {
                    file: "a.test.yaml".into(),
                    case: "x".into(),
                    rates: vec![
                        Some((
                            PassRate {
                                passed: 7,
                                runs: 10,
                                needed: 7,
                            },
                            false,
                        )),
                        None,
                    ],
                },
            ],
        };
        assert_eq!(
            matrix.text(),
            "case                           | right | wrong-model\n\
             a.test.yaml: knows the capital | 1/1   | 0/1\n\
             a.test.yaml: x                 | 7/10  | -"
        );
    }

    #[test]
    fn a_rate_on_cached_answers_is_marked_and_noted() {
        let matrix = Matrix {
            models: vec!["m".into()],
            rows: vec![Row {
                file: "a.test.yaml".into(),
                case: "x".into(),
                rates: vec![Some((PassRate::single(true), true))],
            }],
        };
        assert_eq!(
            matrix.text(),
            "case           | m\n\
             a.test.yaml: x | 1/1*\n\
             * rests on answers reused from the cache"
        );
    }
}
