//! The module graph of a crate, read from its sources: which file module names
//! which (`use` trees and paths), and the circles in it. The module-graph
//! tests (`tests/tests/module_graph.rs` for every crate, `module_layers.rs` for
//! the engine's run) are built on it.

use std::collections::{BTreeMap, BTreeSet};

mod scan;

pub use scan::{edges_of, graph, Edge, Module};

/// The graph seen one level at a time: each import between two modules neither
/// of which holds the other becomes one between the two children of their
/// closest common parent that hold them (`features::execute_command` naming
/// `run::prompt` is `features` naming `run`), keeping where it was written; an
/// import between a module and one inside it is dropped (a parent declares and
/// re-exports its children, a child uses its parent's items). Siblings whose
/// subtrees import each other in a circle then show as a circle here, even when
/// no two files do.
pub fn between_siblings(edges: &[Edge]) -> Vec<Edge> {
    let mut lifted = Vec::new();
    for edge in edges {
        let from: Vec<&str> = edge.from.split("::").collect();
        let to: Vec<&str> = edge.to.split("::").collect();
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue;
        }
        lifted.push(Edge {
            from: from[..=common].join("::"),
            to: to[..=common].join("::"),
            at: edge.at.clone(),
        });
    }
    lifted
}

/// The graph's circles: each strongly connected component of two or more modules
/// (its modules, sorted) with one shortest cycle through its first module.
pub fn circles(edges: &[Edge]) -> Vec<(Vec<String>, Vec<String>)> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for edge in edges {
        next.entry(&edge.from).or_default().insert(&edge.to);
        next.entry(&edge.to).or_default();
    }
    // Tarjan's strongly connected components.
    struct State<'a> {
        next: &'a BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        components: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let next = s.next;
        for &w in next.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let mut state = State {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for &v in next.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    let mut found = Vec::new();
    for component in state.components.iter().filter(|c| c.len() > 1) {
        let members: BTreeSet<&str> = component.iter().copied().collect();
        let Some(&start) = members.iter().next() else {
            continue;
        };
        // Breadth first from `start` back to it, inside the component.
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        while let Some(v) = queue.pop_front() {
            for &w in next.get(v).into_iter().flatten() {
                if !members.contains(w) {
                    continue;
                }
                if w == start {
                    closing = Some(v);
                    queue.clear();
                    break;
                }
                if !came_from.contains_key(w) {
                    came_from.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        let mut cycle = vec![start.to_owned()];
        let mut v = closing.unwrap_or(start);
        let mut back = Vec::new();
        while v != start {
            back.push(v.to_owned());
            v = came_from.get(v).copied().unwrap_or(start);
        }
        cycle.extend(back.into_iter().rev());
        cycle.push(start.to_owned());
        found.push((members.iter().map(|m| (*m).to_owned()).collect(), cycle));
    }
    found
}
