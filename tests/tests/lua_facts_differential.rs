//! The one-pass Lua facts reader of promptforge-analysis against the
//! tree-sitter-lua reader it replaced (lua_facts_oracle): on every Lua block of
//! the repository (fenced `lua` blocks of its Markdown files, its `.lua`
//! files), on hand-written snippets of the corners of the grammar, and on every
//! truncation of the blocks under 2,000 bytes. Where Lua compiles the code and
//! tree-sitter-lua's tree has no error, the facts must be equal. Elsewhere the
//! code is broken and tree-sitter's reading arbitrary (its error recovery; a
//! keyword where none may stand taken for a name, as `in` in `x = in`): the new
//! reader's decided behaviour applies (it reads on, see
//! server/analysis/src/lua_facts/reader.rs); those cases are counted, not
//! compared, and must not make the reader panic.

mod lua_facts_oracle;

use std::path::{Path, PathBuf};

use promptforge_analysis::lua_facts::{read_code, LuaFacts};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The Markdown and Lua files under `dir`, build output and dependencies left out.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && !name.starts_with("target") && name != "node_modules" {
                files(&path, out);
            }
        } else if name.ends_with(".md") || name.ends_with(".lua") {
            out.push(path);
        }
    }
}

/// The code of each fenced `lua` block of Markdown `text`.
fn lua_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<(&str, String)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some((fence, code)) = &mut open {
            if trimmed.trim_end() == *fence {
                blocks.push(std::mem::take(code));
                open = None;
            } else {
                code.push_str(line);
            }
            continue;
        }
        let Some(mark) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else {
            continue;
        };
        let run = trimmed.len() - trimmed.trim_start_matches(mark).len();
        let info = trimmed[run..].trim();
        let word = info
            .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
            .next();
        if run >= 3 && word == Some("lua") {
            open = Some((&trimmed[..run], String::new()));
        }
    }
    blocks
}

/// Every Lua text of the repository.
fn corpus() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    files(&root(), &mut paths);
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let name = path
            .strip_prefix(root())
            .unwrap_or(&path)
            .display()
            .to_string();
        if name.ends_with(".lua") {
            out.push((name, text));
        } else {
            for (i, code) in lua_blocks(&text).into_iter().enumerate() {
                out.push((format!("{name} block {i}"), code));
            }
        }
    }
    out
}

/// Compares the two readers on `code`: None when equal or when the code is
/// broken (then `broken` counts it, and whether they agreed), else the difference.
fn differs(code: &str, broken: &mut (usize, usize)) -> Option<String> {
    let base = 7;
    let (old, has_error) = lua_facts_oracle::read_code(code, base);
    let new = read_code(code, base);
    if has_error || promptforge_luacheck::check_syntax(code).is_err() {
        broken.0 += 1;
        broken.1 += usize::from(old == new);
        return None;
    }
    (old != new).then(|| describe(&old, &new))
}

fn describe(old: &LuaFacts, new: &LuaFacts) -> String {
    let mut out = String::new();
    let pairs: [(&str, String, String); 4] = [
        (
            "calls",
            format!("{:#?}", old.calls),
            format!("{:#?}", new.calls),
        ),
        (
            "identifiers",
            format!("{:?}", old.identifiers),
            format!("{:?}", new.identifiers),
        ),
        (
            "calls_reads",
            format!("{:?}", old.calls_reads),
            format!("{:?}", new.calls_reads),
        ),
        (
            "model_texts",
            format!("{:?}", old.model_texts),
            format!("{:?}", new.model_texts),
        ),
    ];
    for (what, old, new) in pairs {
        if old != new {
            out.push_str(&format!(
                "{what}:\n  tree-sitter: {old}\n  one-pass:    {new}\n"
            ));
        }
    }
    out
}

#[test]
fn every_lua_block_of_the_repository_gives_the_facts_tree_sitter_gave() {
    let corpus = corpus();
    assert!(corpus.len() > 300, "only {} Lua texts found", corpus.len());
    let mut broken = (0, 0);
    let mut failures = Vec::new();
    for (name, code) in &corpus {
        if let Some(diff) = differs(code, &mut broken) {
            failures.push(format!("{name}:\n{code}\n{diff}"));
        }
    }
    eprintln!(
        "{} Lua texts, {} broken (facts equal on {} of them)",
        corpus.len(),
        broken.0,
        broken.1
    );
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_truncation_of_a_sample_gives_the_facts_tree_sitter_gave_where_it_parses() {
    let corpus = corpus();
    let sample = corpus
        .iter()
        .filter(|(_, code)| (20..2000).contains(&code.len()));
    let mut broken = (0, 0);
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, code) in sample {
        for cut in (0..=code.len()).filter(|&i| code.is_char_boundary(i)) {
            let prefix = &code[..cut];
            checked += 1;
            if let Some(diff) = differs(prefix, &mut broken) {
                failures.push(format!("{name} cut at {cut}:\n{prefix}\n{diff}"));
            }
        }
    }
    eprintln!(
        "{checked} truncations, {} broken (facts equal on {} of them)",
        broken.0, broken.1
    );
    assert!(checked > 10_000, "only {checked} truncations");
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Corners of the grammar the repository's blocks may not reach.
const SNIPPETS: &[&str] = &[
    "local x <const>, y <close> = 1, f()\nglobal function g(a, ...) return ... end",
    "local t = {[k] = 1, [k.x] = 2, [(k)] = 3, ['s'] = 4, name = 'v', 'a', \"b\"; [[c]], 'd\\n'}\nuse(t)",
    "jump('a', {'b', 'c'}, {x = {'y', z = 1}, [k] = 'v'}, 1, true, nil, function() end, ..., -1, (2), 'e\\t', [[f]], \"g\" .. h)",
    "tools.calls.a = tools.calls['b'] + tools . calls . c + tools\n.calls.d + tools.calls[\"e\\n\"] + tools.calls[ [[f]] ] + x.tools.calls.g",
    "function tools.calls.h() end\nfunction a.b.c:d(e) goto done ::done:: end",
    "m:system('a'):user([==[\nb]]c]==]):assistant\"d\\\"\"\nmodels . infer('e', {'f'})\nmodels.infer[[g]]\nm:user(x, 'h' .. 'i', [=[j]=])",
    "local s = 0x1F + 0x.8p-2 + 1e10 + .5 + 5. + 3.25E+2 + 0xA.Bp3 // 2 % 3 ^ 4 << 1 >> 2 & 3 | 4 ~ 5 ~= 6",
    "if a then b() elseif c then d() else e() end\nwhile f do break end\nrepeat g() until h\nfor i = 1, 10, 2 do j(i) end\nfor k, v in pairs(t) do l(k, v) end",
    "--[==[ a long\ncomment ]] still ]==] x = 1 -- line\n--[ not long\ny = 2",
    "#!/usr/bin/env lua\nprint(arg)",
    "local r = a.b.c(d)(e)[f]:g(h){i}'j'\nk = (l).m(n)\no = p[q](r)",
    "set('a\\z\n   b', \"\\x41\\u{48}\\65\\\\\", 'c\\\nd')",
    "print(global)\nglobal = 1\nlocal global = 2\nt = {global = 3}\nglobal x, y\nglobal <const> *",
    "x = not a and #b or -c == ~d\nlocal f = function(...) return select('#', ...) end",
    "a.b = 1; a[b] = 2; a.b.c, d = 3, 4;;",
    "f{'a'; 'b'}\ng{}\nh''\ni(\"\")\nj({})",
    "local 变量 = 1\nprint(变量, $x, a!b)",
];

/// Each snippet parses without error in tree-sitter-lua (some are Lua 5.5 or
/// tree-sitter-only syntax that Lua 5.4 rejects), and both readers agree on it.
#[test]
fn the_corners_of_the_grammar_give_the_facts_tree_sitter_gave() {
    for code in SNIPPETS {
        let (old, has_error) = lua_facts_oracle::read_code(code, 3);
        assert!(!has_error, "tree-sitter-lua finds an error in {code:?}");
        let new = read_code(code, 3);
        assert!(old == new, "{code}\n{}", describe(&old, &new));
    }
}

#[test]
fn deep_nesting_neither_overflows_nor_hangs() {
    for open in [
        "(",
        "{",
        "f(",
        "-",
        "function() ",
        "do ",
        "a[",
        "if x then ",
    ] {
        let code = format!("x = {}", open.repeat(100_000));
        let facts = read_code(&code, 0);
        assert!(
            !facts.identifiers.is_empty(),
            "{open}: the first identifier is read"
        );
    }
}
