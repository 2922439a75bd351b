//! The runtime the runs go on: threads of their own, at a lower scheduling
//! priority (nice 10, on Linux, where a thread's nice value is its own), so that
//! a run that computes (a Lua loop that never suspends) leaves the handlers and
//! the diagnostics their threads and their share of the cores.

use std::future::Future;

use tokio::runtime::{Builder, Handle, Runtime};

/// The threads of the runtime.
const THREADS: usize = 2;

/// How much lower than the server's the runs' priority is (a nice increment).
#[cfg(target_os = "linux")]
const NICE: i32 = 10;

/// The runs' runtime; without one (it could not be built) runs go on the
/// server's own.
pub struct RunRuntime {
    runtime: Option<Runtime>,
}

/// Lowers the calling thread's priority; a refusal leaves it as it is.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // `setpriority(PRIO_PROCESS, 0, ..)` changes the calling thread only on Linux.
        let _ = rustix::process::setpriority_process(None, NICE);
    }
}

impl RunRuntime {
    /// Builds the runtime.
    pub fn new() -> Self {
        let runtime = Builder::new_multi_thread()
            .worker_threads(THREADS)
            .thread_name("promptforge-run")
            .on_thread_start(lower_priority)
            .enable_all()
            .build()
            .ok();
        RunRuntime { runtime }
    }

    /// Spawns `future` on the runs' runtime (or the current one).
    pub fn spawn<F>(&self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match &self.runtime {
            Some(runtime) => {
                runtime.spawn(future);
            }
            None => {
                if let Ok(handle) = Handle::try_current() {
                    handle.spawn(future);
                }
            }
        }
    }
}

impl Default for RunRuntime {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for RunRuntime {
    fn drop(&mut self) {
        // Dropped inside the server's runtime, where a blocking shutdown is refused.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
