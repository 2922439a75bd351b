//! Fault injection for the protocol tests: make a named request handler panic or
//! wait, to test that a panic is caught, logged and answered with an error, and
//! that `$/cancelRequest` answers a slow request. Compiled in only with the
//! `fault-injection` feature (the tests' build of the binary); a normal build
//! never reads the variables and injects nothing.

/// The environment variable that makes the named request handler panic (`hover`,
/// `completion`, ...).
pub const PANIC_ENV: &str = "PROMPTFORGE_LSP_PANIC";

/// The environment variable that makes the named request handler wait
/// [`SLOW_DELAY`] before it works.
pub const SLOW_ENV: &str = "PROMPTFORGE_LSP_SLOW";

/// How long a handler named by [`SLOW_ENV`] waits.
pub const SLOW_DELAY: std::time::Duration = std::time::Duration::from_secs(5);

/// The faults asked for, read once when the server starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    panic_on: Option<String>,
    slow_on: Option<String>,
}

impl Faults {
    /// The faults the environment asks for (none without the `fault-injection` feature).
    pub fn from_env() -> Self {
        #[cfg(feature = "fault-injection")]
        {
            Faults {
                panic_on: std::env::var(PANIC_ENV).ok(),
                slow_on: std::env::var(SLOW_ENV).ok(),
            }
        }
        #[cfg(not(feature = "fault-injection"))]
        {
            Faults::default()
        }
    }

    /// True when the handler `name` is to panic.
    pub fn panics(&self, name: &str) -> bool {
        self.panic_on.as_deref() == Some(name)
    }

    /// True when the handler `name` is to wait [`SLOW_DELAY`] first.
    pub fn slow(&self, name: &str) -> bool {
        self.slow_on.as_deref() == Some(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_normal_build_injects_nothing_and_the_feature_reads_the_environment() {
        std::env::set_var(PANIC_ENV, "hover");
        let faults = Faults::from_env();
        std::env::remove_var(PANIC_ENV);
        assert_eq!(faults.panics("hover"), cfg!(feature = "fault-injection"));
        assert!(!faults.slow("hover"));
    }
}
