//! A large text read in windows, for an analysis made once (`check`). The text
//! is cut before headings into windows of about [`WINDOW`] bytes; each window is
//! parsed with a tree of its own, dropped as soon as its items are read, and its
//! Lua blocks are compiled in the same job. Windows are read in parallel where
//! the machine has several cores. The tree of a whole 10 MiB prompt weighs about
//! 65 MB; a window's, under 2 MB.
//!
//! A top-level block is parsed from the text at its start alone, looking at most
//! one line past its end (see [`items::read_after_edit`]), so a window that
//! starts at a heading reads the same items as the whole file's tree. Where a
//! heading starts is only guessed when the text is cut (a `#` line may be inside
//! a fence): each window reads two lines past the next window's start, and the
//! cut holds only when that window has a heading right there. When a cut does not
//! hold, or the first window has no frontmatter, [`read`] gives up and the caller
//! parses the whole text at once.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tree_sitter::{Parser, Point};

use crate::body::lua_fence;
use crate::cores::cores;
use crate::items::{self, FrontmatterNode, Item, Outline};
use crate::line_index::LineIndex;
use crate::lua::{CompiledBlocks, LuaCompiler, LuaSyntaxError};
use crate::node_kinds;
use crate::points::advance;

/// About how many bytes one window holds.
pub(crate) const WINDOW: usize = 128 * 1024;

/// The stack of a thread that reads windows: Lua's compiler recurses once per
/// nesting level of a block's code, up to its own limit.
const THREAD_STACK: usize = 8 * 1024 * 1024;

/// Where one window starts and ends (two lines past the next window's start).
struct Window {
    start: usize,
    /// The next window's start, where this window's items stop.
    next: Option<usize>,
    end: usize,
    start_point: Point,
    end_point: Point,
}

/// What one window read.
#[derive(Default)]
struct WindowRead {
    /// The frontmatter (the first window only).
    frontmatter: Option<FrontmatterNode>,
    /// The items that start before the next window.
    items: Vec<Item>,
    /// The compile errors of the executable blocks among `items`.
    failed: Vec<((usize, usize), Result<(), LuaSyntaxError>)>,
    /// True when the next window starts at a heading of this window's tree (and
    /// always for the last window).
    holds: bool,
}

/// The outline of `text`, read in windows of about `window` bytes; None when the
/// text cannot be cut where the whole file's tree would agree (see the module's
/// documentation) and must be parsed at once.
pub(crate) fn read(
    text: &str,
    line_index: &LineIndex,
    lua: &dyn LuaCompiler,
    window: usize,
) -> Option<Outline> {
    let windows = plan(text, window);
    let reads = read_all(windows.len(), &|parser, index| {
        read_window(parser, text, line_index, lua, &windows[index], index == 0)
    });
    if !reads.iter().all(|read| read.holds) {
        return None;
    }
    let frontmatter = reads.first()?.frontmatter.clone()?;
    // Each window's items stay a run of their own: no copy of them all at once.
    let mut items = Vec::with_capacity(reads.len());
    let mut failed = CompiledBlocks::default();
    for read in reads {
        items.push(read.items);
        failed.extend(read.failed);
    }
    Some(Outline {
        frontmatter,
        items,
        failed,
        all_compiled: true,
    })
}

/// Reads one window: parses only its bytes, reads its items, compiles its Lua.
fn read_window(
    parser: &mut Parser,
    text: &str,
    line_index: &LineIndex,
    lua: &dyn LuaCompiler,
    window: &Window,
    first: bool,
) -> WindowRead {
    let range = tree_sitter::Range {
        start_byte: window.start,
        end_byte: window.end,
        start_point: window.start_point,
        end_point: window.end_point,
    };
    if parser.set_included_ranges(&[range]).is_err() {
        return WindowRead::default();
    }
    let Some(tree) = parser.parse(text, None) else {
        return WindowRead::default();
    };
    let root = tree.root_node();
    let frontmatter = if first {
        match items::frontmatter_of(root) {
            Some(frontmatter) => Some(frontmatter),
            None => return WindowRead::default(),
        }
    } else {
        None
    };
    let body_start = frontmatter.as_ref().map_or(window.start, |f| f.range.end);
    let mut items = items::read_all(text, line_index, root, body_start);
    drop(tree);
    let holds = match window.next {
        None => true,
        Some(next) => {
            let kept = items.partition_point(|item| item.start() < next);
            let holds =
                matches!(items.get(kept), Some(Item::Heading(h)) if h.line_range.start == next);
            items.truncate(kept);
            // The run is kept until the tree is built: without the items read
            // past the window's end.
            items.shrink_to_fit();
            holds
        }
    };
    let failed = if holds {
        compile_blocks(text, lua, &items)
    } else {
        Vec::new()
    };
    WindowRead {
        frontmatter,
        items,
        failed,
        holds,
    }
}

/// Compiles the code of every closed executable block among `items`; gives the errors.
fn compile_blocks(
    text: &str,
    lua: &dyn LuaCompiler,
    items: &[Item],
) -> Vec<((usize, usize), Result<(), LuaSyntaxError>)> {
    let blocks: Vec<&Range<usize>> = items
        .iter()
        .filter_map(|item| match item {
            // A block never closed is not compiled (see `body`).
            Item::Fence {
                opener,
                code,
                closed: true,
                ..
            } => {
                text.get(opener.clone()).and_then(lua_fence)?;
                Some(code)
            }
            _ => None,
        })
        .collect();
    let codes: Vec<&str> = blocks
        .iter()
        .map(|code| text.get((*code).clone()).unwrap_or(""))
        .collect();
    blocks
        .iter()
        .zip(lua.check_all(&codes))
        .filter(|(_, result)| result.is_err())
        .map(|(code, result)| ((code.start, code.end), result))
        .collect()
}

/// Runs `job` for windows `0..count`, each thread with a parser of its own, and
/// gives the reads in window order.
fn read_all(
    count: usize,
    job: &(dyn Fn(&mut Parser, usize) -> WindowRead + Sync),
) -> Vec<WindowRead> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(count));
    let work = || {
        let mut parser = node_kinds::parser();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= count {
                break;
            }
            let read = job(&mut parser, index);
            done.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((index, read));
        }
    };
    let helpers = cores().min(count).saturating_sub(1);
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            // A thread that cannot start leaves its share to the others.
            let _ = std::thread::Builder::new()
                .stack_size(THREAD_STACK)
                .spawn_scoped(scope, work);
        }
        work();
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, read)| read).collect()
}

/// The windows of `text`: the first starts at 0, each other at a heading line
/// at least `window` bytes after the previous start and outside what looks like
/// a fence (lines from one opening with a run of three or more backticks or
/// tildes to one with a run of the same character as long, and nothing after).
fn plan(text: &str, window: usize) -> Vec<Window> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut fence: Option<(u8, usize)> = None;
    let mut at = 0;
    while at < bytes.len() {
        let next_line = line_end(bytes, at);
        let line = &bytes[at..next_line];
        let line_only = line.strip_suffix(b"\n").unwrap_or(line);
        match (fence, fence_run(line_only)) {
            (None, Some((mark, run))) => fence = Some((mark, run)),
            (Some((open, length)), Some((mark, run)))
                if mark == open
                    && run >= length
                    && line_only[run..].iter().all(u8::is_ascii_whitespace) =>
            {
                fence = None;
            }
            (None, None)
                if at >= starts[starts.len() - 1] + window && is_heading_line(line_only) =>
            {
                starts.push(at);
            }
            _ => {}
        }
        at = next_line;
    }
    let ends: Vec<usize> = starts
        .iter()
        .skip(1)
        .map(|&next| line_end(bytes, line_end(bytes, next)))
        .chain([bytes.len()])
        .collect();
    let mut offsets: Vec<usize> = starts.iter().chain(&ends).copied().collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut points = Vec::with_capacity(offsets.len());
    let mut point = Point { row: 0, column: 0 };
    let mut from = 0;
    for &offset in &offsets {
        point = advance(point, &bytes[from..offset]);
        from = offset;
        points.push(point);
    }
    let point_of = |offset: usize| points[offsets.binary_search(&offset).unwrap_or(0)];
    starts
        .iter()
        .zip(&ends)
        .enumerate()
        .map(|(index, (&start, &end))| Window {
            start,
            next: starts.get(index + 1).copied(),
            end,
            start_point: point_of(start),
            end_point: point_of(end),
        })
        .collect()
}

/// The character and length of the run of three or more backticks or tildes a
/// line opens with.
fn fence_run(line: &[u8]) -> Option<(u8, usize)> {
    let mark = *line.first().filter(|&&b| b == b'`' || b == b'~')?;
    let run = line.iter().take_while(|&&b| b == mark).count();
    (run >= 3).then_some((mark, run))
}

/// True for a line that opens with an ATX heading marker (1 to 6 `#`, then a
/// blank or the line's end).
fn is_heading_line(line: &[u8]) -> bool {
    let marks = line.iter().take_while(|&&b| b == b'#').count();
    (1..=6).contains(&marks) && matches!(line.get(marks), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

/// The offset just past the line that starts at `at` (past its `\n`).
fn line_end(bytes: &[u8], at: usize) -> usize {
    let rest = bytes.get(at..).unwrap_or_default();
    memchr::memchr(b'\n', rest).map_or(bytes.len(), |end| at + end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lua::LuaSyntaxError;

    /// Fails every block whose code holds `bad`, so that compile results show.
    struct FailsOnBad;
    impl LuaCompiler for FailsOnBad {
        fn check(&self, code: &str) -> Result<(), LuaSyntaxError> {
            match code.find("bad") {
                Some(_) => Err(LuaSyntaxError {
                    line: 1,
                    message: "bad".to_owned(),
                }),
                None => Ok(()),
            }
        }
    }

    fn prompt(sections: usize) -> String {
        let mut text =
            String::from("---\nname: w\n# a YAML comment\npromptforge: 0\n---\n\n# Title\n\n");
        for i in 0..sections {
            let code = if i % 3 == 0 { "bad()" } else { "return 1" };
            text.push_str(&format!(
                "## S{i}\n\nProse.\n\n```lua\n{code}\n```\n\n~~~\n# inside\n~~~\n\n---\n\n"
            ));
        }
        text
    }

    /// The items and the frontmatter one tree of the whole text gives.
    fn one_tree(text: &str, line_index: &LineIndex) -> (FrontmatterNode, Vec<Item>) {
        let tree = node_kinds::parser().parse(text, None).expect("tree");
        let frontmatter = items::frontmatter_of(tree.root_node()).expect("frontmatter");
        let items = items::read_all(text, line_index, tree.root_node(), frontmatter.range.end);
        (frontmatter, items)
    }

    #[test]
    fn a_prompt_cut_into_windows_reads_what_one_tree_reads() {
        let text = prompt(40);
        let line_index = LineIndex::new(&text);
        assert!(plan(&text, 200).len() > 10, "cut into many windows");
        let outline = read(&text, &line_index, &FailsOnBad, 200).expect("every cut holds");
        let (frontmatter, items) = one_tree(&text, &line_index);
        assert_eq!(outline.frontmatter, frontmatter);
        assert!(outline.items.len() > 10, "a run per window");
        assert_eq!(outline.items.concat(), items);
        assert!(outline.all_compiled);
        let failed: Vec<_> = outline
            .failed
            .iter()
            .map(|(range, result)| (&text[range.0..range.1], result.is_err()))
            .collect();
        assert_eq!(failed.len(), 14);
        assert!(failed.iter().all(|failure| *failure == ("bad()\n", true)));
    }

    #[test]
    fn a_cut_inside_a_fence_does_not_hold() {
        // An indented fence is not seen by the plan, which cuts at the `#` line
        // inside it.
        let mut text = prompt(3);
        text.push_str("  ```\n");
        text.push_str(&"x\n".repeat(100));
        let inside = text.len();
        text.push_str("# not a heading\nmore\n  ```\n");
        let line_index = LineIndex::new(&text);
        let starts: Vec<usize> = plan(&text, 100).iter().map(|w| w.start).collect();
        assert!(starts.contains(&inside), "{starts:?}");
        assert!(read(&text, &line_index, &FailsOnBad, 100).is_none());
    }

    #[test]
    fn a_text_without_frontmatter_is_not_read_in_windows() {
        let text = prompt(20).replacen("---\n", "", 1);
        let line_index = LineIndex::new(&text);
        assert!(plan(&text, 100).len() > 2);
        assert!(read(&text, &line_index, &FailsOnBad, 100).is_none());
    }

    #[test]
    fn headings_inside_fences_of_any_length_are_not_cut_at() {
        let mut text = prompt(2);
        let fenced =
            "````md\n```\n# inside\n```\n````\n~~~\n# inside\n```\n# inside\n~~~~\n\n## S\n\n";
        for _ in 0..30 {
            text.push_str(fenced);
        }
        let line_index = LineIndex::new(&text);
        let windows = plan(&text, 100);
        assert!(windows.len() > 10);
        assert!(windows[1..]
            .iter()
            .all(|w| text[w.start..].starts_with("## ")));
        let outline = read(&text, &line_index, &FailsOnBad, 100).expect("every cut holds");
        assert_eq!(outline.items.concat(), one_tree(&text, &line_index).1);
    }

    #[test]
    fn a_lua_block_never_closed_runs_to_the_end_of_the_last_window() {
        // No cut after its opener: the headings it swallowed are its code, in
        // the windows as in one tree, and its code is not compiled.
        let mut text = prompt(20);
        let opener = text.len();
        text.push_str("```lua\nbad()\n\n");
        for i in 0..30 {
            text.push_str(&format!("## Swallowed {i}\n\nbad()\n\n"));
        }
        let line_index = LineIndex::new(&text);
        let windows = plan(&text, 100);
        assert!(windows.len() > 5);
        assert!(windows.iter().all(|w| w.start < opener));
        let outline = read(&text, &line_index, &FailsOnBad, 100).expect("every cut holds");
        let items = outline.items.concat();
        assert_eq!(items, one_tree(&text, &line_index).1);
        assert!(matches!(
            items.last(),
            Some(Item::Fence { opener: o, closed: false, .. }) if o.start == opener
        ));
        assert!(outline.failed.keys().all(|&(start, _)| start < opener));
    }

    #[test]
    fn heading_lines_are_told_from_other_hash_lines() {
        for line in ["# a\n", "###### a", "## ", "#\n", "#\r\n", "#\tx"] {
            assert!(is_heading_line(line.as_bytes()), "{line:?}");
        }
        for line in ["#a", "####### a", " # a", "", "x # a"] {
            assert!(!is_heading_line(line.as_bytes()), "{line:?}");
        }
    }
}
