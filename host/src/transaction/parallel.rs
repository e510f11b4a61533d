//! Per-file work of a write spread over the machine's cores when there is
//! enough of it (#27): comparing a large reply's files with their
//! snapshots, hashing, keeping and writing them are independent of each
//! other. The pool first wakes when the run writes, after the formats'
//! memory is freed: reading the snapshots on it too kept a thread alive
//! through the apply, 0.7 MiB more at the run's peak (`bench/run` row 7).

use rayon::prelude::*;

/// Bytes of file content below which the work stays on the calling
/// thread: waking the pool costs tens of microseconds, which a one-file
/// run or a few small files would pay for nothing.
const WORTH_SHARING: usize = 1 << 20;

/// `work` done on every item, results in the items' order: on the pool
/// when the items' `bytes` add up to [`WORTH_SHARING`], else here. `work`
/// must not care in what order, or on which thread, the items are done.
pub fn map<T, R>(items: &[T], bytes: impl Fn(&T) -> usize, work: impl Fn(&T) -> R + Sync) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    if items.len() < 2 || items.iter().map(bytes).sum::<usize>() < WORTH_SHARING {
        return items.iter().map(work).collect();
    }
    items.par_iter().map(&work).collect()
}

/// [`map`] for work that may fail. Every item is done, even after one
/// fails (callers write only what a journal or a later step governs); the
/// error returned is the first in the items' order, the one a loop
/// stopping at it would have met.
pub fn try_map<T, R, E>(
    items: &[T],
    bytes: impl Fn(&T) -> usize,
    work: impl Fn(&T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
{
    map(items, bytes, work).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_on_the_pool_and_off_it() {
        let items: Vec<usize> = (0..64).collect();
        for size in [1, WORTH_SHARING] {
            let doubled = map(&items, |_| size, |&i| i * 2);
            assert_eq!(doubled, items.iter().map(|i| i * 2).collect::<Vec<_>>(), "{size}");
        }
    }

    #[test]
    fn the_first_error_in_order_is_returned() {
        let items: Vec<usize> = (0..64).collect();
        let failed = try_map(&items, |_| WORTH_SHARING, |&i| if i % 10 == 7 { Err(i) } else { Ok(i) });
        assert_eq!(failed, Err(7));
    }
}
