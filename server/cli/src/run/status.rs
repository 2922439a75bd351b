//! What the command line shows while a run goes: `log: ` lines and notices on
//! stderr, and on a terminal a live status line (section, model round, tool calls
//! in flight, elapsed) that disappears when the run ends.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use promptforge_engine::RunEvents;

/// How often the status line redraws (its spinner and elapsed time).
const TICK: Duration = Duration::from_millis(120);

/// The run's listener for the command line.
pub struct CliEvents {
    bar: Option<ProgressBar>,
    print_log: bool,
    quiet: bool,
    state: Mutex<Status>,
}

/// What the status line shows.
#[derive(Default)]
struct Status {
    /// The section running (`""`: the H1 pass).
    section: String,
    /// The run's model rounds so far.
    round: u64,
    /// Tool calls started and not yet ended.
    in_flight: u64,
}

impl CliEvents {
    /// A listener; `live` shows the status line, `print_log` prints `log: ` lines.
    pub fn new(live: bool, print_log: bool, quiet: bool) -> Self {
        let bar = live.then(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(TICK);
            bar
        });
        CliEvents {
            bar,
            print_log,
            quiet,
            state: Mutex::new(Status::default()),
        }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    fn refresh(&self) {
        let Some(bar) = &self.bar else { return };
        let Ok(state) = self.state.lock() else { return };
        let section = if state.section.is_empty() {
            "H1 pass"
        } else {
            state.section.as_str()
        };
        bar.set_message(format!(
            "section: {section} · model round: {} · tool calls in flight: {}",
            state.round, state.in_flight
        ));
    }

    /// The handle that hides the status line while the operator is asked.
    pub fn pause(&self) -> StatusPause {
        StatusPause(self.bar.clone())
    }

    /// Removes the status line.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Hides the live status line while the operator answers a question, so the
/// question stays on the terminal (none without a status line).
#[derive(Clone, Default)]
pub struct StatusPause(Option<ProgressBar>);

impl StatusPause {
    /// Runs `ask` with the status line cleared and not redrawn, then shows it again.
    pub fn around<R>(&self, ask: impl FnOnce() -> R) -> R {
        let Some(bar) = &self.0 else {
            return ask();
        };
        bar.disable_steady_tick();
        bar.set_draw_target(ProgressDrawTarget::hidden());
        // The line drawn last stays on the terminal: erase it.
        eprint!("\r\x1b[2K");
        let answer = ask();
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(TICK);
        answer
    }
}

impl RunEvents for CliEvents {
    fn log(&self, line: &str) {
        if self.print_log {
            self.line(format!("log: {line}"));
        }
    }

    fn notice(&self, text: &str) {
        if !self.quiet {
            self.line(format!("note: {text}"));
        }
    }

    fn section(&self, heading: &str) {
        if let Ok(mut state) = self.state.lock() {
            state.section = heading.to_owned();
        }
        self.refresh();
    }

    fn model_round(&self, _label: &str, round: u64) {
        if let Ok(mut state) = self.state.lock() {
            state.round = round;
        }
        self.refresh();
    }

    fn tool_call(&self, _alias: &str, _path: Option<&str>, _call_id: &str) {
        if let Ok(mut state) = self.state.lock() {
            state.in_flight = state.in_flight.saturating_add(1);
        }
        self.refresh();
    }

    fn tool_result(&self, _alias: &str, _call_id: &str, _ok: bool) {
        if let Ok(mut state) = self.state.lock() {
            state.in_flight = state.in_flight.saturating_sub(1);
        }
        self.refresh();
    }
}
