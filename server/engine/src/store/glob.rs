//! `store.list` patterns: `*` within a segment, `**` across segments (`**/` also
//! matches no folder at all), everything else itself. A pattern is compiled once
//! and matched by simulating its automaton over the path, so a match costs at most
//! (path length × pattern length) steps whatever the pattern: no backtracking.

/// The longest `store.list` pattern, in bytes (the longest store path).
pub const MAX_PATTERN_BYTES: usize = super::MAX_PATH_BYTES;

/// One piece of a compiled pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// A character that matches itself.
    Literal(char),
    /// `*`: any run of characters other than `/`.
    Star,
    /// `**`: any run of characters.
    AnyRun,
    /// The start of `**/`, which reads nothing: it goes on either past the
    /// `**/` (no folder at all) or into the `**` and `/` tokens that follow it.
    Folders,
}

/// A compiled `store.list` pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    tokens: Vec<Token>,
}

impl Pattern {
    /// Compiles `pattern`; None when it is longer than [`MAX_PATTERN_BYTES`].
    pub fn new(pattern: &str) -> Option<Pattern> {
        if pattern.len() > MAX_PATTERN_BYTES {
            return None;
        }
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::with_capacity(chars.len());
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            if c != '*' {
                tokens.push(Token::Literal(c));
                i += 1;
            } else if chars.get(i + 1) != Some(&'*') {
                tokens.push(Token::Star);
                i += 1;
            } else if chars.get(i + 2) == Some(&'/') {
                tokens.extend([Token::Folders, Token::AnyRun, Token::Literal('/')]);
                i += 3;
            } else {
                tokens.push(Token::AnyRun);
                i += 2;
            }
        }
        Some(Pattern { tokens })
    }

    /// True when `path` matches the whole pattern.
    pub fn matches(&self, path: &str) -> bool {
        let states = self.tokens.len() + 1;
        let mut current = vec![false; states];
        let mut next = vec![false; states];
        current[0] = true;
        self.close(&mut current);
        for c in path.chars() {
            next.iter_mut().for_each(|s| *s = false);
            let mut any = false;
            for (state, token) in self.tokens.iter().enumerate() {
                if !current[state] {
                    continue;
                }
                let (stay, advance) = match *token {
                    Token::Literal(l) => (false, l == c),
                    Token::Star => (c != '/', false),
                    Token::AnyRun => (true, false),
                    Token::Folders => (false, false),
                };
                if stay {
                    next[state] = true;
                }
                if advance {
                    next[state + 1] = true;
                }
                any |= stay || advance;
            }
            if !any {
                return false;
            }
            self.close(&mut next);
            std::mem::swap(&mut current, &mut next);
        }
        current[self.tokens.len()]
    }

    /// Adds the states reachable without reading a character: every wildcard may
    /// match nothing.
    fn close(&self, states: &mut [bool]) {
        // Every edge without a character goes forward, so one pass in order is enough.
        for (state, token) in self.tokens.iter().enumerate() {
            if !states[state] {
                continue;
            }
            match token {
                Token::Literal(_) => {}
                Token::Star | Token::AnyRun => states[state + 1] = true,
                Token::Folders => {
                    states[state + 1] = true;
                    if let Some(past) = states.get_mut(state + 3) {
                        *past = true;
                    }
                }
            }
        }
    }
}

/// Matches a store path against a pattern (see the module's rules); a pattern
/// over the length limit matches nothing.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    Pattern::new(pattern).is_some_and(|p| p.matches(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules() {
        assert!(glob_match("*", "a.md"));
        assert!(!glob_match("*", "a/b.md"));
        assert!(glob_match("**", "a/b.md"));
        assert!(glob_match("**", ""));
        assert!(glob_match("a/**/c", "a/c"));
        assert!(glob_match("a/**/c", "a/b/x/c"));
        assert!(!glob_match("a/**/c", "a/bc"));
        assert!(glob_match("**/*.md", "x.md"));
        assert!(glob_match("**/*.md", "a/b/x.md"));
        assert!(!glob_match("**/*.md", "a/b/x.txt"));
        assert!(glob_match("a*z", "abcz"));
        assert!(glob_match("a*z", "az"));
        assert!(!glob_match("a*z", "ab/cz"));
        assert!(glob_match("a**z", "ab/cz"));
        assert!(!glob_match("a.md", "b.md"));
        assert!(!glob_match("a.md", "a.mdx"));
        assert!(glob_match("notes/*", "notes/a.md"));
        assert!(!glob_match("notes/*", "notes/deep/b.md"));
        assert!(glob_match("é*", "éa"));
    }

    #[test]
    fn a_pattern_over_the_limit_is_refused() {
        assert!(Pattern::new(&"a".repeat(MAX_PATTERN_BYTES)).is_some());
        assert!(Pattern::new(&"a".repeat(MAX_PATTERN_BYTES + 1)).is_none());
    }

    #[test]
    fn a_pathological_pattern_is_linear() {
        // `*a` twelve times then `b`: exponential for a backtracking matcher.
        let pattern = Pattern::new(&format!("{}b", "*a".repeat(12))).unwrap();
        let path = "a".repeat(1000);
        assert!(!pattern.matches(&path));
        let pattern = Pattern::new(&format!("{}b", "**a".repeat(300))).unwrap();
        assert!(!pattern.matches(&"a/".repeat(500)));
    }
}
