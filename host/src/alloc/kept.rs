//! Freed mapped blocks, kept to be handed out again (#27).
//!
//! Why: a page the process has faulted in once costs nothing to use again,
//! while a fresh one costs a fault and the kernel zeroing it, which on the
//! bench's virtual machine runs at about 2 GB/s: half a millisecond per
//! megabyte. A run frees big blocks as it goes (a large reply once its
//! format has read it) and then allocates others (the files' snapshots and
//! new contents). A freed block is kept here, up to [`KEEP_AT_MOST`] bytes,
//! and later blocks are cut from what is kept before anything is mapped.
//!
//! Only addresses are kept: this module never touches the memory itself.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes kept at most. A run frees its reply (10 MB on the bench's large
/// replies) long before its peak, so what is kept is used again by then;
/// past this, a freed block goes back to the kernel as before.
pub const KEEP_AT_MOST: usize = 64 << 20;

/// Ranges kept at most; a freed block next to a kept range joins it.
const SLOTS: usize = 64;

/// `len` bytes at `start`; an empty slot has `len` 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    start: usize,
    len: usize,
}

const EMPTY: Range = Range { start: 0, len: 0 };

/// The kept ranges, behind a spin lock: an allocator cannot wait on
/// anything that might allocate, and each hold is a few dozen comparisons.
pub struct Kept {
    busy: AtomicBool,
    ranges: UnsafeCell<[Range; SLOTS]>,
}

// SAFETY: `ranges` is only reached through `Kept::with`, which holds `busy`.
unsafe impl Sync for Kept {}

impl Kept {
    pub const fn new() -> Self {
        Kept { busy: AtomicBool::new(false), ranges: UnsafeCell::new([EMPTY; SLOTS]) }
    }

    fn with<R>(&self, f: impl FnOnce(&mut [Range; SLOTS]) -> R) -> R {
        while self.busy.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
        // SAFETY: `busy` is held, so no other reference to `ranges` exists.
        let result = f(unsafe { &mut *self.ranges.get() });
        self.busy.store(false, Ordering::Release);
        result
    }

    /// `len` bytes cut from the start of the smallest kept range that holds
    /// them; the rest of that range stays kept.
    pub fn take(&self, len: usize) -> Option<usize> {
        self.with(|ranges| {
            let range = ranges.iter_mut().filter(|r| r.len >= len).min_by_key(|r| r.len)?;
            let start = range.start;
            *range = if range.len == len { EMPTY } else { Range { start: start + len, len: range.len - len } };
            Some(start)
        })
    }

    /// Keep `start..start + len`, joined to the kept ranges it touches.
    /// False when that would keep more than [`KEEP_AT_MOST`] bytes or no
    /// slot is left: the caller then unmaps it.
    pub fn give(&self, start: usize, len: usize) -> bool {
        self.with(|ranges| {
            if ranges.iter().map(|r| r.len).sum::<usize>() + len > KEEP_AT_MOST {
                return false;
            }
            let end = start + len;
            let before = ranges.iter().position(|r| r.len > 0 && r.start + r.len == start);
            let after = ranges.iter().position(|r| r.len > 0 && r.start == end);
            match (before, after) {
                (Some(b), Some(a)) => {
                    ranges[b].len += len + ranges[a].len;
                    ranges[a] = EMPTY;
                }
                (Some(b), None) => ranges[b].len += len,
                (None, Some(a)) => ranges[a] = Range { start, len: len + ranges[a].len },
                (None, None) => match ranges.iter_mut().find(|r| r.len == 0) {
                    Some(slot) => *slot = Range { start, len },
                    None => return false,
                },
            }
            true
        })
    }

    /// Empty the kept ranges, giving each to `each` (to be unmapped).
    pub fn drain(&self, mut each: impl FnMut(usize, usize)) {
        let ranges = self.with(|ranges| std::mem::replace(ranges, [EMPTY; SLOTS]));
        ranges.iter().filter(|r| r.len > 0).for_each(|r| each(r.start, r.len));
    }

    #[cfg(test)]
    pub(crate) fn ranges(&self) -> Vec<(usize, usize)> {
        let mut kept: Vec<_> =
            self.with(|ranges| ranges.iter().filter(|r| r.len > 0).map(|r| (r.start, r.len)).collect());
        kept.sort();
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: usize = 4096;

    #[test]
    fn a_block_is_cut_from_the_smallest_range_that_holds_it() {
        let kept = Kept::new();
        assert!(kept.give(100 * P, 10 * P) && kept.give(300 * P, 4 * P));
        assert_eq!(kept.take(3 * P), Some(300 * P));
        assert_eq!(kept.ranges(), [(100 * P, 10 * P), (303 * P, P)]);
        assert_eq!(kept.take(2 * P), Some(100 * P), "the one page left is too small");
        assert_eq!(kept.take(9 * P), None);
        assert_eq!(kept.take(P), Some(303 * P));
        assert_eq!(kept.ranges(), [(102 * P, 8 * P)]);
    }

    #[test]
    fn freed_blocks_join_the_ranges_they_touch() {
        let kept = Kept::new();
        assert!(kept.give(10 * P, P) && kept.give(12 * P, P));
        assert_eq!(kept.ranges(), [(10 * P, P), (12 * P, P)]);
        assert!(kept.give(11 * P, P), "the hole between two ranges");
        assert_eq!(kept.ranges(), [(10 * P, 3 * P)]);
        assert!(kept.give(9 * P, P) && kept.give(13 * P, P));
        assert_eq!(kept.ranges(), [(9 * P, 5 * P)]);
        assert_eq!(kept.take(5 * P), Some(9 * P));
        assert_eq!(kept.ranges(), []);
    }

    #[test]
    fn past_its_bound_or_its_slots_a_freed_block_is_not_kept() {
        let kept = Kept::new();
        assert!(kept.give(1 << 40, KEEP_AT_MOST - P));
        assert!(!kept.give(1 << 41, 2 * P), "over the bound");
        assert!(kept.give(1 << 41, P), "exactly the bound");
        let mut drained = Vec::new();
        kept.drain(|start, len| drained.push((start, len)));
        drained.sort();
        assert_eq!(drained, [(1 << 40, KEEP_AT_MOST - P), (1 << 41, P)]);
        assert_eq!(kept.ranges(), []);

        for slot in 0..SLOTS {
            assert!(kept.give(slot * 2 * P, P));
        }
        assert!(!kept.give(SLOTS * 4 * P, P), "no slot left for a range apart");
        assert!(kept.give(P, P), "a block that joins two ranges needs none");
    }
}
