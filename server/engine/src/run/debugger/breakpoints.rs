//! The breakpoints a debugger holds: line breakpoints on block lines (with
//! their condition, hit condition and log message), function breakpoints on the
//! suspending calls, and the two exception filters.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use super::vocabulary::BlockLine;

/// The names a function breakpoint may take besides `tool:ALIAS`.
pub const FUNCTION_NAMES: [&str; 7] = [
    "tools.call",
    "models.infer",
    "models.loop",
    "input.ask",
    "call",
    "fanout",
    "jump",
];

/// Why a function breakpoint's name is refused (None: it is accepted).
pub fn function_name_problem(name: &str) -> Option<String> {
    if FUNCTION_NAMES.contains(&name) {
        return None;
    }
    match name.strip_prefix("tool:") {
        Some(alias) if !alias.is_empty() => None,
        _ => Some(format!(
            "not a suspending call: use one of {}, or tool:ALIAS",
            FUNCTION_NAMES.join(", ")
        )),
    }
}

/// When a line breakpoint's hits make it stop (DAP `hitCondition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitCondition {
    /// `N` or `>= N`: from the N-th hit on.
    AtLeast(u64),
    /// `> N`.
    Above(u64),
    /// `== N`: the N-th hit only.
    Exactly(u64),
    /// `% N`: every N-th hit.
    Every(u64),
}

impl HitCondition {
    /// Reads a hit condition: `N`, `>= N`, `> N`, `== N` or `% N` (N ≥ 1); the
    /// error says what it accepts.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (make, number): (fn(u64) -> HitCondition, &str) =
            if let Some(rest) = text.strip_prefix(">=") {
                (HitCondition::AtLeast, rest)
            } else if let Some(rest) = text.strip_prefix("==") {
                (HitCondition::Exactly, rest)
            } else if let Some(rest) = text.strip_prefix('>') {
                (HitCondition::Above, rest)
            } else if let Some(rest) = text.strip_prefix('%') {
                (HitCondition::Every, rest)
            } else {
                (HitCondition::AtLeast, text)
            };
        match number.trim().parse::<u64>() {
            Ok(n) if n >= 1 => Ok(make(n)),
            _ => Err(format!(
                "the hit condition {text:?} is not a count: write N, >= N, > N, == N or % N"
            )),
        }
    }

    /// True when the `hits`-th hit (1-based) stops.
    pub fn stops_at(self, hits: u64) -> bool {
        match self {
            HitCondition::AtLeast(n) => hits >= n,
            HitCondition::Above(n) => hits > n,
            HitCondition::Exactly(n) => hits == n,
            HitCondition::Every(n) => hits.is_multiple_of(n),
        }
    }
}

/// A line breakpoint as the client set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineBreakpoint {
    /// Where it is.
    pub place: BlockLine,
    /// A Lua expression: the breakpoint stops only when it is truthy.
    pub condition: Option<String>,
    /// When its hits make it stop.
    pub hit_condition: Option<HitCondition>,
    /// A logpoint's message (`{expr}` interpolated): output, no stop.
    pub log_message: Option<String>,
}

impl LineBreakpoint {
    /// A plain breakpoint at `place`.
    pub fn at(place: BlockLine) -> Self {
        LineBreakpoint {
            place,
            condition: None,
            hit_condition: None,
            log_message: None,
        }
    }
}

/// The line breakpoints by place, each with its hit count, and the blocks
/// that hold any.
#[derive(Debug, Default)]
pub(super) struct LineBreakpoints {
    by_place: HashMap<BlockLine, (LineBreakpoint, AtomicU64)>,
    blocks: HashSet<usize>,
}

impl LineBreakpoints {
    pub(super) fn new(breakpoints: impl IntoIterator<Item = LineBreakpoint>) -> Self {
        let by_place: HashMap<BlockLine, (LineBreakpoint, AtomicU64)> = breakpoints
            .into_iter()
            .map(|b| (b.place, (b, AtomicU64::new(0))))
            .collect();
        let blocks = by_place.keys().map(|place| place.block).collect();
        LineBreakpoints { by_place, blocks }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_place.is_empty()
    }

    /// The block lines that hold a breakpoint.
    pub(super) fn lines(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_place.keys().map(|place| place.line)
    }

    /// True when a breakpoint is in one of `blocks`.
    pub(super) fn in_any(&self, blocks: &[usize]) -> bool {
        blocks.iter().any(|block| self.blocks.contains(block))
    }

    /// The breakpoint at `place`, if any.
    pub(super) fn at(&self, place: BlockLine) -> Option<LineBreakpoint> {
        self.by_place.get(&place).map(|(b, _)| b.clone())
    }

    /// Counts a hit of the breakpoint at `place` (its condition held) and gives
    /// the count so far, this hit included.
    pub(super) fn count_hit(&self, place: BlockLine) -> u64 {
        self.by_place
            .get(&place)
            .map_or(0, |(_, hits)| hits.fetch_add(1, Ordering::SeqCst) + 1)
    }
}

/// The exception filters a client turned on (`setExceptionBreakpoints`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ExceptionFilters {
    /// Stop where an error is raised that no `pcall` catches: the run error
    /// (or the error a chain raises in its caller when that call is unprotected).
    pub uncaught: bool,
    /// Stop where any error value is raised, caught by `pcall` or not.
    pub raised: bool,
}

impl ExceptionFilters {
    /// The filter ids a client may send.
    pub const UNCAUGHT: &'static str = "uncaught";
    /// The filter id of every raised error.
    pub const RAISED: &'static str = "raised";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_conditions_read_as_the_client_writes_them() {
        assert_eq!(HitCondition::parse("3"), Ok(HitCondition::AtLeast(3)));
        assert_eq!(HitCondition::parse(">= 2"), Ok(HitCondition::AtLeast(2)));
        assert_eq!(HitCondition::parse("> 2"), Ok(HitCondition::Above(2)));
        assert_eq!(HitCondition::parse("==4"), Ok(HitCondition::Exactly(4)));
        assert_eq!(HitCondition::parse("% 2"), Ok(HitCondition::Every(2)));
        assert!(HitCondition::parse("often").is_err());
        assert!(HitCondition::parse("0").is_err());
        let every = HitCondition::Every(2);
        assert_eq!(
            (1..=4).map(|h| every.stops_at(h)).collect::<Vec<_>>(),
            [false, true, false, true]
        );
        assert!(!HitCondition::Exactly(2).stops_at(3));
    }

    #[test]
    fn function_breakpoints_name_the_suspending_calls() {
        assert_eq!(function_name_problem("models.loop"), None);
        assert_eq!(function_name_problem("tool:search"), None);
        assert!(function_name_problem("tool:").is_some());
        assert!(function_name_problem("print").is_some());
    }
}
