//! Where a document registers local tools (`tools.add_local`), for the static
//! checks of `tools.call` and `tools.calls` reads: may a local tool visible
//! from a caller have a given alias? A caller sees the registrations of its
//! own blocks and of the shared library; a shared block sees every one.
//!
//! A registration under a computed alias, or a block the analysis did not read
//! ([`crate::read_budget`]), may register any alias: such callers are kept in a
//! sorted list, one entry each, and looked up by binary search. A 10 MiB prompt
//! has 50,000 blocks not read, and a list of every registration with its caller
//! weighed 2 MiB and was searched from start to end for each unbound name.

use std::sync::Arc;

use promptforge_syntax::sections::{Caller, Sections};

use crate::lua_facts::LuaFacts;

/// The local tools a document registers, by where they run.
#[derive(Debug, Default)]
pub struct LocalTools<'a> {
    /// Literal aliases with the key of their caller, sorted.
    named: Vec<(usize, &'a str)>,
    /// The literal aliases alone, sorted (what a shared block sees).
    names: Vec<&'a str>,
    /// The keys of the callers that may register any alias, sorted, once each.
    any_alias: Vec<usize>,
}

/// The sort key of a caller: the H1 pass, the shared library, then the
/// sections in document order.
fn key(caller: Caller) -> usize {
    match caller {
        Caller::H1 => 0,
        Caller::Shared => 1,
        Caller::Section(index) => index.saturating_add(2),
    }
}

impl<'a> LocalTools<'a> {
    /// The registrations of the blocks whose facts are `facts` (indexed like the
    /// document's blocks, whose callers `sections` knows).
    pub fn new(sections: &Sections, facts: &'a [Arc<LuaFacts>]) -> Self {
        Self::from_registrations(facts.iter().enumerate().flat_map(|(index, block)| {
            let caller = sections.caller_of_block(index);
            let unread = block.unread.map(|_| (caller, None));
            registered(block)
                .map(move |alias| (caller, alias))
                .chain(unread)
        }))
    }

    /// From each registration's caller and literal alias (None: any alias).
    pub(crate) fn from_registrations(all: impl Iterator<Item = (Caller, Option<&'a str>)>) -> Self {
        let mut tools = LocalTools::default();
        for (caller, alias) in all {
            match alias {
                Some(alias) => tools.named.push((key(caller), alias)),
                None => tools.any_alias.push(key(caller)),
            }
        }
        tools.named.sort_unstable();
        tools.names = tools.named.iter().map(|&(_, name)| name).collect();
        tools.names.sort_unstable();
        tools.any_alias.sort_unstable();
        tools.any_alias.dedup();
        tools.any_alias.shrink_to_fit();
        tools
    }

    /// True when a local tool registered where `caller` can see it may be
    /// named `name`.
    pub fn in_scope(&self, caller: Caller, name: &str) -> bool {
        if caller == Caller::Shared {
            return !self.any_alias.is_empty() || self.names.binary_search(&name).is_ok();
        }
        [key(caller), key(Caller::Shared)].into_iter().any(|at| {
            self.any_alias.binary_search(&at).is_ok()
                || self.named.binary_search(&(at, name)).is_ok()
        })
    }
}

/// The literal alias of each `tools.add_local` call of a block (None for a
/// computed one), in order.
pub fn registered(block: &LuaFacts) -> impl Iterator<Item = Option<&str>> {
    block
        .calls
        .iter()
        .filter(|c| c.callee == "tools.add_local")
        .map(|c| c.first_string().map(|l| l.value.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_for_tests, FactsCache};
    use proptest::prelude::*;

    /// The registrations of a prompt's text.
    fn check(text: &str, probe: impl FnOnce(&LocalTools<'_>, &Sections)) {
        let analysis = parse_for_tests(text);
        let sections = Sections::new(&analysis.document);
        let facts = FactsCache::default().shared(text, &analysis.document.lua_blocks);
        probe(&LocalTools::new(&sections, &facts), &sections);
    }

    const PROMPT: &str = "---\npromptforge: 0\n---\n\n# T\n\n```lua shared\ntools.add_local('lib', 'd', {}, function() end)\n```\n\n## A\n\n```lua\ntools.add_local('a', 'd', {}, function() end)\n```\n\n## B\n\n```lua\ntools.add_local(name, 'd', {}, function() end)\n```\n\n## C\n\n```lua\nx = 1\n```\n";

    #[test]
    fn a_section_sees_its_own_and_the_shared_librarys_registrations() {
        check(PROMPT, |tools, _| {
            let (a, c) = (Caller::Section(0), Caller::Section(2));
            assert!(tools.in_scope(a, "a"));
            assert!(tools.in_scope(a, "lib"));
            assert!(!tools.in_scope(c, "a"));
            assert!(tools.in_scope(c, "lib"));
            assert!(!tools.in_scope(Caller::H1, "a"));
        });
    }

    #[test]
    fn a_computed_alias_may_be_any_name_in_its_section_only() {
        check(PROMPT, |tools, _| {
            assert!(tools.in_scope(Caller::Section(1), "anything"));
            assert!(!tools.in_scope(Caller::Section(2), "anything"));
        });
    }

    #[test]
    fn a_shared_block_sees_every_registration() {
        check(PROMPT, |tools, _| {
            assert!(tools.in_scope(Caller::Shared, "a"));
            // Section B registers a computed alias: a shared block, replayed in
            // every section, may see it under any name.
            assert!(tools.in_scope(Caller::Shared, "anything"));
        });
        let literal_only = PROMPT.replace("add_local(name,", "add_local('b',");
        check(&literal_only, |tools, _| {
            assert!(tools.in_scope(Caller::Shared, "b"));
            assert!(!tools.in_scope(Caller::Shared, "anything"));
        });
    }

    #[test]
    fn callers_that_may_register_any_alias_are_kept_once_each() {
        let text = PROMPT.replace(
            "add_local(name, 'd', {}, function() end)",
            "add_local(name, 'd', {}, f)\ntools.add_local(other, 'd', {}, f)",
        );
        check(&text, |tools, _| {
            assert_eq!(tools.any_alias, vec![key(Caller::Section(1))]);
        });
    }

    /// What the lists answer, as one pass over every registration would.
    fn in_scope_by_scan(all: &[(Caller, Option<&str>)], caller: Caller, name: &str) -> bool {
        all.iter().any(|(c, alias)| {
            let visible = *c == caller || *c == Caller::Shared || caller == Caller::Shared;
            visible && alias.is_none_or(|alias| alias == name)
        })
    }

    fn caller() -> impl Strategy<Value = Caller> {
        prop_oneof![
            Just(Caller::H1),
            Just(Caller::Shared),
            (0usize..4).prop_map(Caller::Section),
        ]
    }

    const NAMES: [&str; 3] = ["a", "b", "c"];

    proptest! {
        #[test]
        fn the_lists_answer_as_a_scan_of_every_registration(
            all in proptest::collection::vec(
                (caller(), proptest::option::weighted(0.8, 0usize..3)), 0..8),
            asked in caller(),
            name in 0usize..3,
        ) {
            let all: Vec<(Caller, Option<&str>)> =
                all.into_iter().map(|(c, n)| (c, n.map(|n| NAMES[n]))).collect();
            let tools = LocalTools::from_registrations(all.iter().copied());
            prop_assert_eq!(
                tools.in_scope(asked, NAMES[name]),
                in_scope_by_scan(&all, asked, NAMES[name])
            );
        }
    }
}
