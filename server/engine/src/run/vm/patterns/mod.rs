//! Lua 5.4's `string.find`, `string.match`, `string.gmatch` and `string.gsub`
//! in Rust: Lua's own matcher runs in C where no count hook fires, so a
//! backtracking pattern would ignore the instruction budget and cancellation.
//! This one counts its steps and checks both as it goes.

pub mod args;
pub mod matcher;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use mlua::{Function, Lua, LuaString, MultiValue, Table, Value};

use crate::run::vm::control::VmControl;
use args::{localize, start_offset, type_name, Args};
use matcher::{fail, plain_find, Capture, Matcher, CHECK_EVERY, SPECIALS};

/// What the four functions share: the check run every [`CHECK_EVERY`] steps, the
/// steps not yet checked, and the most bytes a `gsub` result may take.
pub struct Budget {
    check: Box<dyn Fn() -> mlua::Result<()> + Send + Sync>,
    pending: AtomicU32,
    max_bytes: usize,
}

impl Budget {
    /// A budget calling `check` every [`CHECK_EVERY`] steps; a `gsub` result past
    /// `max_bytes` is an out-of-memory error.
    pub fn new(
        check: impl Fn() -> mlua::Result<()> + Send + Sync + 'static,
        max_bytes: usize,
    ) -> Self {
        Budget {
            check: Box::new(check),
            pending: AtomicU32::new(0),
            max_bytes,
        }
    }

    /// Runs `f` with a matcher of `pat` against `src`, carrying the step count over.
    fn with_matcher<R>(
        &self,
        src: &[u8],
        pat: &[u8],
        f: impl FnOnce(&mut Matcher<'_>) -> mlua::Result<R>,
    ) -> mlua::Result<R> {
        let mut check = || (self.check)();
        let mut m = Matcher::new(src, pat, self.pending.load(Ordering::Relaxed), &mut check);
        let result = f(&mut m);
        self.pending.store(m.pending_steps(), Ordering::Relaxed);
        result
    }

    /// Counts `n` steps outside a matcher.
    fn step(&self, n: u32) -> mlua::Result<()> {
        let mut steps = self.pending.load(Ordering::Relaxed).saturating_add(n);
        while steps >= CHECK_EVERY {
            steps -= CHECK_EVERY;
            self.pending.store(steps, Ordering::Relaxed);
            (self.check)()?;
        }
        self.pending.store(steps, Ordering::Relaxed);
        Ok(())
    }
}

/// Replaces `string.find`, `string.match`, `string.gmatch` and `string.gsub` of
/// the VM `lua` with versions charged to `control`'s instruction budget (one step
/// for one instruction) that stop on its cancellation. Strings' metatable indexes
/// the same `string` table, so method calls get them too.
pub fn install(lua: &Lua, control: &Arc<VmControl>) -> mlua::Result<()> {
    let charged = control.clone();
    let max_bytes = usize::try_from(control.memory_ceiling()).unwrap_or(usize::MAX);
    let budget = Budget::new(
        move || charged.charge_instructions(u64::from(CHECK_EVERY)),
        max_bytes,
    );
    install_with(lua, Arc::new(budget))
}

/// Installs the four functions in `lua`'s `string` table with `budget`.
pub fn install_with(lua: &Lua, budget: Arc<Budget>) -> mlua::Result<()> {
    let string: Table = lua.globals().get("string")?;
    let b = budget.clone();
    string.raw_set(
        "find",
        lua.create_function(move |lua, a: MultiValue| {
            find_aux(lua, &b, Args::new(lua, a.into_vec(), "find"), true)
                .map_err(|e| localize(lua, e))
        })?,
    )?;
    let b = budget.clone();
    string.raw_set(
        "match",
        lua.create_function(move |lua, a: MultiValue| {
            find_aux(lua, &b, Args::new(lua, a.into_vec(), "match"), false)
                .map_err(|e| localize(lua, e))
        })?,
    )?;
    let b = budget.clone();
    string.raw_set(
        "gmatch",
        lua.create_function(move |lua, a: MultiValue| {
            gmatch(lua, &b, Args::new(lua, a.into_vec(), "gmatch")).map_err(|e| localize(lua, e))
        })?,
    )?;
    let b = budget;
    string.raw_set(
        "gsub",
        lua.create_function(move |lua, a: MultiValue| {
            gsub(lua, &b, Args::new(lua, a.into_vec(), "gsub")).map_err(|e| localize(lua, e))
        })?,
    )?;
    Ok(())
}

fn capture_value(lua: &Lua, src: &[u8], capture: Capture) -> mlua::Result<Value> {
    match capture {
        Capture::Position(n) => Ok(Value::Integer(n as i64)),
        Capture::Text(a, b) => Ok(Value::String(
            lua.create_string(src.get(a..b).unwrap_or_default())?,
        )),
    }
}

fn capture_values(lua: &Lua, src: &[u8], captures: Vec<Capture>) -> mlua::Result<MultiValue> {
    captures
        .into_iter()
        .map(|c| capture_value(lua, src, c))
        .collect()
}

fn split_anchor(p: &[u8]) -> (bool, &[u8]) {
    match p.split_first() {
        Some((b'^', rest)) => (true, rest),
        _ => (false, p),
    }
}

/// `str_find_aux`: `string.find` (`find`) or `string.match`.
fn find_aux(lua: &Lua, budget: &Budget, args: Args<'_>, find: bool) -> mlua::Result<MultiValue> {
    let s = args.string(1)?;
    let p = args.string(2)?;
    let (s, p) = (s.as_bytes(), p.as_bytes());
    let init = start_offset(args.opt_integer(3, 1)?, s.len());
    if init > s.len() {
        return Ok(MultiValue::from_vec(vec![Value::Nil]));
    }
    if find && (args.truthy(4) || !p.iter().any(|c| SPECIALS.contains(c))) {
        let found = plain_find(&s, &p, init, &mut |n| budget.step(n))?;
        return Ok(match found {
            Some(at) => MultiValue::from_vec(vec![
                Value::Integer(at as i64 + 1),
                Value::Integer((at + p.len()) as i64),
            ]),
            None => MultiValue::from_vec(vec![Value::Nil]),
        });
    }
    let (anchor, pat) = split_anchor(&p);
    let found = budget.with_matcher(&s, pat, |m| {
        let mut start = init;
        loop {
            if let Some(end) = m.find_at(start)? {
                let whole = !find;
                return Ok(Some((start, end, m.captures(start, end, whole)?)));
            }
            if anchor || start >= m.subject_len() {
                return Ok(None);
            }
            start += 1;
        }
    })?;
    let Some((start, end, captures)) = found else {
        return Ok(MultiValue::from_vec(vec![Value::Nil]));
    };
    let mut values = capture_values(lua, &s, captures)?;
    if find {
        values.push_front(Value::Integer(end as i64));
        values.push_front(Value::Integer(start as i64 + 1));
    }
    Ok(values)
}

struct GmatchState {
    src: LuaString,
    pat: LuaString,
    at: usize,
    last: Option<usize>,
}

/// `string.gmatch`: an iterator over the matches (a leading `^` is no anchor).
fn gmatch(lua: &Lua, budget: &Arc<Budget>, args: Args<'_>) -> mlua::Result<Function> {
    let src = args.string(1)?;
    let pat = args.string(2)?;
    let len = src.as_bytes().len();
    let init = start_offset(args.opt_integer(3, 1)?, len).min(len + 1);
    let state = Mutex::new(GmatchState {
        src,
        pat,
        at: init,
        last: None,
    });
    let budget = budget.clone();
    lua.create_function(move |lua, _: MultiValue| {
        let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
        let state = &mut *guard;
        let (s, p) = (state.src.as_bytes(), state.pat.as_bytes());
        let (at, last) = (state.at, state.last);
        let found = budget
            .with_matcher(&s, &p, |m| {
                let mut start = at;
                while start <= m.subject_len() {
                    if let Some(end) = m.find_at(start)? {
                        if Some(end) != last {
                            return Ok(Some((end, m.captures(start, end, true)?)));
                        }
                    }
                    start += 1;
                }
                Ok(None)
            })
            .map_err(|e| localize(lua, e))?;
        match found {
            Some((end, captures)) => {
                state.at = end;
                state.last = Some(end);
                capture_values(lua, &s, captures)
            }
            None => {
                state.at = s.len() + 1;
                Ok(MultiValue::new())
            }
        }
    })
}

/// What `gsub` replaces a match with.
enum Repl {
    Text(Vec<u8>),
    Table(Table),
    Function(Function),
}

/// `string.gsub`.
fn gsub(lua: &Lua, budget: &Budget, args: Args<'_>) -> mlua::Result<MultiValue> {
    let src_value = args.string(1)?;
    let pat_value = args.string(2)?;
    let (src, p) = (src_value.as_bytes(), pat_value.as_bytes());
    let max = args.opt_integer(4, src.len() as i64 + 1)?;
    let repl = match args.get(3) {
        Some(v @ (Value::String(_) | Value::Integer(_) | Value::Number(_))) => Repl::Text(
            lua.coerce_string(v.clone())?
                .map(|s| s.as_bytes().to_vec())
                .unwrap_or_default(),
        ),
        Some(Value::Table(t)) => Repl::Table(t.clone()),
        Some(Value::Function(f)) => Repl::Function(f.clone()),
        _ => return Err(args.type_error(3, "string/function/table")),
    };
    let (anchor, pat) = split_anchor(&p);
    let mut out: Vec<u8> = Vec::new();
    let mut changed = false;
    let mut count: i64 = 0;
    let mut at = 0usize;
    let mut last: Option<usize> = None;
    while count < max {
        let found = budget.with_matcher(&src, pat, |m| {
            Ok(match m.find_at(at)? {
                Some(end) if Some(end) != last => {
                    let captures = match &repl {
                        Repl::Text(text) => Err(expand(m, text, at, end)?),
                        Repl::Table(_) => Ok(vec![m.capture(0, at, end)?]),
                        Repl::Function(_) => Ok(m.captures(at, end, true)?),
                    };
                    Some((end, captures))
                }
                _ => None,
            })
        })?;
        match found {
            Some((end, captures)) => {
                count += 1;
                match captures {
                    Err(text) => {
                        out.extend_from_slice(&text);
                        changed = true;
                    }
                    Ok(captures) => {
                        let values = capture_values(lua, &src, captures)?;
                        let value = match &repl {
                            Repl::Function(f) => f.call::<Value>(values)?,
                            Repl::Table(t) => {
                                t.get::<Value>(values.into_iter().next().unwrap_or(Value::Nil))?
                            }
                            Repl::Text(_) => Value::Nil,
                        };
                        match value {
                            Value::Nil | Value::Boolean(false) => {
                                out.extend_from_slice(src.get(at..end).unwrap_or_default())
                            }
                            Value::String(s) => {
                                out.extend_from_slice(&s.as_bytes());
                                changed = true;
                            }
                            v @ (Value::Integer(_) | Value::Number(_)) => {
                                if let Some(s) = lua.coerce_string(v)? {
                                    out.extend_from_slice(&s.as_bytes());
                                }
                                changed = true;
                            }
                            other => {
                                return Err(fail(&format!(
                                    "invalid replacement value (a {})",
                                    type_name(&other)
                                )))
                            }
                        }
                    }
                }
                at = end;
                last = Some(end);
            }
            None if at < src.len() => {
                out.extend_from_slice(src.get(at..at + 1).unwrap_or_default());
                at += 1;
            }
            None => break,
        }
        if out.len() > budget.max_bytes {
            return Err(mlua::Error::MemoryError("not enough memory".to_owned()));
        }
        if anchor {
            break;
        }
    }
    let result = if changed {
        out.extend_from_slice(src.get(at..).unwrap_or_default());
        lua.create_string(&out)?
    } else {
        src_value.clone()
    };
    Ok(MultiValue::from_vec(vec![
        Value::String(result),
        Value::Integer(count),
    ]))
}

/// `add_s`: the replacement string `text` for the match `s..e`, with `%0`–`%9`
/// and `%%` expanded.
fn expand(m: &mut Matcher<'_>, text: &[u8], s: usize, e: usize) -> mlua::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while let Some(&c) = text.get(i) {
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        let next = text.get(i).copied().unwrap_or(0);
        i += 1;
        match next {
            b'%' => out.push(b'%'),
            b'0' => out.extend_from_slice(m_src(m, s, e)),
            b'1'..=b'9' => match m.capture(usize::from(next - b'1'), s, e)? {
                Capture::Position(n) => out.extend_from_slice(n.to_string().as_bytes()),
                Capture::Text(a, b) => out.extend_from_slice(m_src(m, a, b)),
            },
            _ => return Err(fail("invalid use of '%' in replacement string")),
        }
    }
    m.step((out.len() / 64) as u32)?;
    Ok(out)
}

fn m_src<'m>(m: &'m Matcher<'_>, a: usize, b: usize) -> &'m [u8] {
    m.slice(a, b)
}

#[cfg(test)]
mod tests;
