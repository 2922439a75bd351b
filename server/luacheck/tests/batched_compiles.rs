//! Compiling blocks together gives each block exactly what compiling it alone
//! gives: the same success, the same first error at the same line. The blocks
//! are made of the pieces that could carry a block's tokens out of its wrapper
//! (stray `end`s and `until`s, constructs left open, strings and comments left
//! open, escaped line breaks) among ordinary statements.

use promptforge_luacheck::{check_syntax, Lua54};
use promptforge_syntax::lua::LuaCompiler;
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "end",
    "until x",
    "else",
    "elseif y then",
    "then",
    "do",
    "if x then",
    "while x do",
    "for i = 1, 2 do",
    "repeat",
    "function()",
    "function(...)",
    "local function g()",
    "return",
    "return x",
    "break",
    "goto l",
    "::l::",
    "x = 1",
    "local a = 2",
    "f()",
    "print(...)",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "[[",
    "]]",
    "[=[",
    "]=]",
    "[=",
    "--",
    "--[[",
    "--[==[",
    "'",
    "\"",
    "\\",
    "\\z",
    "'s'",
    "\"s\"",
    "[[s]]",
    "--c\n",
    ".5",
    "1e",
    "0x1p-2",
    "0x1e-",
    "1e-",
    "..",
    ";",
    ",",
    "=",
    "x.end",
    "_=function(...)",
    "local t <const> = 1",
    "\n",
    "\r",
    " ",
    "\t",
    "é",
];

fn block() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..10).prop_map(|pieces| {
        let mut code = String::new();
        for piece in pieces {
            code.push_str(piece);
            code.push(' ');
        }
        code
    })
}

/// Ordinary blocks, so that batches of many blocks compile too.
fn valid() -> impl Strategy<Value = String> {
    prop::sample::select(
        &[
            "local x = 1\nreturn x\n",
            "for i = 1, 3 do\n  if i > 1 then print(i) end\nend\n",
            "repeat x = (x or 0) + 1 until x > 3",
            "local s = [[ end ]] .. 'until' -- end",
            "local f = function(...) return select('#', ...) end",
            "",
        ][..],
    )
    .prop_map(str::to_owned)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn together_or_alone_the_results_are_the_same(
        codes in prop::collection::vec(prop_oneof![2 => block(), 3 => valid()], 1..140)
    ) {
        let borrowed: Vec<&str> = codes.iter().map(String::as_str).collect();
        let together = Lua54.check_all(&borrowed);
        let alone: Vec<_> = borrowed.iter().map(|code| check_syntax(code)).collect();
        prop_assert_eq!(together, alone);
    }
}

/// Few pieces, most of them opening or closing a string, a comment or a
/// construct: blocks that reach into the next ones.
fn reaching() -> impl Strategy<Value = String> {
    const REACHING: &[&str] = &[
        "0x1e-",
        "function()",
        "[[",
        "]]",
        "[=[",
        "]=]",
        "--[[",
        "'",
        "\"",
        "\\",
        "\\z",
        "end",
        "until x",
        "if x then",
        "do",
        "x =",
        "y = 1",
        "\n",
        " ",
    ];
    prop::collection::vec(prop::sample::select(REACHING), 0..5).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn blocks_that_reach_into_the_next_ones_get_their_own_results(
        codes in prop::collection::vec(reaching(), 1..8)
    ) {
        let borrowed: Vec<&str> = codes.iter().map(String::as_str).collect();
        let together = Lua54.check_all(&borrowed);
        let alone: Vec<_> = borrowed.iter().map(|code| check_syntax(code)).collect();
        prop_assert_eq!(together, alone);
    }
}

#[test]
fn a_string_or_comment_left_open_does_not_swallow_the_next_blocks() {
    for codes in [
        ["x = [[", "]] y = 1"],
        ["x = [==[", "]==] y = 1"],
        ["--[[", "]] y = 1"],
    ] {
        let alone: Vec<_> = codes.iter().map(|code| check_syntax(code)).collect();
        assert!(alone.iter().all(Result::is_err), "{alone:?}");
        assert_eq!(Lua54.check_all(&codes), alone);
    }
}

#[test]
fn a_block_that_closes_its_wrapper_gets_its_own_error() {
    let codes = ["x = 1", "x = 1 end if true then y = 2", "y = 3"];
    let results = Lua54.check_all(&codes);
    assert_eq!(results[0], Ok(()));
    assert!(results[1].is_err(), "{:?}", results[1]);
    assert_eq!(results[1], check_syntax(codes[1]));
    assert_eq!(results[2], Ok(()));
}
