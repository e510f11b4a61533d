//! Jobs run side by side: the calling thread and a few scoped threads take
//! them from one queue, so a thread that cannot be had only means fewer
//! hands, never a job left undone.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `job(0)` to `job(count - 1)`, each run once, on the calling thread or on
/// one of at most `threads - 1` more; the results in index order. A job's
/// panic is resumed on the calling thread.
pub fn side_by_side<T: Send>(count: usize, threads: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut mine = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            if at >= count {
                break mine;
            }
            mine.push((at, job(at)));
        }
    };
    let mut done = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads.min(count))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut done = work();
        for worker in workers {
            done.extend(worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        done
    });
    done.sort_unstable_by_key(|(at, _)| *at);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_once_and_results_keep_their_order() {
        for threads in 0..5 {
            let ran = AtomicUsize::new(0);
            let squares = side_by_side(9, threads, |at| {
                ran.fetch_add(1, Ordering::Relaxed);
                at * at
            });
            assert_eq!(squares, (0..9).map(|at| at * at).collect::<Vec<_>>());
            assert_eq!(ran.load(Ordering::Relaxed), 9);
        }
        assert!(side_by_side(0, 3, |at| at).is_empty());
    }
}
