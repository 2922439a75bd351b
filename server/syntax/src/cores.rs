//! How many cores the process may use, for the readers that share work out
//! among threads (windows of a large text, Lua blocks' facts).

/// The cores this process may use, asked once: the answer reads cgroup files,
/// which a keystroke should not.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
