//! The chains of a debugged run as DAP threads: their ids and names, what each
//! is asked to do next (pause, a step), and the mailbox of a paused one, through
//! which the front end asks it questions and resumes it.

use std::collections::BTreeMap;
use std::sync::mpsc;

use tokio::sync::oneshot;

use super::vocabulary::{Answer, ChainKind, Query, StepKind, StopReason};

/// A step the client asked of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PendingStep {
    /// Shared by the chains a step into a `call` or `fanout` reaches: the first
    /// of them to stop ends the step for all.
    pub token: u64,
    pub kind: StepKind,
    /// The stack depth where the step started.
    pub depth: usize,
}

/// What a paused thread is told.
pub(super) enum Order {
    /// Answer a question about the paused state.
    Query(Query, oneshot::Sender<Answer>),
    /// Go on, with a step or without.
    Resume(Option<StepKind>),
}

/// One chain of the run.
pub(super) struct ThreadEntry {
    pub kind: ChainKind,
    /// The heading of the section the chain runs now, as written (`## Go`).
    pub section: String,
    /// The chain that started this one and its stack depth at the start.
    pub parent: Option<(i64, usize)>,
    /// A stop wanted at the thread's next line (a pause, the entry).
    pub wanted: Option<StopReason>,
    pub step: Option<PendingStep>,
    /// Set while the thread is paused.
    pub mailbox: Option<mpsc::Sender<Order>>,
}

impl ThreadEntry {
    /// The name the client shows: the kind of chain and its section.
    pub fn name(&self) -> String {
        let kind = self.kind.describe();
        if self.section.is_empty() {
            kind
        } else {
            format!("{kind}: {}", self.section)
        }
    }
}

/// Every live chain, by id (1 is the walk).
#[derive(Default)]
pub(super) struct Threads {
    next_id: i64,
    next_token: u64,
    pub entries: BTreeMap<i64, ThreadEntry>,
}

impl Threads {
    /// Registers a chain; a step into a new chain (`stepIn` on a `call` or a
    /// `fanout` line) reaches it from its parent.
    pub fn start(&mut self, parent: Option<(i64, usize)>, kind: ChainKind, section: String) -> i64 {
        self.next_id += 1;
        let inherited = parent
            .and_then(|(p, _)| self.entries.get(&p))
            .and_then(|p| p.step)
            .filter(|step| step.kind == StepKind::Into)
            .map(|step| PendingStep { depth: 0, ..step });
        self.entries.insert(
            self.next_id,
            ThreadEntry {
                kind,
                section,
                parent,
                wanted: None,
                step: inherited,
                mailbox: None,
            },
        );
        self.next_id
    }

    /// Removes a chain that ended. A step over or out of it that did not stop
    /// inside goes on in its parent, as a step over the line that started it.
    pub fn end(&mut self, id: i64) {
        let Some(entry) = self.entries.remove(&id) else {
            return;
        };
        let (Some(step), Some((parent, depth))) = (entry.step, entry.parent) else {
            return;
        };
        if step.kind == StepKind::Into {
            return;
        }
        let token = self.token();
        if let Some(parent) = self.entries.get_mut(&parent) {
            parent.step = Some(PendingStep {
                token,
                kind: StepKind::Over,
                depth,
            });
        }
    }

    /// A fresh step token.
    pub fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    /// Ends the step `token` on every thread (one of them stopped).
    pub fn end_step(&mut self, token: u64) {
        for entry in self.entries.values_mut() {
            if entry.step.is_some_and(|s| s.token == token) {
                entry.step = None;
            }
        }
    }

    /// The thread `id` and every chain it started, directly or not.
    pub fn with_descendants(&self, id: i64) -> Vec<i64> {
        let mut found = vec![id];
        let mut at = 0;
        while let Some(&current) = found.get(at) {
            for (&child, entry) in &self.entries {
                if entry.parent.is_some_and(|(p, _)| p == current) && !found.contains(&child) {
                    found.push(child);
                }
            }
            at += 1;
        }
        found
    }

    /// True when any thread waits for a pause or a step.
    pub fn any_pending(&self) -> bool {
        self.entries
            .values()
            .any(|e| e.wanted.is_some() || e.step.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_into_reaches_a_new_chain_and_a_step_over_returns_to_the_parent() {
        let mut threads = Threads::default();
        let walk = threads.start(None, ChainKind::Walk, "## Go".into());
        let token = threads.token();
        threads.entries.get_mut(&walk).unwrap().step = Some(PendingStep {
            token,
            kind: StepKind::Into,
            depth: 3,
        });
        let arm = threads.start(Some((walk, 3)), ChainKind::Arm(2), "### Arm".into());
        assert_eq!(threads.entries[&arm].step.map(|s| s.token), Some(token));
        assert_eq!(threads.entries[&arm].name(), "fanout arm 2: ### Arm");
        threads.end_step(token);
        assert!(!threads.any_pending());

        threads.entries.get_mut(&arm).unwrap().step = Some(PendingStep {
            token: 9,
            kind: StepKind::Out,
            depth: 1,
        });
        threads.end(arm);
        let step = threads.entries[&walk].step.unwrap();
        assert_eq!((step.kind, step.depth), (StepKind::Over, 3));
        assert_eq!(threads.with_descendants(walk), vec![walk]);
    }
}
