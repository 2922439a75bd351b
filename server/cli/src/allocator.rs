//! How the language server, a long-lived process, asks the C allocator to keep
//! memory.
//!
//! glibc's malloc gives each thread that allocates under contention an arena of
//! its own (up to eight per core). A language server allocates on its async
//! workers and its blocking threads in turn, so freed parses are scattered across
//! arenas and stay resident. One arena keeps what a closed or cold document freed
//! in one place to be reused: with 300 documents of 412 lines open, 17 KiB of
//! resident memory per document instead of 22.5 (`bench-table`, `rss_per_doc`).
//!
//! A keystroke frees the thousands of small values of the previous version's
//! analysis, then copies the text (a large request). With fastbins, glibc merges
//! every freed small chunk on that large request (`malloc_consolidate`); without
//! them, small frees go to the per-thread cache or are merged as they come. On a
//! 4,012-line prompt that is 5 to 8% less CPU per keystroke (1.10-1.13 ms ->
//! 1.02-1.05 ms over several runs) and the same resident memory.
//! Other C libraries and platforms keep their defaults.

/// Keeps the process's allocations in one glibc arena, without fastbins
/// (nothing elsewhere).
pub fn tune_for_server() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets tunables of the allocator; it is called before
    // any thread of ours is started.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MXFAST, 0);
    }
}
