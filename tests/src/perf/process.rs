//! Whole-process measurements: how long a command ran and the most memory it held.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one whole-process run cost.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// Wall time from spawn to exit.
    pub wall: Duration,
    /// The peak resident set of the process, in KiB (`ru_maxrss`).
    pub peak_kib: u64,
}

/// Runs `program ARGS...` in `dir` (isolated from the machine's configuration,
/// output discarded) and returns its cost; panics when it does not exit with one
/// of `codes`, so a broken workload never yields a figure.
pub fn cost(program: &Path, dir: &Path, args: &[&str], codes: &[i32]) -> Cost {
    let mut command = Command::new(program);
    crate::isolate(&mut command)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    // Reaped by `wait4` below, which also gives the peak memory `Child::wait` cannot.
    #[allow(clippy::zombie_processes)]
    let child = command.spawn().expect("the promptforge binary starts");
    let (code, peak_kib) = wait_with_peak(child.id());
    let wall = started.elapsed();
    assert!(
        code.is_some_and(|c| codes.contains(&c)),
        "promptforge {args:?} exited with {code:?}, expected one of {codes:?}"
    );
    Cost { wall, peak_kib }
}

/// The cheapest of `times` runs (least wall time; the largest peak memory seen).
pub fn best_of(times: usize, mut once: impl FnMut() -> Cost) -> Cost {
    let mut best = once();
    for _ in 1..times {
        let next = once();
        best = Cost {
            wall: best.wall.min(next.wall),
            peak_kib: best.peak_kib.max(next.peak_kib),
        };
    }
    best
}

/// Waits for process `pid` (a child of this one) and returns its exit code and
/// its peak resident set in KiB, from `wait4`'s resource usage.
fn wait_with_peak(pid: u32) -> (Option<i32>, u64) {
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of a plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; both pointers are to live locals.
    let waited = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid as libc::pid_t, "wait4 on the child failed");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // On Linux `ru_maxrss` is in KiB.
    (code, usage.ru_maxrss as u64)
}

/// The resident set of a running process in KiB (`VmRSS`), Linux only.
pub fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("/proc/PID/status is readable (Linux)");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS has a number of KiB")
}
