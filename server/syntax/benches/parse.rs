//! Parse throughput from scratch, and incremental re-analysis after a keystroke.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use promptforge_luacheck::parse;

const FRONTMATTER: &str = "---\nname: big\ndescription: A large prompt for benchmarks\npromptforge: 0\nplugins:\n  - promptforge/web\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n---\n\n# Big prompt\n\n```lua shared\nfunction label(t) return t.name end\n```\n\n";

/// One section of about ten lines: a heading, prose, and a Lua block.
fn section(i: usize) -> String {
    format!(
        "## Section {i}\n\nThis section reads the notes and decides what to do next.\n\n```lua\nlocal n = {i}\nlocal msgs = messages.new():user('step ' .. n)\nvar.last = n\n```\n\n"
    )
}

/// A prompt of `sections` sections.
fn prompt(sections: usize) -> String {
    let mut text = FRONTMATTER.to_owned();
    for i in 0..sections {
        text.push_str(&section(i));
    }
    text
}

fn from_scratch(c: &mut Criterion) {
    let mut text = FRONTMATTER.to_owned();
    let mut i = 0;
    while text.len() < 1 << 20 {
        text.push_str(&section(i));
        i += 1;
    }
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(20);
    group.bench_with_input(
        BenchmarkId::new("from_scratch", "1MiB"),
        &text,
        |b, text| b.iter(|| parse(text)),
    );
    group.finish();
}

fn incremental(c: &mut Criterion) {
    let text = prompt(400);
    let lines = text.lines().count();
    assert!(lines >= 4000, "the prompt has {lines} lines");
    let mut file = promptforge_luacheck::parsed(text.clone());
    let target = text.find("local n = 200").expect("section 200") + "local n = ".len();
    let mut digit = b'2';
    c.bench_function("incremental/one_char_in_lua_4000_lines", |b| {
        b.iter(|| {
            digit = if digit == b'2' { b'3' } else { b'2' };
            let replacement = [digit];
            let new = std::str::from_utf8(&replacement).unwrap_or("2");
            file.edit(target..target + 1, new).expect("edit in bounds");
            file.analysis().diagnostics.len()
        })
    });
}

criterion_group!(benches, from_scratch, incremental);
criterion_main!(benches);
