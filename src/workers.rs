//! Running one job on several threads for the length of a call.

/// Runs `work` on this thread and on up to `extra` more threads named `name`,
/// and returns once every one of them has exited.
///
/// `work` is the same on every thread; the threads share what it borrows (a
/// queue of parts, say) and each returns when nothing is left. A thread the
/// system refuses to start is done without: the others, this one at least, take
/// its share. Each started thread is joined (not only waited for, as
/// [`std::thread::scope`] does on its own), so its thread-local storage is freed
/// when this returns; a panic in `work` on another thread is raised again here.
pub(crate) fn run_on_threads(name: &str, extra: usize, work: impl Fn() + Sync) {
    if extra == 0 {
        return work();
    }
    std::thread::scope(|scope| {
        let started: Vec<_> = (0..extra)
            .map_while(|_| {
                std::thread::Builder::new()
                    .name(name.to_string())
                    .spawn_scoped(scope, &work)
                    .ok()
            })
            .collect();
        work();
        for thread in started {
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::run_on_threads;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_part_is_done_once_whatever_the_thread_count() {
        for extra in [0, 1, 3, 16] {
            let next = AtomicUsize::new(0);
            let done: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
            run_on_threads("test-worker", extra, || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(d) = done.get(i) else { break };
                d.fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                done.iter().all(|d| d.load(Ordering::Relaxed) == 1),
                "{extra} extra threads"
            );
        }
    }

    #[test]
    fn a_panic_on_a_worker_reaches_the_caller() {
        let calls = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(|| {
            run_on_threads("test-worker", 1, || {
                // The first call panics; on this thread or the other.
                if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("worker failed");
                }
            })
        });
        assert!(caught.is_err());
    }
}
