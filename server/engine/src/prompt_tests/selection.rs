//! Which cases a test run runs (`testing.md`): `--filter TEXT` (names containing
//! it), `--shard I/N` (the I-th of N stable parts) and live cases (skipped unless
//! `--live`).

use super::messages;

/// One part of N: `--shard I/N`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, 1 to `count`.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// Reads `I/N` with `1 <= I <= N`; the error is the usage message.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || messages::bad_shard(text);
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// For each case `(file, case name)`, whether this shard runs it: the cases are
    /// ordered by file path, then name, then their place, and dealt to the N parts in
    /// turn, so the parts differ in size by one at most and every case is in exactly
    /// one part, the same one on every machine.
    pub fn holds(&self, cases: &[(&str, &str)]) -> Vec<bool> {
        let mut order: Vec<usize> = (0..cases.len()).collect();
        order.sort_by(|&a, &b| cases.get(a).cmp(&cases.get(b)).then(a.cmp(&b)));
        let mut held = vec![false; cases.len()];
        let count = self.count as usize;
        let wanted = self.index.saturating_sub(1) as usize;
        for (rank, &at) in order.iter().enumerate() {
            if rank % count == wanted {
                if let Some(slot) = held.get_mut(at) {
                    *slot = true;
                }
            }
        }
        held
    }
}

/// What `promptforge test` was asked to run.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--filter TEXT`: only cases whose name contains it.
    pub filter: Option<String>,
    /// `--shard I/N`.
    pub shard: Option<Shard>,
    /// `--live`: run live cases instead of skipping them.
    pub live: bool,
}

/// What becomes of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// It runs.
    Run,
    /// A live case without `--live`: counted as skipped.
    Skip,
    /// Not selected (the filter or another shard): not mentioned at all.
    Leave,
}

impl Selection {
    /// The choice for each case `(file, case name, live)`, in the order given.
    pub fn choose(&self, cases: &[(&str, &str, bool)]) -> Vec<Choice> {
        let keys: Vec<(&str, &str)> = cases.iter().map(|&(file, name, _)| (file, name)).collect();
        let in_shard = match &self.shard {
            Some(shard) => shard.holds(&keys),
            None => vec![true; cases.len()],
        };
        cases
            .iter()
            .zip(in_shard)
            .map(|(&(_, name, live), in_shard)| {
                let filtered = self.filter.as_deref().is_some_and(|f| !name.contains(f));
                if filtered || !in_shard {
                    Choice::Leave
                } else if live && !self.live {
                    Choice::Skip
                } else {
                    Choice::Run
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_read_one_based() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "1/0", "x/2", "3", ""] {
            assert_eq!(
                Shard::parse(bad).unwrap_err(),
                format!("--shard takes I/N with 1 <= I <= N, got `{bad}`")
            );
        }
    }

    #[test]
    fn every_case_is_in_exactly_one_shard_and_parts_are_even() {
        let names: Vec<String> = (0..23).map(|i| format!("case {i}")).collect();
        let cases: Vec<(&str, &str)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                (
                    if i % 2 == 0 {
                        "a.test.yaml"
                    } else {
                        "b.test.yaml"
                    },
                    n.as_str(),
                )
            })
            .collect();
        let parts: Vec<Vec<bool>> = (1..=4)
            .map(|index| Shard { index, count: 4 }.holds(&cases))
            .collect();
        for case in 0..cases.len() {
            assert_eq!(parts.iter().filter(|p| p[case]).count(), 1, "case {case}");
        }
        let sizes: Vec<usize> = parts
            .iter()
            .map(|p| p.iter().filter(|&&b| b).count())
            .collect();
        assert_eq!(sizes, [6, 6, 6, 5]);
    }

    #[test]
    fn the_filter_leaves_and_live_cases_skip() {
        let selection = Selection {
            filter: Some("word".into()),
            ..Default::default()
        };
        let cases = [
            ("f", "counts words", false),
            ("f", "other", false),
            ("f", "word live", true),
        ];
        assert_eq!(
            selection.choose(&cases),
            [Choice::Run, Choice::Leave, Choice::Skip]
        );
        let live = Selection {
            live: true,
            ..Default::default()
        };
        assert_eq!(live.choose(&cases)[2], Choice::Run);
    }
}
