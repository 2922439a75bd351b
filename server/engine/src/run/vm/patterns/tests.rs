//! Differential tests: the Rust functions against Lua 5.4's own, call by call.

use super::*;
use crate::run::vm::errors::error_message;

const HARNESS: &str = r#"
local function ser(...)
  local t = {}
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    t[#t + 1] = (math.type(v) or type(v)) .. ':' .. tostring(v)
  end
  return table.concat(t, ',')
end
local repls = {
  function(...) return table.concat({...}, '|') end,
  function() return false end,
  function() return nil end,
  function(a) return #a end,
  function() return {} end,
  function() return true end,
  function(a) error('boom') end,
  function(a) return 7.5 end,
  {a = 'X', b = 1, ['1'] = 'one', ab = false},
  setmetatable({}, {__index = function(t, k) return tostring(k) .. '!' end}),
  {a = true},
}
return function(mode, ...)
  if mode == 'find' then return ser(string.find(...))
  elseif mode == 'match' then return ser(string.match(...))
  elseif mode == 'gmatch' then
    local out, it = {}, string.gmatch(...)
    for _ = 1, 60 do
      local r = table.pack(it())
      if r[1] == nil then break end
      out[#out + 1] = ser(table.unpack(r, 1, r.n))
    end
    return table.concat(out, ';')
  elseif mode == 'gsub' then return ser(string.gsub(...))
  elseif mode == 'gsubr' then
    local s, p, k, n = ...
    return ser(string.gsub(s, p, repls[k], n))
  elseif mode == 'method' then
    local s, p = ...
    return ser(s:find(p)) .. ser(s:match(p))
  elseif mode == 'methodbad' then
    local s = ...
    return ser(s:gsub())
  elseif mode == 'pcall' then
    local ok, e = pcall(string.find, ...)
    return tostring(ok) .. ':' .. tostring(e)
  end
end
"#;

#[derive(Clone, Debug)]
enum Arg {
    S(Vec<u8>),
    I(i64),
    F(f64),
    B(bool),
    Nil,
}

fn to_value(lua: &Lua, arg: &Arg) -> Value {
    match arg {
        Arg::S(s) => Value::String(lua.create_string(s).unwrap()),
        Arg::I(i) => Value::Integer(*i),
        Arg::F(f) => Value::Number(*f),
        Arg::B(b) => Value::Boolean(*b),
        Arg::Nil => Value::Nil,
    }
}

struct Pair {
    original: (Lua, Function),
    ours: (Lua, Function),
}

impl Pair {
    fn new() -> Self {
        let original = Lua::new();
        let ours = Lua::new();
        install_with(&ours, Arc::new(Budget::new(|| Ok(()), usize::MAX))).unwrap();
        let h1 = original.load(HARNESS).set_name("=h").eval().unwrap();
        let h2 = ours.load(HARNESS).set_name("=h").eval().unwrap();
        Pair {
            original: (original, h1),
            ours: (ours, h2),
        }
    }

    fn call(side: &(Lua, Function), mode: &str, args: &[Arg]) -> String {
        let (lua, h) = side;
        let mut values = vec![Value::String(lua.create_string(mode).unwrap())];
        values.extend(args.iter().map(|a| to_value(lua, a)));
        match h.call::<String>(MultiValue::from_vec(values)) {
            // A plain mlua VM's `pcall` gives an error raised by Rust as mlua's
            // error value (the engine's `pcall` turns it into the message).
            Ok(s) => s
                .replacen("runtime error: ", "", 1)
                .split("\nstack traceback:")
                .next()
                .unwrap_or("")
                .to_owned(),
            Err(e) => {
                let message = error_message(&e);
                let message = message.split("\nstack traceback:").next().unwrap_or("");
                format!("ERR {message}")
            }
        }
    }

    /// Runs one call on both sides; returns the result on agreement.
    fn check(&self, mode: &str, args: &[Arg]) -> String {
        let a = Self::call(&self.original, mode, args);
        let b = Self::call(&self.ours, mode, args);
        assert_eq!(a, b, "{mode} {args:?}");
        a
    }
}

fn s(text: &[u8]) -> Arg {
    Arg::S(text.to_vec())
}

const SUBJECTS: &[&[u8]] = &[
    b"",
    b"a",
    b"hello world",
    b"key=val, k2=v2",
    b"aaa",
    b"(foo(bar))baz(",
    b"THE (quick) fox",
    b" \t12.5e3 0x1F -7 ",
    b"abcabcab",
    b"a\0b\0c",
    b"[x]-%y^$",
    b"caf\xc3\xa9 na\xefve",
];

const PATTERNS: &[&[u8]] = &[
    b"",
    b"a",
    b"o",
    b"^a",
    b"^",
    b"$",
    b"a$",
    b"^$",
    b"^a$",
    b"a*",
    b"a+",
    b"a-",
    b"a?",
    b".",
    b".-",
    b".*",
    b"..",
    b"(a)",
    b"(a*)",
    b"()",
    b"()a()",
    b"(a)(b)",
    b"((a)(b))",
    b"(%w+)=(%w+)",
    b"%a+",
    b"%A+",
    b"%d+",
    b"%D",
    b"%s",
    b"%S+",
    b"%p",
    b"%P",
    b"%l+",
    b"%u+",
    b"%c",
    b"%x+",
    b"%X",
    b"%g+",
    b"%G",
    b"%w*",
    b"%W",
    b"%z",
    b"[abc]",
    b"[^abc]+",
    b"[a-c]+",
    b"[%a_][%w_]*",
    b"[]]",
    b"[^]]",
    b"[a-]",
    b"[-a]",
    b"[%]%-]",
    b"[%d.]+",
    b"%b()",
    b"%b[]",
    b"%bxy",
    b"%f[%w]%w+",
    b"%f[%W]",
    b"%f[%a]",
    b"%f[^%z]",
    b"%f[%z]",
    b"(a)%1",
    b"(.)%1",
    b"(%w)(%w)%2%1",
    b"(.-)b",
    b"(.)()",
    b"%.",
    b"%%",
    b"%(",
    b"a.-b",
    b"x*$",
    b"[%w]-=",
    b"(h)(e)(l)(l)(o)",
    b"^(%s*)(.-)(%s*)$",
    b"\0",
    b"[\0]",
    b"%-?%d+",
    b"[\xc3\xa9]",
    b"\xc3",
    b"^()",
    b"(()())",
    b"(",
    b")",
    b"%",
    b"[a",
    b"[",
    b"[^",
    b"%f",
    b"%fx",
    b"%b",
    b"%ba",
    b"%1",
    b"(a)%2",
    b"(a%1)",
    b"%0",
    b"(()",
    b"a)",
    b"[%",
    b"%g%",
    b"^^",
    b"$$",
    b"a$b",
    b"*",
    b"+a",
    b"-",
];

#[test]
fn find_and_match_agree_with_lua() {
    let pair = Pair::new();
    let mut calls = 0;
    for subject in SUBJECTS {
        let len = subject.len() as i64;
        for pattern in PATTERNS {
            for init in [
                None,
                Some(Arg::I(1)),
                Some(Arg::I(0)),
                Some(Arg::I(-1)),
                Some(Arg::I(-3)),
                Some(Arg::I(-100)),
                Some(Arg::I(2)),
                Some(Arg::I(len)),
                Some(Arg::I(len + 1)),
                Some(Arg::I(len + 2)),
                Some(Arg::I(i64::MAX)),
                Some(Arg::I(i64::MIN)),
            ] {
                let mut args = vec![s(subject), s(pattern)];
                if let Some(init) = init {
                    args.push(init);
                }
                pair.check("find", &args);
                pair.check("match", &args);
                pair.check("gmatch", &args);
                if args.len() == 3 {
                    args.push(Arg::B(true));
                    pair.check("find", &args);
                }
                calls += 4;
            }
            pair.check("method", &[s(subject), s(pattern)]);
        }
    }
    assert!(calls > 20_000);
}

#[test]
fn gsub_agrees_with_lua() {
    let pair = Pair::new();
    let repls: &[&[u8]] = &[
        b"", b"x", b"<%0>", b"%1", b"%1-%2", b"%%", b"%", b"%a", b"%9", b"[%2]", b"%0%0",
    ];
    for subject in SUBJECTS {
        for pattern in PATTERNS {
            for n in [
                None,
                Some(Arg::I(0)),
                Some(Arg::I(1)),
                Some(Arg::I(2)),
                Some(Arg::I(-1)),
            ] {
                for repl in repls {
                    let mut args = vec![s(subject), s(pattern), s(repl)];
                    if let Some(n) = &n {
                        args.push(n.clone());
                    }
                    pair.check("gsub", &args);
                }
                for k in 1..=11 {
                    let args = vec![
                        s(subject),
                        s(pattern),
                        Arg::I(k),
                        n.clone().unwrap_or(Arg::Nil),
                    ];
                    pair.check("gsubr", &args);
                }
            }
        }
    }
}

#[test]
fn argument_errors_agree_with_lua() {
    let pair = Pair::new();
    let cases: Vec<Vec<Arg>> = vec![
        vec![],
        vec![s(b"a")],
        vec![Arg::Nil, s(b"a")],
        vec![Arg::B(true), s(b"a")],
        vec![Arg::I(123), Arg::I(2)],
        vec![Arg::F(1.5), s(b"%.")],
        vec![s(b"abc"), s(b"b"), Arg::F(1.5)],
        vec![s(b"abc"), s(b"b"), Arg::F(2.0)],
        vec![s(b"abc"), s(b"b"), s(b"2")],
        vec![s(b"abc"), s(b"b"), s(b"x")],
        vec![s(b"abc"), s(b"b"), Arg::B(false)],
        vec![s(b"abc"), s(b"b"), Arg::Nil, Arg::Nil],
    ];
    for args in &cases {
        for mode in ["find", "match", "gmatch", "gsub", "pcall"] {
            pair.check(mode, args);
        }
        let mut with_repl = args.clone();
        with_repl.truncate(2);
        while with_repl.len() < 2 {
            with_repl.push(s(b"a"));
        }
        for repl in [Arg::Nil, Arg::B(true), Arg::I(5), Arg::F(0.5)] {
            let mut a = with_repl.clone();
            a.push(repl);
            pair.check("gsub", &a);
            a.push(Arg::F(0.5));
            pair.check("gsub", &a);
        }
    }
    pair.check("methodbad", &[s(b"abc")]);
}

/// A small deterministic generator (xorshift).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

#[test]
fn random_patterns_agree_with_lua() {
    let pair = Pair::new();
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let tokens: &[&[u8]] = &[
        b"a", b"b", b".", b"%a", b"%d", b"%s", b"%W", b"[ab]", b"[^a]", b"[a-c%d]", b"*", b"+",
        b"-", b"?", b"(", b")", b"()", b"%1", b"%2", b"%b()", b"%f[%w]", b"%f[%s]", b"^", b"$",
        b"%", b"[", b"]", b"%%", b"1",
    ];
    let letters = b"ab ()1cA-.\0";
    for _ in 0..6000 {
        let pattern: Vec<u8> = (0..g.next() % 7)
            .flat_map(|_| g.pick(tokens).to_vec())
            .collect();
        let subject: Vec<u8> = (0..g.next() % 12).map(|_| *g.pick(letters)).collect();
        let init = Arg::I((g.next() % 16) as i64 - 6);
        pair.check("find", &[s(&subject), s(&pattern), init.clone()]);
        pair.check("match", &[s(&subject), s(&pattern)]);
        pair.check("gmatch", &[s(&subject), s(&pattern), init]);
        pair.check("gsub", &[s(&subject), s(&pattern), s(b"<%0>")]);
        pair.check("gsubr", &[s(&subject), s(&pattern), Arg::I(1), Arg::I(3)]);
    }
}

#[test]
fn limits_agree_with_lua() {
    let pair = Pair::new();
    let deep = "(".repeat(33) + &")".repeat(33);
    pair.check("find", &[s(b"x"), s(deep.as_bytes())]);
    let many = "a?".repeat(300);
    pair.check("find", &[s(&[b'a'; 300]), s(many.as_bytes())]);
    let long = ".-".repeat(250);
    pair.check("match", &[s(b"abc"), s(long.as_bytes())]);
}

#[test]
fn method_calls_see_the_new_functions() {
    let lua = Lua::new();
    let counted = Arc::new(AtomicU32::new(0));
    let c = counted.clone();
    let budget = Budget::new(
        move || {
            c.fetch_add(1, Ordering::Relaxed);
            Ok(())
        },
        usize::MAX,
    );
    install_with(&lua, Arc::new(budget)).unwrap();
    let same: bool = lua
        .load("return getmetatable('').__index == string and ('x'):find('x') == 1")
        .eval()
        .unwrap();
    assert!(same);
    let _: MultiValue = lua
        .load("return ('a'):rep(9):find(('a*'):rep(9) .. 'b')")
        .eval()
        .unwrap();
    assert!(counted.load(Ordering::Relaxed) > 10);
}

#[test]
fn a_failing_check_stops_the_match() {
    let lua = Lua::new();
    let budget = Budget::new(|| Err(mlua::Error::RuntimeError("stop".into())), usize::MAX);
    install_with(&lua, Arc::new(budget)).unwrap();
    let error = lua
        .load("return string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b')")
        .exec()
        .unwrap_err();
    assert_eq!(error_message(&error), "stop");
}

/// `cargo test --release -p promptforge-engine --lib patterns::tests::speed -- --ignored --nocapture`
#[test]
#[ignore]
fn speed_of_find_against_lua() {
    let pair = Pair::new();
    let cases = [
        ("find captures", "string.find(s, '(%a+)=(%w+)', 1)"),
        ("find plain", "string.find(s, 'end', 1, true)"),
        ("match anchored", "string.match(s, '^%s*(%a+)')"),
        ("gsub", "string.gsub(s, '%s+', ' ')"),
        ("gmatch", "for w in string.gmatch(s, '%a+') do end"),
    ];
    for (label, call) in cases {
        let code = format!(
            "local s = string.rep('lorem ipsum dolor sit amet, key=value; ', 4) .. 'name=forge42 end'\n\
             for _ = 1, 100000 do {call} end"
        );
        let mut line = format!("{label:16}");
        for lua in [&pair.original.0, &pair.ours.0] {
            let started = std::time::Instant::now();
            lua.load(code.as_str()).exec().unwrap();
            line += &format!(" {:>8.2} us", started.elapsed().as_secs_f64() * 10.0);
        }
        println!("{line}  (Lua, ours; per call)");
    }
}
