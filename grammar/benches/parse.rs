//! Parse throughput of the grammar alone: a 1 MiB prompt from scratch, and an
//! incremental reparse (`Tree::edit` + `Parser::parse` with the old tree)
//! after a one-character edit inside a code block of a 4,000-line prompt.
//!
//! ```sh
//! cargo bench -p tree-sitter-promptforge --bench parse
//! ```
//!
//! With `PF_BENCH_ONCE=scratch` or `PF_BENCH_ONCE=incremental` the program
//! runs the measured operation a few times without criterion, e.g. under
//! `valgrind --tool=callgrind` (`PF_BENCH_ITERS` sets how many times).

use criterion::{BenchmarkId, Criterion, Throughput};
use tree_sitter::{InputEdit, Parser, Point, Tree};

const FRONTMATTER: &str = "---\nname: big\ndescription: d\npromptforge: 0\n---\n\n# Big\n\n";

fn section(i: usize) -> String {
    format!(
        "## Section {i}\n\nThis section reads the notes and decides what to do next.\n\n```lua\nlocal n = {i}\nlocal msgs = messages.new():user('step ' .. n)\nvar.last = n\n```\n\n"
    )
}

/// The frontmatter, then sections until the text reaches 1 MiB.
fn one_mib() -> String {
    let mut text = FRONTMATTER.to_owned();
    let mut i = 0;
    while text.len() < 1 << 20 {
        text.push_str(&section(i));
        i += 1;
    }
    text
}

/// The frontmatter, then 400 sections (about 4,000 lines).
fn four_thousand_lines() -> String {
    let mut text = FRONTMATTER.to_owned();
    for i in 0..400 {
        text.push_str(&section(i));
    }
    text
}

fn parser() -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_promptforge::LANGUAGE.into())
        .expect("load the grammar");
    parser
}

fn point_at(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let column = byte
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1);
    Point::new(row, column)
}

/// A text, its tree, and the byte of the digit after `local n = ` in
/// section 200, which each step replaces by another digit.
struct Editor {
    parser: Parser,
    text: String,
    tree: Tree,
    target: usize,
    point: Point,
}

impl Editor {
    fn new() -> Self {
        let text = four_thousand_lines();
        assert!(text.lines().count() >= 4000);
        let mut parser = parser();
        let tree = parser.parse(&text, None).expect("parse");
        let target = text.find("local n = 200").expect("section 200") + "local n = ".len();
        let point = point_at(&text, target);
        Editor {
            parser,
            text,
            tree,
            target,
            point,
        }
    }

    fn step(&mut self) -> usize {
        let digit = if self.text.as_bytes()[self.target] == b'2' {
            "3"
        } else {
            "2"
        };
        self.text.replace_range(self.target..self.target + 1, digit);
        self.tree.edit(&InputEdit {
            start_byte: self.target,
            old_end_byte: self.target + 1,
            new_end_byte: self.target + 1,
            start_position: self.point,
            old_end_position: Point::new(self.point.row, self.point.column + 1),
            new_end_position: Point::new(self.point.row, self.point.column + 1),
        });
        self.tree = self
            .parser
            .parse(&self.text, Some(&self.tree))
            .expect("reparse");
        self.tree.root_node().end_byte()
    }
}

fn from_scratch(c: &mut Criterion) {
    let text = one_mib();
    let mut parser = parser();
    let mut group = c.benchmark_group("grammar");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(30);
    group.bench_with_input(
        BenchmarkId::new("from_scratch", "1MiB"),
        &text,
        |b, text| b.iter(|| parser.parse(text, None).expect("parse")),
    );
    group.finish();
}

fn incremental(c: &mut Criterion) {
    let mut editor = Editor::new();
    c.bench_function("grammar/incremental/one_char_in_lua_4000_lines", |b| {
        b.iter(|| editor.step())
    });
}

fn main() {
    if let Ok(what) = std::env::var("PF_BENCH_ONCE") {
        let iters: usize = std::env::var("PF_BENCH_ITERS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        match what.as_str() {
            "scratch" => {
                let text = one_mib();
                let mut parser = parser();
                for _ in 0..iters {
                    let tree = parser.parse(&text, None).expect("parse");
                    assert!(!tree.root_node().has_error());
                }
            }
            "incremental" => {
                let mut editor = Editor::new();
                for _ in 0..iters {
                    editor.step();
                }
            }
            other => panic!("PF_BENCH_ONCE={other}: expected scratch or incremental"),
        }
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    from_scratch(&mut criterion);
    incremental(&mut criterion);
    criterion.final_summary();
}
