//! How a command ends: one exit status type for every command (`host.md` §4).

/// The exit status of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success: clean, listed, the run gave its result (0).
    Ok,
    /// Problems were printed, or the run failed (1).
    Problems,
    /// A usage error: a path that cannot be read, bad arguments, no output (2).
    Usage,
    /// The run was cancelled (130, as for SIGINT).
    Cancelled,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Problems => 1,
            Exit::Usage => 2,
            Exit::Cancelled => 130,
        }
    }
}
