//! The book (`docs/src`): every prompt, test file and configuration it shows is
//! checked, and every command output it shows is the real binary's, byte for
//! byte. Its internal links lead to pages that exist, and every page is in
//! `SUMMARY.md`.
//!
//! The markers a page uses, on the line right before a fenced block (the
//! convention is explained to writers in `docs/src/contributing.md`):
//!
//! - `<!-- file: NAME -->`: the block is written to NAME in the page's scratch
//!   folder (pages do not share one). A prompt (`.md`) must then pass `check`
//!   with no output, a test file (`.test.yaml`) must pass `test`, a
//!   configuration (`.toml`) must load. `<!-- file: NAME (fails) -->` marks a
//!   block meant to be wrong: the same command must fail.
//! - `<!-- run: ARGS -->` before a `text` block: `promptforge ARGS` runs in the
//!   scratch folder (trusted, with no user configuration) and its stdout, then
//!   its stderr, must be the block's text.
//!
//! - `<!-- lua in: NAME.md -->` before a `lua` block: the snippet becomes a
//!   section at the end of the prompt NAME.md that an earlier `file:` block of
//!   the page wrote (or of a minimal prompt when there is none), which must
//!   then pass `check` with no output.
//! - `<!-- illustrative: WHY -->`: the block is not run (a shell command that
//!   installs or builds, a signature, an excerpt); WHY says why, and is required.
//! - `<!-- checked by: TEST.rs -->`: another test of `tests/tests` holds the
//!   block (the generated reference pages).
//!
//! Every fenced block has a marker; one without fails.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use promptforge_engine::host::Config;
use promptforge_tests::{binary, isolate, workspace_root, Scratch};

/// What the line before a fence asks of its block.
#[derive(Debug, Clone, PartialEq)]
enum Marker {
    File {
        name: String,
        fails: bool,
    },
    /// `<!-- example: examples/PATH -->`: the block is that file of the
    /// repository, byte for byte, written under its own name and checked as a
    /// `file:` block is.
    Example {
        path: String,
    },
    Run {
        args: Vec<String>,
    },
    /// `<!-- lua in: NAME.md -->`: a Lua snippet checked as a section of a prompt.
    LuaIn {
        name: String,
    },
    /// `<!-- illustrative: WHY -->`: not run, for the reason given.
    Illustrative {
        why: String,
    },
    /// `<!-- checked by: TEST.rs -->`: another test holds the block.
    CheckedBy {
        test: String,
    },
}

/// One fenced block of a page.
#[derive(Debug)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    info: String,
    marker: Option<Marker>,
    content: String,
}

fn book_src() -> PathBuf {
    workspace_root().join("docs").join("src")
}

/// Every page under `docs/src`, in path order.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&book_src(), &mut out);
    out.sort();
    out
}

/// The marker an HTML comment line gives, if it is one.
fn marker(line: &str) -> Option<Marker> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    if let Some(name) = inner.strip_prefix("file:") {
        let name = name.trim();
        let (name, fails) = match name.strip_suffix("(fails)") {
            Some(name) => (name.trim(), true),
            None => (name, false),
        };
        return Some(Marker::File {
            name: name.to_owned(),
            fails,
        });
    }
    if let Some(path) = inner.strip_prefix("example:") {
        return Some(Marker::Example {
            path: path.trim().to_owned(),
        });
    }
    if let Some(name) = inner.strip_prefix("lua in:") {
        return Some(Marker::LuaIn {
            name: name.trim().to_owned(),
        });
    }
    if let Some(why) = inner.strip_prefix("illustrative:") {
        return Some(Marker::Illustrative {
            why: why.trim().to_owned(),
        });
    }
    if let Some(test) = inner.strip_prefix("checked by:") {
        return Some(Marker::CheckedBy {
            test: test.trim().to_owned(),
        });
    }
    let args = inner.strip_prefix("run:")?;
    Some(Marker::Run {
        args: split_args(args.trim()),
    })
}

/// Splits a command line on spaces, keeping `"quoted words"` whole.
fn split_args(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// The fenced blocks of a page (backtick or tilde fences, indented ones too).
fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let Some(fence_char) = fence_char else {
            at += 1;
            continue;
        };
        let fence_len = trimmed.chars().take_while(|c| *c == fence_char).count();
        if fence_len < 3 {
            at += 1;
            continue;
        }
        let info = trimmed[fence_len..].trim().to_owned();
        let marker = at.checked_sub(1).and_then(|before| marker(lines[before]));
        let mut content = String::new();
        let mut end = at + 1;
        while end < lines.len() {
            let body = lines[end];
            let closing = body.trim_start();
            if closing.len() >= fence_len
                && closing.chars().all(|c| c == fence_char)
                && closing.chars().count() >= fence_len
            {
                break;
            }
            let strip = body.len() - body.trim_start().len();
            content.push_str(&body[strip.min(indent)..]);
            content.push('\n');
            end += 1;
        }
        out.push(Block {
            line: at + 1,
            info,
            marker,
            content,
        });
        at = end + 1;
    }
    out
}

/// Runs `promptforge args` in `dir` as the book's reader would: trusted, with no
/// user configuration; returns the exit code and stdout followed by stderr.
fn promptforge(dir: &Path, args: &[String]) -> (Option<i32>, String) {
    let mut command = Command::new(binary());
    isolate(&mut command)
        .current_dir(dir)
        .args(args)
        .env("PROMPTFORGE_TRUST", "1")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    let output = command.output().expect("the binary runs");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.code(), text)
}

/// The prompt a `lua in:` snippet joins when the page wrote none of that name.
const MINIMAL_PROMPT: &str =
    "---\nname: snippet\ndescription: A snippet of the book\npromptforge: 0\n---\n\n# Snippet\n";

/// `text` with every duration a command prints (`(7 ms)`) as `(N ms)`: the
/// book shows one run's, the test gets another's.
fn without_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('(') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with(" ms)") {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// The problems of one page's blocks.
fn check_page(page: &Path, text: &str) -> Vec<String> {
    let shown = page
        .strip_prefix(workspace_root())
        .unwrap_or(page)
        .display()
        .to_string();
    let scratch = Scratch::new(&format!("book-{}", shown.replace(['/', '.'], "-")));
    let dir = scratch.path();
    let mut problems = Vec::new();
    for block in blocks(text) {
        let place = format!("{shown}:{}", block.line);
        let language = block.info.split([' ', ',']).next().unwrap_or_default();
        let example;
        let marker = match &block.marker {
            Some(Marker::Example { path }) => {
                let source = fs::read_to_string(workspace_root().join(path)).unwrap_or_default();
                if source != block.content {
                    problems.push(format!("{place}: the block is not {path} as it is"));
                }
                let name = Path::new(path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                example = Some(Marker::File { name, fails: false });
                example.as_ref()
            }
            other => other.as_ref(),
        };
        match marker {
            Some(Marker::Example { .. }) => unreachable!("an example is checked as a file"),
            Some(Marker::File { name, fails }) => {
                let path = dir.join(name);
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent).expect("a folder in the scratch");
                }
                fs::write(&path, &block.content).expect("the block is written");
                let verdict = if name.ends_with(".test.yaml") {
                    let (code, output) = promptforge(dir, &["test".into(), name.clone()]);
                    (code == Some(0), output)
                } else if name.ends_with(".md") {
                    let (code, output) = promptforge(dir, &["check".into(), name.clone()]);
                    (code == Some(0) && output.is_empty(), output)
                } else if name.ends_with(".toml") {
                    match Config::load(&path) {
                        Ok(_) => (true, String::new()),
                        Err(error) => (false, error.to_string()),
                    }
                } else {
                    continue;
                };
                match verdict {
                    (false, output) if !fails => {
                        problems.push(format!("{place}: {name} does not pass:\n{output}"));
                    }
                    (true, _) if *fails => {
                        problems.push(format!("{place}: {name} is marked (fails) but passes"));
                    }
                    _ => {}
                }
            }
            Some(Marker::Run { args }) => {
                let (_, output) = promptforge(dir, args);
                if without_times(&output) != without_times(&block.content) {
                    problems.push(format!(
                        "{place}: `promptforge {}` printed (- the book, + the binary):\n{}",
                        args.join(" "),
                        promptforge_tests::diff::render(&block.content, &output)
                    ));
                }
            }
            Some(Marker::LuaIn { name }) => {
                if language != "lua" {
                    problems.push(format!("{place}: `lua in:` marks a {language} block"));
                    continue;
                }
                let path = dir.join(name);
                let prompt =
                    fs::read_to_string(&path).unwrap_or_else(|_| MINIMAL_PROMPT.to_owned());
                let snippet = format!("{prompt}\n## Snippet\n\n```lua\n{}```\n", block.content);
                let snippet_name = format!("snippet-{}", block.line);
                let snippet_path = dir.join(format!("{snippet_name}.md"));
                fs::write(&snippet_path, snippet).expect("the snippet's prompt is written");
                let (code, output) =
                    promptforge(dir, &["check".into(), format!("{snippet_name}.md")]);
                if code != Some(0) || !output.is_empty() {
                    problems.push(format!(
                        "{place}: the snippet does not pass as a section of {name}:\n{output}"
                    ));
                }
                let _ = fs::remove_file(snippet_path);
            }
            Some(Marker::Illustrative { why }) => {
                if why.is_empty() {
                    problems.push(format!(
                        "{place}: `illustrative:` says why the block is not run"
                    ));
                }
            }
            Some(Marker::CheckedBy { test }) => {
                if !workspace_root().join("tests/tests").join(test).is_file() {
                    problems.push(format!(
                        "{place}: no test tests/tests/{test} holds the block"
                    ));
                }
            }
            None => problems.push(format!(
                "{place}: a {language} block with no marker (file:, run:, example:, lua in:, \
                 illustrative: or checked by:) is not tested"
            )),
        }
    }
    problems
}

#[test]
fn every_block_of_the_book_is_checked_and_every_output_is_the_binarys() {
    let pages = pages();
    assert!(!pages.is_empty(), "the book's pages are found");
    let mut problems = Vec::new();
    for page in &pages {
        let text = fs::read_to_string(page).expect("a page is text");
        problems.extend(check_page(page, &text));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n\n"));
}

/// The relative links of a page (`](target)`), without their anchors.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        let path = target.split('#').next().unwrap_or_default();
        let external = target.contains("://") || target.starts_with("mailto:");
        if !external && !path.is_empty() && !path.contains(' ') {
            out.push(path.to_owned());
        }
    }
    out
}

#[test]
fn every_page_is_in_the_summary_and_every_internal_link_leads_somewhere() {
    let src = book_src();
    let summary = fs::read_to_string(src.join("SUMMARY.md")).expect("SUMMARY.md");
    let listed = links(&summary);
    let mut problems = Vec::new();
    for page in pages() {
        let relative = page.strip_prefix(&src).unwrap_or(&page);
        let relative = relative.to_string_lossy().replace('\\', "/");
        if relative != "SUMMARY.md" && !listed.contains(&relative) {
            problems.push(format!("{relative} is not in SUMMARY.md"));
        }
        let text = fs::read_to_string(&page).expect("a page is text");
        let in_code = blocks(&text)
            .iter()
            .map(|b| b.content.clone())
            .collect::<String>();
        for link in links(&text) {
            if in_code.contains(&format!("]({link}")) {
                continue;
            }
            let target = page.parent().unwrap_or(&src).join(&link);
            if !target.exists() {
                problems.push(format!("{relative}: the link {link} leads nowhere"));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_markers_are_read_as_written() {
    assert_eq!(
        marker("<!-- file: a/p.md (fails) -->"),
        Some(Marker::File {
            name: "a/p.md".into(),
            fails: true
        })
    );
    assert_eq!(
        marker("<!-- run: run p.md \"The quick\" fox -->"),
        Some(Marker::Run {
            args: vec![
                "run".into(),
                "p.md".into(),
                "The quick".into(),
                "fox".into()
            ]
        })
    );
    assert_eq!(
        marker("<!-- lua in: envelope.md -->"),
        Some(Marker::LuaIn {
            name: "envelope.md".into()
        })
    );
    assert_eq!(
        marker("<!-- illustrative: a synopsis -->"),
        Some(Marker::Illustrative {
            why: "a synopsis".into()
        })
    );
    assert_eq!(
        marker("<!-- checked by: book_reference.rs -->"),
        Some(Marker::CheckedBy {
            test: "book_reference.rs".into()
        })
    );
    assert_eq!(marker("<!-- a comment -->"), None);
    assert_eq!(
        without_times("ok (7 ms) (x) (12 ms"),
        "ok (N ms) (x) (12 ms"
    );
    let found = blocks(
        "<!-- file: p.md -->\n````markdown\n---\n```lua\n```\n````\n  ```text\n  a\n  ```\n",
    );
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].content, "---\n```lua\n```\n");
    assert_eq!(found[1].content, "a\n");
    assert_eq!(found[1].line, 7);
}
