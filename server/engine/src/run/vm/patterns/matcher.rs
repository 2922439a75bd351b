//! The matching machine of Lua 5.4 patterns (`lstrlib.c`), on bytes, with a step
//! count: every [`CHECK_EVERY`] steps it asks its check closure whether to go on.
//!
//! Positions are byte offsets into the subject; reading past the end of the
//! subject or the pattern gives `0`, as Lua's terminating `'\0'` does.

/// Most captures in one pattern (`LUA_MAXCAPTURES`).
pub const MAX_CAPTURES: usize = 32;

/// Deepest nesting of the matcher (`MAXCCALLS`).
const MAX_DEPTH: usize = 200;

/// Steps between two calls of the check closure.
pub const CHECK_EVERY: u32 = 1000;

const ESC: u8 = b'%';

/// The bytes that make a pattern more than a plain string (`SPECIALS`).
pub const SPECIALS: &[u8] = b"^$*+?.([%-";

/// What a capture holds so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    /// Opened, not yet closed.
    Unfinished,
    /// A position capture `()`.
    Position,
    /// A closed capture of that many bytes.
    Bytes(usize),
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    start: usize,
    length: Length,
}

/// One capture's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// The bytes `start..end` of the subject.
    Text(usize, usize),
    /// A position capture: the 1-based position.
    Position(usize),
}

/// The state of one search: the subject, the pattern (its anchor already taken
/// off), the captures, the nesting depth and the step count.
pub struct Matcher<'a> {
    src: &'a [u8],
    pat: &'a [u8],
    depth: usize,
    level: usize,
    slots: [Slot; MAX_CAPTURES],
    steps: u32,
    check: &'a mut dyn FnMut() -> mlua::Result<()>,
}

/// An error of the string library itself (a malformed pattern, a bad argument):
/// raised to Lua as a message with the caller's position, as `luaL_error` does.
#[derive(Debug, Clone)]
pub struct LibError(pub String);

impl std::fmt::Display for LibError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LibError {}

/// A [`LibError`] as an mlua error.
pub fn fail(message: &str) -> mlua::Error {
    mlua::Error::external(LibError(message.to_owned()))
}

/// Whether byte `c` is in the class letter `class` (`%a`, `%D`, ...); any other
/// letter stands for itself.
pub fn class_matches(c: u8, class: u8) -> bool {
    let hit = match class.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'g' => c.is_ascii_graphic(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        b's' => matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'),
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        b'z' => c == 0,
        _ => return class == c,
    };
    if class.is_ascii_lowercase() {
        hit
    } else {
        !hit
    }
}

impl<'a> Matcher<'a> {
    /// A matcher of `pat` (without its `^`) against `src`; `check` is called every
    /// [`CHECK_EVERY`] steps, starting `steps` into the count.
    pub fn new(
        src: &'a [u8],
        pat: &'a [u8],
        steps: u32,
        check: &'a mut dyn FnMut() -> mlua::Result<()>,
    ) -> Self {
        Matcher {
            src,
            pat,
            depth: MAX_DEPTH,
            level: 0,
            slots: [Slot {
                start: 0,
                length: Length::Unfinished,
            }; MAX_CAPTURES],
            steps,
            check,
        }
    }

    /// The steps counted since the last check (to carry over to the next search).
    pub fn pending_steps(&self) -> u32 {
        self.steps
    }

    /// The subject bytes `a..b` (empty when out of range).
    pub fn slice(&self, a: usize, b: usize) -> &'a [u8] {
        self.src.get(a..b).unwrap_or_default()
    }

    /// The subject's length.
    pub fn subject_len(&self) -> usize {
        self.src.len()
    }

    /// Counts `n` steps, checking every [`CHECK_EVERY`].
    pub fn step(&mut self, n: u32) -> mlua::Result<()> {
        self.steps = self.steps.saturating_add(n);
        while self.steps >= CHECK_EVERY {
            self.steps -= CHECK_EVERY;
            (self.check)()?;
        }
        Ok(())
    }

    fn p(&self, i: usize) -> u8 {
        self.pat.get(i).copied().unwrap_or(0)
    }

    fn s(&self, i: usize) -> u8 {
        self.src.get(i).copied().unwrap_or(0)
    }

    /// Tries a match starting at `s`; `Some(end)` on success. Captures are reset.
    pub fn find_at(&mut self, s: usize) -> mlua::Result<Option<usize>> {
        self.depth = MAX_DEPTH;
        self.level = 0;
        self.do_match(s, 0)
    }

    /// How many captures the last match made.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Capture `i` of a match `s..e` (`get_onecapture`): with no captures, index 0
    /// is the whole match.
    pub fn capture(&self, i: usize, s: usize, e: usize) -> mlua::Result<Capture> {
        if i >= self.level {
            if i != 0 {
                return Err(fail(&format!("invalid capture index %{}", i + 1)));
            }
            return Ok(Capture::Text(s, e));
        }
        let slot = self
            .slots
            .get(i)
            .copied()
            .ok_or_else(|| fail("invalid capture index"))?;
        match slot.length {
            Length::Unfinished => Err(fail("unfinished capture")),
            Length::Position => Ok(Capture::Position(slot.start + 1)),
            Length::Bytes(n) => Ok(Capture::Text(slot.start, slot.start + n)),
        }
    }

    /// All captures of a match `s..e` (`push_captures`): the whole match when the
    /// pattern has none and `whole` is set.
    pub fn captures(&self, s: usize, e: usize, whole: bool) -> mlua::Result<Vec<Capture>> {
        let n = if self.level == 0 && whole {
            1
        } else {
            self.level
        };
        (0..n).map(|i| self.capture(i, s, e)).collect()
    }

    /// The end of the single-character class starting at pattern index `p`.
    fn class_end(&self, mut p: usize) -> mlua::Result<usize> {
        let c = self.p(p);
        p += 1;
        match c {
            ESC => {
                if p >= self.pat.len() {
                    return Err(fail("malformed pattern (ends with '%')"));
                }
                Ok(p + 1)
            }
            b'[' => {
                if self.p(p) == b'^' {
                    p += 1;
                }
                loop {
                    if p >= self.pat.len() {
                        return Err(fail("malformed pattern (missing ']')"));
                    }
                    let c = self.p(p);
                    p += 1;
                    if c == ESC && p < self.pat.len() {
                        p += 1;
                    }
                    if self.p(p) == b']' {
                        break;
                    }
                }
                Ok(p + 1)
            }
            _ => Ok(p),
        }
    }

    /// Whether `c` is in the set `[...]` starting at `p` and closed at `close`.
    fn in_set(&self, c: u8, mut p: usize, close: usize) -> bool {
        let mut yes = true;
        if self.p(p + 1) == b'^' {
            yes = false;
            p += 1;
        }
        loop {
            p += 1;
            if p >= close {
                return !yes;
            }
            let here = self.p(p);
            if here == ESC {
                p += 1;
                if class_matches(c, self.p(p)) {
                    return yes;
                }
            } else if self.p(p + 1) == b'-' && p + 2 < close {
                p += 2;
                if here <= c && c <= self.p(p) {
                    return yes;
                }
            } else if here == c {
                return yes;
            }
        }
    }

    /// Whether the subject byte at `s` matches the class `p..ep`.
    fn single(&self, s: usize, p: usize, ep: usize) -> bool {
        let Some(&c) = self.src.get(s) else {
            return false;
        };
        match self.p(p) {
            b'.' => true,
            ESC => class_matches(c, self.p(p + 1)),
            b'[' => self.in_set(c, p, ep.saturating_sub(1)),
            other => other == c,
        }
    }

    fn balance(&mut self, s: usize, p: usize) -> mlua::Result<Option<usize>> {
        if p + 1 >= self.pat.len() {
            return Err(fail("malformed pattern (missing arguments to '%b')"));
        }
        let (open, close) = (self.p(p), self.p(p + 1));
        if s >= self.src.len() || self.s(s) != open {
            return Ok(None);
        }
        let mut depth = 1usize;
        let mut i = s + 1;
        while let Some(&c) = self.src.get(i) {
            if c == close {
                depth -= 1;
                if depth == 0 {
                    self.step(((i - s) / 64) as u32)?;
                    return Ok(Some(i + 1));
                }
            } else if c == open {
                depth += 1;
            }
            i += 1;
        }
        self.step(((i - s) / 64) as u32)?;
        Ok(None)
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> mlua::Result<Option<usize>> {
        let mut n = 0usize;
        while self.single(s + n, p, ep) {
            n += 1;
            self.step(1)?;
        }
        loop {
            self.step(1)?;
            if let Some(end) = self.do_match(s + n, ep + 1)? {
                return Ok(Some(end));
            }
            if n == 0 {
                return Ok(None);
            }
            n -= 1;
        }
    }

    fn min_expand(&mut self, mut s: usize, p: usize, ep: usize) -> mlua::Result<Option<usize>> {
        loop {
            self.step(1)?;
            if let Some(end) = self.do_match(s, ep + 1)? {
                return Ok(Some(end));
            }
            if self.single(s, p, ep) {
                s += 1;
            } else {
                return Ok(None);
            }
        }
    }

    fn start_capture(&mut self, s: usize, p: usize, length: Length) -> mlua::Result<Option<usize>> {
        let level = self.level;
        let Some(slot) = self.slots.get_mut(level) else {
            return Err(fail("too many captures"));
        };
        *slot = Slot { start: s, length };
        self.level = level + 1;
        let result = self.do_match(s, p)?;
        if result.is_none() {
            self.level -= 1;
        }
        Ok(result)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> mlua::Result<Option<usize>> {
        let open = (0..self.level)
            .rev()
            .find(|&l| self.slots.get(l).map(|x| x.length) == Some(Length::Unfinished))
            .ok_or_else(|| fail("invalid pattern capture"))?;
        let start = self.slots.get(open).map(|x| x.start).unwrap_or(s);
        self.set_length(open, Length::Bytes(s.saturating_sub(start)));
        let result = self.do_match(s, p)?;
        if result.is_none() {
            self.set_length(open, Length::Unfinished);
        }
        Ok(result)
    }

    fn set_length(&mut self, index: usize, length: Length) {
        if let Some(slot) = self.slots.get_mut(index) {
            slot.length = length;
        }
    }

    /// A back-reference `%1`..`%9` at `s`: the end of the repeated text.
    fn back_reference(&mut self, s: usize, digit: u8) -> mlua::Result<Option<usize>> {
        let index = i32::from(digit) - i32::from(b'1');
        let slot = usize::try_from(index)
            .ok()
            .filter(|&i| i < self.level)
            .and_then(|i| self.slots.get(i).copied())
            .filter(|slot| slot.length != Length::Unfinished);
        let Some(slot) = slot else {
            return Err(fail(&format!("invalid capture index %{}", index + 1)));
        };
        let Length::Bytes(len) = slot.length else {
            // A position capture never matches as text.
            return Ok(None);
        };
        self.step((len / 64) as u32)?;
        let wanted = self.src.get(slot.start..slot.start + len);
        let here = self.src.get(s..s.saturating_add(len));
        match (wanted, here) {
            (Some(a), Some(b)) if a == b => Ok(Some(s + len)),
            _ => Ok(None),
        }
    }

    /// `match`: the end of a match of the pattern from index `p` at subject index `s`.
    fn do_match(&mut self, mut s: usize, mut p: usize) -> mlua::Result<Option<usize>> {
        if self.depth == 0 {
            return Err(fail("pattern too complex"));
        }
        self.depth -= 1;
        let result = self.match_body(&mut s, &mut p);
        self.depth += 1;
        result
    }

    fn match_body(&mut self, s: &mut usize, p: &mut usize) -> mlua::Result<Option<usize>> {
        loop {
            self.step(1)?;
            if *p >= self.pat.len() {
                return Ok(Some(*s));
            }
            match self.p(*p) {
                b'(' => {
                    return if self.p(*p + 1) == b')' {
                        self.start_capture(*s, *p + 2, Length::Position)
                    } else {
                        self.start_capture(*s, *p + 1, Length::Unfinished)
                    };
                }
                b')' => return self.end_capture(*s, *p + 1),
                b'$' if *p + 1 == self.pat.len() => {
                    return Ok((*s == self.src.len()).then_some(*s));
                }
                ESC if self.p(*p + 1) == b'b' => match self.balance(*s, *p + 2)? {
                    Some(end) => {
                        *s = end;
                        *p += 4;
                        continue;
                    }
                    None => return Ok(None),
                },
                ESC if self.p(*p + 1) == b'f' => {
                    *p += 2;
                    if self.p(*p) != b'[' {
                        return Err(fail("missing '[' after '%f' in pattern"));
                    }
                    let ep = self.class_end(*p)?;
                    let previous = if *s == 0 { 0 } else { self.s(*s - 1) };
                    let close = ep.saturating_sub(1);
                    if !self.in_set(previous, *p, close) && self.in_set(self.s(*s), *p, close) {
                        *p = ep;
                        continue;
                    }
                    return Ok(None);
                }
                ESC if self.p(*p + 1).is_ascii_digit() => {
                    match self.back_reference(*s, self.p(*p + 1))? {
                        Some(end) => {
                            *s = end;
                            *p += 2;
                            continue;
                        }
                        None => return Ok(None),
                    }
                }
                _ => {}
            }
            // A single-character class and its optional suffix.
            let ep = self.class_end(*p)?;
            let suffix = self.p(ep);
            if !self.single(*s, *p, ep) {
                if matches!(suffix, b'*' | b'?' | b'-') {
                    *p = ep + 1;
                    continue;
                }
                return Ok(None);
            }
            match suffix {
                b'?' => {
                    if let Some(end) = self.do_match(*s + 1, ep + 1)? {
                        return Ok(Some(end));
                    }
                    *p = ep + 1;
                }
                b'+' => return self.max_expand(*s + 1, *p, ep),
                b'*' => return self.max_expand(*s, *p, ep),
                b'-' => return self.min_expand(*s, *p, ep),
                _ => {
                    *s += 1;
                    *p = ep;
                }
            }
        }
    }
}

/// Plain search of `needle` in `hay` from `from` (`lmemfind`); `step` is called
/// with the work done so far so a long search can be stopped.
pub fn plain_find(
    hay: &[u8],
    needle: &[u8],
    from: usize,
    step: &mut dyn FnMut(u32) -> mlua::Result<()>,
) -> mlua::Result<Option<usize>> {
    let Some(&first) = needle.first() else {
        return Ok(Some(from));
    };
    let mut at = from;
    while at + needle.len() <= hay.len() {
        let window = hay.get(at..=hay.len() - needle.len()).unwrap_or(&[]);
        let Some(offset) = window.iter().position(|&b| b == first) else {
            return Ok(None);
        };
        at += offset;
        step(1 + (offset / 256) as u32 + (needle.len() / 64) as u32)?;
        if hay.get(at..at + needle.len()) == Some(needle) {
            return Ok(Some(at));
        }
        at += 1;
    }
    Ok(None)
}
