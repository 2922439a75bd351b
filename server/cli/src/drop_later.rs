//! Values freed on a thread of their own. Freeing the analysis of a large prompt
//! (its sections, blocks and Lua facts) takes a few milliseconds per MiB, which
//! `check` need not wait for: it goes on with the next file, or prints and exits
//! (a value still queued at exit is left to the operating system). A small
//! analysis is freed in place: handing it over costs more than freeing it.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Mutex, OnceLock};

/// Something to free.
type Garbage = Box<dyn Send>;

/// How many values may wait while one is being freed: none, so that at most one
/// analysis is being freed while the next file is read (a sender waits until the
/// thread is free).
const QUEUE: usize = 0;

/// The analysis of a text this long or longer is freed on the freeing thread;
/// a shorter one is freed faster here than handed over (1,000 small prompts).
pub const LATER_FROM: usize = 256 * 1024;

/// Frees `value`, the analysis of `text_len` bytes of text: here when it is
/// small, else on the freeing thread (or here if that thread cannot start).
pub fn drop_analysis<T: Send + 'static>(value: T, text_len: usize) {
    if text_len < LATER_FROM {
        return drop(value);
    }
    drop_later(value);
}

/// Frees `value` on the freeing thread, or here if that thread cannot start.
pub fn drop_later<T: Send + 'static>(value: T) {
    static QUEUE_IN: OnceLock<Option<Mutex<SyncSender<Garbage>>>> = OnceLock::new();
    let sender = QUEUE_IN.get_or_init(|| {
        let (sender, receiver) = sync_channel::<Garbage>(QUEUE);
        std::thread::Builder::new()
            .name("drop-later".to_owned())
            .spawn(move || receiver.into_iter().for_each(drop))
            .ok()
            .map(|_| Mutex::new(sender))
    });
    let garbage: Garbage = Box::new(value);
    let Some(sender) = sender else {
        return drop(garbage);
    };
    let sender = sender.lock().unwrap_or_else(|p| p.into_inner()).clone();
    // A send fails only when the thread is gone; the value is then freed here.
    if let Err(returned) = sender.send(garbage) {
        drop(returned.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn every_value_given_is_freed() {
        let freed = Arc::new(AtomicUsize::new(0));
        for _ in 0..10 {
            drop_later(Counted(Arc::clone(&freed)));
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while freed.load(Ordering::SeqCst) < 10 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(freed.load(Ordering::SeqCst), 10);
    }
}
