//! Reading a crate's sources: the file modules, and the modules each file
//! names (`use` trees, and paths through `crate::`, `super::`, `self::` or a
//! child module). Comments, strings and characters name nothing; what an inline
//! module (`mod tests { .. }`) names counts for its file.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// One token of Rust source with its line: an identifier, `::` or one punctuation
/// character. Comments, strings, characters and lifetimes are dropped.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

fn tokens(source: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || c == 'b')
            && (at(i + 1) == '"'
                || (at(i + 1) == '#' && c == 'r')
                || (c == 'b' && at(i + 1) == 'r' && (at(i + 2) == '"' || at(i + 2) == '#')))
        {
            // r"..", r#".."#, b"..", br#".."#.
            let mut j = i + 1;
            if c == 'b' && at(j) == 'r' {
                j += 1;
            }
            let raw = c == 'r' || at(i + 1) == 'r';
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                // `r#ident` (a raw identifier) or plain `r`/`b`.
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                let d = chars[j];
                if d == '\n' {
                    line += 1;
                }
                if !raw && d == '\\' {
                    j += 2;
                    continue;
                }
                if d == '"' && (0..hashes).all(|h| at(j + 1 + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal, or a lifetime (dropped either way).
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), line));
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric()
                || at(i) == '_'
                || at(i) == '.' && at(i + 1).is_ascii_digit()
            {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Reads one `use` tree starting at `*i`, adding every full path it names to `out`.
fn use_tree(toks: &[(Tok, usize)], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match toks.get(*i).map(|t| &t.0) {
            Some(Tok::PathSep) => *i += 1,
            Some(Tok::Ident(name)) if name != "as" => {
                path.push(name.clone());
                *i += 1;
                if toks.get(*i).map(|t| &t.0) != Some(&Tok::PathSep) {
                    break;
                }
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                break;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                while let Some((tok, _)) = toks.get(*i) {
                    match tok {
                        Tok::Punct('}') => {
                            *i += 1;
                            break;
                        }
                        Tok::Punct(',') => *i += 1,
                        _ => {
                            let before = *i;
                            use_tree(toks, i, path.clone(), out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
                return;
            }
            _ => break,
        }
    }
    if toks.get(*i).map(|t| &t.0) == Some(&Tok::Ident("as".to_owned())) {
        *i += 2;
    }
    if path.last().map(String::as_str) == Some("self") {
        path.pop();
    }
    out.push(path);
}

/// A module of the graph: its path from the crate root (`run::tools::dispatch`)
/// and its file.
#[derive(Debug, Clone)]
pub struct Module {
    /// The path, from the crate root down.
    pub path: String,
    /// The source file.
    pub file: PathBuf,
}

/// The file modules under `dir`, which holds the module `path` (empty: the
/// crate root, whose own `lib.rs` or `main.rs` is not a module of the graph).
fn modules_in(dir: &Path, path: &str, out: &mut Vec<Module>) {
    let join = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}::{name}")
        }
    };
    let mut entries: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(error) => panic!("{} cannot be read: {error}", dir.display()),
    };
    entries.sort();
    for entry in entries {
        let Some(name) = entry
            .file_stem()
            .and_then(|n| n.to_str())
            .map(str::to_owned)
        else {
            continue;
        };
        if entry.is_dir() {
            modules_in(&entry, &join(&name), out);
        } else if entry.extension().is_some_and(|e| e == "rs") {
            let root = path.is_empty() && (name == "lib" || name == "main");
            if root || (path.is_empty() && name == "mod") {
                continue;
            }
            let module = if name == "mod" {
                path.to_owned()
            } else {
                join(&name)
            };
            out.push(Module {
                path: module,
                file: entry,
            });
        }
    }
}

/// One import: the module that names, the module named, and where.
#[derive(Debug, Clone)]
pub struct Edge {
    /// The module whose file names the other.
    pub from: String,
    /// The module named.
    pub to: String,
    /// `file:line` of the naming.
    pub at: String,
}

/// The modules of `known` that `source` (the file of `module`) names.
pub fn edges_of(module: &str, source: &str, known: &BTreeSet<String>, file: &str) -> Vec<Edge> {
    let toks = tokens(source);
    let own: Vec<String> = module.split("::").map(str::to_owned).collect();
    // Inline modules (`mod tests { .. }`): their paths resolve from inside them, and
    // what they name counts for the file.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut found: Vec<(Vec<String>, Vec<String>, usize)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let current = || {
            let mut c = own.clone();
            c.extend(inline.iter().map(|(n, _)| n.clone()));
            c
        };
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d > depth) {
                    inline.pop();
                }
                i += 1;
            }
            Tok::Ident(word) if word == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    depth += 1;
                    inline.push((name.clone(), depth));
                    i += 3;
                } else {
                    i += 2;
                }
            }
            Tok::Ident(word) if word == "use" => {
                let line = toks[i].1;
                i += 1;
                let mut paths = Vec::new();
                use_tree(&toks, &mut i, Vec::new(), &mut paths);
                let current = current();
                found.extend(paths.into_iter().map(|p| (current.clone(), p, line)));
            }
            Tok::Ident(first) if toks.get(i + 1).map(|t| &t.0) == Some(&Tok::PathSep) => {
                let preceded = i > 0 && toks[i - 1].0 == Tok::PathSep;
                let line = toks[i].1;
                let mut path = vec![first.clone()];
                i += 1;
                while toks.get(i).map(|t| &t.0) == Some(&Tok::PathSep) {
                    match toks.get(i + 1).map(|t| &t.0) {
                        Some(Tok::Ident(next)) => {
                            path.push(next.clone());
                            i += 2;
                        }
                        _ => break,
                    }
                }
                if !preceded {
                    found.push((current(), path, line));
                }
            }
            _ => i += 1,
        }
    }
    let mut edges = Vec::new();
    for (current, path, line) in found {
        let Some(full) = resolve(&current, &path, known) else {
            continue;
        };
        let Some(to) = (1..=full.len())
            .rev()
            .map(|n| full[..n].join("::"))
            .find(|candidate| known.contains(candidate))
        else {
            continue;
        };
        let duplicate = edges
            .last()
            .is_some_and(|e: &Edge| e.to == to && e.at == format!("{file}:{line}"));
        if to != module && !duplicate {
            edges.push(Edge {
                from: module.to_owned(),
                to,
                at: format!("{file}:{line}"),
            });
        }
    }
    edges
}

/// The crate path a path written in module `current` names, when it starts at the
/// crate root, at `super`/`self`, or at a child module of `current`.
fn resolve(current: &[String], path: &[String], known: &BTreeSet<String>) -> Option<Vec<String>> {
    let first = path.first()?;
    let full = match first.as_str() {
        "crate" => path[1..].to_vec(),
        "super" => {
            let mut base = current.to_vec();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            base
        }
        "self" => {
            let mut base = current.to_vec();
            base.extend(path[1..].iter().cloned());
            base
        }
        child => {
            let mut base = current.to_vec();
            base.push(child.to_owned());
            if !known.contains(&base.join("::")) {
                return None;
            }
            base.extend(path[1..].iter().cloned());
            base
        }
    };
    (!full.is_empty()).then_some(full)
}

/// Every file module of the crate whose sources are in `src` (its `src/`
/// folder) and every import between them.
pub fn graph(src: &Path) -> (Vec<Module>, Vec<Edge>) {
    let mut modules = Vec::new();
    modules_in(src, "", &mut modules);
    let known: BTreeSet<String> = modules.iter().map(|m| m.path.clone()).collect();
    let mut edges = Vec::new();
    for module in &modules {
        let source = fs::read_to_string(&module.file)
            .unwrap_or_else(|e| panic!("{} cannot be read: {e}", module.file.display()));
        let file = module
            .file
            .strip_prefix(src)
            .unwrap_or(&module.file)
            .display()
            .to_string();
        edges.extend(edges_of(&module.path, &source, &known, &file));
    }
    (modules, edges)
}
