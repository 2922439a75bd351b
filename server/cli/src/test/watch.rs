//! `promptforge test --watch`: runs the tests, then watches what they read (the
//! test files and the folders named, the prompts they test, the configuration
//! files those prompts use) and, each time some of it is saved, clears the
//! terminal and runs again the cases the change affects: a test file's own
//! cases, every test file of a changed prompt, everything when a configuration
//! file changed. A new test file in a watched folder runs too. Runs until stopped
//! (Ctrl-C).
//!
//! A folder watched recursively is watched without following the symbolic
//! links in it (a link to `/usr` would watch all of it). A watched folder that
//! is deleted is waited for from its nearest existing parent, and watched
//! again, and everything run again, when it is made again.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use crate::cli::{GlobalArgs, TestArgs, TestFormat};
use crate::exit::Exit;
use crate::host_setup;

/// How long the watcher waits for a save's other events before running.
const SETTLE: Duration = Duration::from_millis(200);

/// The usage error of `--watch` with a format written at the end.
pub const WATCH_NEEDS_TEXT: &str =
    "--watch prints text; it cannot be used with --format json or --format junit";

/// Which test files a pass runs.
pub enum Scope {
    /// All of them.
    Everything,
    /// Those whose file or prompt is one of these (absolute) paths.
    Changed(BTreeSet<PathBuf>),
}

impl Scope {
    /// True when the test file at `test`, testing `prompt`, runs in this pass.
    pub fn keeps(&self, test: &Path, prompt: Option<&Path>) -> bool {
        match self {
            Scope::Everything => true,
            Scope::Changed(paths) => {
                paths.contains(&absolute(test))
                    || prompt.is_some_and(|p| paths.contains(&absolute(p)))
            }
        }
    }
}

/// What a pass read: the files whose changes matter.
#[derive(Default)]
pub struct Inputs {
    /// Every test file found and read (kept or not).
    tests: BTreeSet<PathBuf>,
    /// The prompts those test files test.
    prompts: BTreeSet<PathBuf>,
    /// The configuration files those prompts use.
    configs: BTreeSet<PathBuf>,
}

impl Inputs {
    /// Records a test file at `test` and its prompt.
    pub fn add(&mut self, global: &GlobalArgs, test: &Path, prompt: Option<&Path>) {
        self.tests.insert(absolute(test));
        if let Some(prompt) = prompt {
            self.prompts.insert(absolute(prompt));
            let found = host_setup::find_config(global, Some(host_setup::prompt_dir(prompt)));
            let files = [&found.explicit, &found.project, &found.user];
            self.configs
                .extend(files.into_iter().flatten().map(|path| absolute(path)));
        }
    }

    /// Adds what `other` read.
    fn absorb(&mut self, other: Inputs) {
        self.tests.extend(other.tests);
        self.prompts.extend(other.prompts);
        self.configs.extend(other.configs);
    }

    /// The folders to watch, each once (a folder named on the command line
    /// recursively, whether it is there or not, unless it is named like a test
    /// file; the folder of each other file alone).
    fn folders(&self, named: &[PathBuf]) -> Vec<(PathBuf, RecursiveMode)> {
        let mut recursive: Vec<PathBuf> = Vec::new();
        let mut single = BTreeSet::new();
        for path in named.iter().map(|p| absolute(p)) {
            if path.is_dir() || !path.exists() && !is_test_file(&path) {
                recursive.push(path);
            } else if let Some(parent) = path.parent() {
                single.insert(parent.to_path_buf());
            }
        }
        let files = self.tests.iter().chain(&self.prompts).chain(&self.configs);
        single.extend(files.filter_map(|f| f.parent().map(Path::to_path_buf)));
        single.retain(|dir| !recursive.iter().any(|r| dir.starts_with(r)));
        let mut folders: Vec<(PathBuf, RecursiveMode)> = recursive
            .into_iter()
            .map(|dir| (dir, RecursiveMode::Recursive))
            .collect();
        folders.extend(
            single
                .into_iter()
                .map(|dir| (dir, RecursiveMode::NonRecursive)),
        );
        folders
    }

    /// What the changed `paths` ask to run again, and those of them that matter:
    /// None when none does. (A project file created where there was none counts
    /// as a configuration.)
    fn scope_of(&self, paths: &BTreeSet<PathBuf>) -> Option<(Scope, BTreeSet<PathBuf>)> {
        let config = |p: &PathBuf| self.configs.contains(p) || is_project_file(p);
        let matters = |p: &PathBuf| {
            config(p) || self.tests.contains(p) || self.prompts.contains(p) || is_test_file(p)
        };
        let changed: BTreeSet<PathBuf> = paths.iter().filter(|p| matters(p)).cloned().collect();
        if changed.iter().any(config) {
            Some((Scope::Everything, changed))
        } else {
            (!changed.is_empty()).then(|| (Scope::Changed(changed.clone()), changed))
        }
    }
}

/// How a pass ended and what it read.
pub struct Pass {
    /// The pass's exit status.
    pub exit: Exit,
    /// The files it read.
    pub inputs: Inputs,
}

/// Runs the tests, then again on each change, until stopped or the watcher fails.
pub fn run(args: &TestArgs, global: &GlobalArgs) -> Exit {
    if args.format != TestFormat::Text {
        return super::refuse(args.format, WATCH_NEEDS_TEXT);
    }
    let (sender, events) = mpsc::channel();
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = match notify::RecommendedWatcher::new(sender, config) {
        Ok(watcher) => watcher,
        Err(error) => {
            eprintln!("promptforge: cannot watch the files: {error}");
            return Exit::Usage;
        }
    };
    let mut watches = Watches::default();
    let mut pass = super::pass(args, global, &Scope::Everything);
    loop {
        watches.sync(&mut watcher, &pass.inputs.folders(&args.paths));
        if !global.quiet {
            let count = watches.folders.len() + watches.sentinels.len();
            eprintln!("promptforge: {}", watching_line(count));
        }
        let (scope, changed) = loop {
            let Some(changed) = next_changes(&events) else {
                eprintln!("promptforge: the file watcher stopped");
                return Exit::Usage;
            };
            // A folder made again: what is in it now was never seen.
            if watches.sync(&mut watcher, &pass.inputs.folders(&args.paths)) {
                break (Scope::Everything, changed);
            }
            if let Some(found) = pass.inputs.scope_of(&changed) {
                break found;
            }
        };
        clear_screen();
        if !global.quiet {
            eprintln!("promptforge: {}", changed_line(&changed));
        }
        let next = super::pass(args, global, &scope);
        // What this pass did not read (another scope) still matters next time.
        pass.inputs.absorb(next.inputs);
    }
}

/// The folders watched, and the parents watched for the folders that are gone.
#[derive(Default)]
struct Watches {
    /// Each folder watched, as it is watched.
    folders: BTreeMap<PathBuf, RecursiveMode>,
    /// Folders to watch that are gone (deleted since, or not there yet).
    missing: BTreeSet<PathBuf>,
    /// The nearest existing parent of each missing folder, watched alone to
    /// see it made again.
    sentinels: BTreeSet<PathBuf>,
}

impl Watches {
    /// Watches each folder of `wanted` that exists and is not watched, and the
    /// nearest existing parent of each that does not (a folder deleted is no
    /// longer watched: its watch went with it). True when a folder that was
    /// gone is watched again.
    fn sync(&mut self, watcher: &mut impl Watcher, wanted: &[(PathBuf, RecursiveMode)]) -> bool {
        let mut back = false;
        // Bounded: each round either watches every folder there or finds one
        // made while its parent was being watched, which only a new folder can.
        for _ in 0..=wanted.len() {
            let mut again = false;
            for (folder, mode) in wanted {
                if folder.is_dir() {
                    if !self.folders.contains_key(folder) {
                        match watcher.watch(folder, *mode) {
                            Ok(()) => {
                                self.folders.insert(folder.clone(), *mode);
                                back |= self.missing.remove(folder);
                            }
                            Err(error) => {
                                eprintln!(
                                    "promptforge: cannot watch {}: {error}",
                                    folder.display()
                                );
                            }
                        }
                    }
                } else {
                    if self.folders.remove(folder).is_some() {
                        // Its watch is gone with it; unwatching only tidies.
                        let _ = watcher.unwatch(folder);
                    }
                    self.missing.insert(folder.clone());
                }
            }
            let needed: BTreeSet<PathBuf> = (self.missing.iter())
                .filter_map(|folder| folder.ancestors().skip(1).find(|a| a.is_dir()))
                .filter(|parent| !self.folders.contains_key(*parent))
                .map(Path::to_path_buf)
                .collect();
            for stale in self.sentinels.difference(&needed) {
                let _ = watcher.unwatch(stale);
            }
            self.sentinels.retain(|s| needed.contains(s));
            for parent in needed {
                if !self.sentinels.contains(&parent)
                    && watcher.watch(&parent, RecursiveMode::NonRecursive).is_ok()
                {
                    self.sentinels.insert(parent);
                    again = true;
                }
            }
            // A folder made before its parent's watch began is seen here.
            if !(again && self.missing.iter().any(|f| f.is_dir())) {
                break;
            }
        }
        back
    }
}

/// What the watcher says it watches, after each pass.
fn watching_line(folders: usize) -> String {
    let folders = if folders == 1 {
        "1 folder".to_owned()
    } else {
        format!("{folders} folders")
    };
    format!("watching {folders}; saving a test, prompt or configuration file runs its cases again (Ctrl-C stops)")
}

/// The line before a pass: the files that changed, by name, relative to the
/// working folder where they are under it.
fn changed_line(changed: &BTreeSet<PathBuf>) -> String {
    let cwd = std::env::current_dir().ok().map(|c| absolute(&c));
    let names: Vec<String> = changed
        .iter()
        .map(|path| {
            let shown = cwd
                .as_ref()
                .and_then(|c| path.strip_prefix(c).ok())
                .unwrap_or(path);
            shown.display().to_string()
        })
        .collect();
    format!("changed: {}", names.join(", "))
}

/// The paths the next save touched: the first event's, and those of every event
/// within [`SETTLE`] after it. None when the watcher is gone.
fn next_changes(
    events: &mpsc::Receiver<notify::Result<notify::Event>>,
) -> Option<BTreeSet<PathBuf>> {
    let mut changed = BTreeSet::new();
    loop {
        let event = if changed.is_empty() {
            events.recv().ok()?
        } else {
            match events.recv_timeout(SETTLE) {
                Ok(event) => event,
                Err(mpsc::RecvTimeoutError::Timeout) => return Some(changed),
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        };
        match event {
            Ok(event) if !matches!(event.kind, EventKind::Access(_)) => {
                changed.extend(event.paths.iter().map(|p| absolute(p)));
            }
            _ => {}
        }
    }
}

/// Clears the terminal before a new pass (nothing when stdout is not one).
fn clear_screen() {
    let mut out = io::stdout();
    if out.is_terminal() {
        let _ = out.write_all(b"\x1b[2J\x1b[H");
        let _ = out.flush();
    }
}

/// True for a project configuration file's name.
fn is_project_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "promptforge.toml")
}

/// True for a prompt test file's name.
fn is_test_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".test.yaml"))
}

/// The path made absolute and its folders resolved (a file that is gone keeps
/// its resolved folder), so the watcher's paths and the pass's compare equal.
fn absolute(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let joined = std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path));
    match (joined.parent(), joined.file_name()) {
        (Some(parent), Some(name)) => parent
            .canonicalize()
            .map_or(joined.clone(), |p| p.join(name)),
        _ => joined,
    }
}
