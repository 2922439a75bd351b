//! Issue 28: `promptforge test --watch` runs the tests, then, on each save, the
//! cases the change affects: a prompt's test files, a test file's own cases,
//! everything after a configuration change, and a new test file; the real binary,
//! real files, the real file watcher.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use promptforge_tests::{binary, isolate, Scratch};

const PROMPT: &str = "---\nname: NAME\ndescription: d\npromptforge: 0\n---\n\n# Go\n\n```lua\nreturn 'RESULT'\n```\n";

fn prompt(name: &str, result: &str) -> String {
    PROMPT.replace("NAME", name).replace("RESULT", result)
}

fn cases(expected: &str) -> String {
    format!("cases:\n  - name: gives its result\n    expect:\n      result: {expected}\n")
}

/// The watcher, its output lines as they come, and a kill when dropped.
struct Watching {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line so far (for a failure's message).
    all: std::cell::RefCell<Vec<String>>,
}

impl Watching {
    fn start(dir: &Scratch, args: &[&str]) -> Self {
        // Both streams go to one pipe, so the lines come in the order the
        // watcher wrote them (two pipes read by two threads interleave at
        // random: a pass's `changed:` line on stderr could come after its
        // summary on stdout).
        let (reader, writer) = std::io::pipe().expect("a pipe");
        let mut command = std::process::Command::new(binary());
        isolate(&mut command)
            .current_dir(dir.path())
            .args(["test", "--watch"])
            .args(args)
            .stdout(writer.try_clone().expect("the pipe's writer is cloned"))
            .stderr(writer);
        let child = command.spawn().expect("the binary runs");
        // The command holds the writers: dropped, the reader ends with the child.
        drop(command);
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Watching {
            child,
            lines,
            all: Default::default(),
        }
    }

    /// The lines up to the first one `done` accepts (that one included).
    fn until(&self, done: impl Fn(&str) -> bool) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(20)) {
                Ok(line) => {
                    self.all.borrow_mut().push(line.clone());
                    let last = done(&line);
                    seen.push(line);
                    if last {
                        return seen;
                    }
                }
                Err(_) => panic!(
                    "the watcher never printed what was awaited; it printed:\n{}",
                    self.all.borrow().join("\n")
                ),
            }
        }
    }

    /// The lines of the next pass, up to its summary, once the watcher waits.
    fn next_pass(&self) -> Vec<String> {
        self.until(|l| l.contains(" passed, "))
    }

    /// Returns once the watcher waits again: it says so once after each pass.
    fn waiting(&self) {
        self.until(|l| l.contains(WATCHING));
    }
}

/// The line the watcher prints each time it waits for a save.
const WATCHING: &str = "promptforge: watching ";

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn results(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .filter(|l| l.starts_with("ok ") || l.starts_with("FAILED ") || l.contains(" passed, "))
        .map(|l| l.split(" (").next().unwrap_or(l))
        .collect()
}

fn two_prompts() -> Scratch {
    let dir = Scratch::new("watch");
    dir.write("a.md", prompt("a", "one"));
    dir.write("a.test.yaml", cases("one"));
    dir.write("b.md", prompt("b", "two"));
    dir.write("b.test.yaml", cases("two"));
    dir
}

#[test]
fn a_save_runs_again_the_cases_it_affects() {
    let dir = two_prompts();
    let watching = Watching::start(&dir, &["."]);
    assert_eq!(
        results(&watching.next_pass()),
        [
            "ok      a.test.yaml: gives its result",
            "ok      b.test.yaml: gives its result",
            "2 passed, 0 failed"
        ]
    );
    watching.waiting();

    // A prompt saved: its test file's cases run, and fail.
    dir.write("b.md", prompt("b", "three"));
    let pass = watching.next_pass();
    assert!(
        pass.iter().any(|l| l == "promptforge: changed: b.md"),
        "{pass:?}"
    );
    let summary = results(&pass);
    assert_eq!(
        summary[0], "FAILED  b.test.yaml: gives its result",
        "{pass:?}"
    );
    assert_eq!(summary.last(), Some(&"0 passed, 1 failed"), "{pass:?}");
    watching.waiting();

    // The test file saved to agree: its cases alone run.
    dir.write("b.test.yaml", cases("three"));
    let pass = watching.next_pass();
    assert!(
        pass.iter()
            .any(|l| l == "promptforge: changed: b.test.yaml"),
        "{pass:?}"
    );
    assert_eq!(
        results(&pass),
        [
            "ok      b.test.yaml: gives its result",
            "1 passed, 0 failed"
        ]
    );
    watching.waiting();

    // A configuration file: everything runs.
    dir.write("promptforge.toml", "[limits]\ncall_depth = 6\n");
    assert_eq!(
        results(&watching.next_pass()).last(),
        Some(&"2 passed, 0 failed")
    );
    watching.waiting();

    // A new test file in the watched folder runs.
    dir.write("c.test.yaml", "prompt: a.md\n".to_owned() + &cases("one"));
    assert_eq!(
        results(&watching.next_pass()),
        [
            "ok      c.test.yaml: gives its result",
            "1 passed, 0 failed"
        ]
    );
    watching.waiting();

    // A file no test reads runs nothing: the next pass is the next save's.
    dir.write("notes.txt", "unrelated");
    std::thread::sleep(Duration::from_millis(600));
    dir.write("a.md", prompt("a", "one!"));
    let pass = watching.next_pass();
    assert!(
        pass.iter().any(|l| l == "promptforge: changed: a.md"),
        "{pass:?}"
    );
    assert_eq!(
        results(&pass).last(),
        Some(&"0 passed, 2 failed"),
        "{pass:?}"
    );
}

#[test]
fn watch_prints_text_only() {
    let dir = two_prompts();
    let mut command = std::process::Command::new(binary());
    isolate(&mut command)
        .current_dir(dir.path())
        .args(["test", "--watch", "--format", "json", "."]);
    let out = command.output().expect("the binary runs");
    assert_eq!(out.status.code(), Some(2));
    // With --format json the refusal is the one JSON object.
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(
        json["error"]["message"],
        "--watch prints text; it cannot be used with --format json or --format junit"
    );
    assert!(out.stderr.is_empty());
    // With --format junit it is said on stderr.
    let mut command = std::process::Command::new(binary());
    isolate(&mut command)
        .current_dir(dir.path())
        .args(["test", "--watch", "--format", "junit", "."]);
    let out = command.output().expect("the binary runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "promptforge: --watch prints text; it cannot be used with --format json or --format junit\n"
    );
    assert!(out.stdout.is_empty());
}

/// The inotify watches process `pid` holds (Linux: its fdinfo lists each).
fn inotify_watches(pid: u32) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fdinfo")).expect("/proc is there");
    fds.flatten()
        .filter_map(|fd| std::fs::read_to_string(fd.path()).ok())
        .map(|info| {
            info.lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count()
        })
        .sum()
}

/// Hostile probe (issue 39): a folder watched recursively followed its
/// symbolic links out of the project (a link to /usr: 15,775 watches). Here
/// a link to a tree of 200 folders outside added 400 watches to the 2 of the
/// project; now it adds none.
#[cfg(target_os = "linux")]
#[test]
fn a_watched_folder_is_watched_without_following_its_links() {
    let dir = Scratch::new("watch-links");
    let outside = Scratch::new("watch-links-outside");
    for i in 0..200 {
        std::fs::create_dir_all(outside.path().join(format!("d{i}/e"))).unwrap();
    }
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    dir.write("sub/a.md", prompt("a", "one"));
    dir.write("sub/a.test.yaml", cases("one"));
    let watching = Watching::start(&dir, &["."]);
    watching.next_pass();
    watching.waiting();
    let watches = inotify_watches(watching.child.id());
    assert_eq!(watches, 2, "the folder and sub, not the link's tree");
}

/// Hostile probe (issue 39): a watched folder deleted and made again was no
/// longer watched (its watch went with it), so nothing ran again. It is now
/// waited for from its parent, and everything runs when it is back.
#[test]
fn a_watched_folder_made_again_is_watched_again() {
    let dir = Scratch::new("watch-again");
    dir.write("sub/a.md", prompt("a", "one"));
    dir.write("sub/a.test.yaml", cases("one"));
    let watching = Watching::start(&dir, &["sub"]);
    assert_eq!(
        results(&watching.next_pass()).last(),
        Some(&"1 passed, 0 failed")
    );
    watching.waiting();

    std::fs::remove_dir_all(dir.path().join("sub")).unwrap();
    // The files gone: a pass that finds nothing.
    watching.next_pass();
    watching.waiting();

    dir.write("sub/a.md", prompt("a", "two"));
    dir.write("sub/a.test.yaml", cases("two"));
    watching.until(|l| l.starts_with("ok      sub/a.test.yaml: gives its result"));
    watching.waiting();

    // And it is watched: a save runs its cases.
    dir.write("sub/a.md", prompt("a", "three"));
    watching.until(|l| l.starts_with("FAILED  sub/a.test.yaml: gives its result"));
}
