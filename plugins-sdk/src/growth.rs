//! Where a plugin's heap gets more memory: the wasm memory, grown to whole
//! 2 MiB stretches (#27).
//!
//! talc's own source grows the memory by just what the allocation needs,
//! often one 64 KiB page, and each growth is a call into the host, which
//! opens the new pages (those past the memory's size must trap) and faults
//! them in: `apply-patch`'s 10 MB reply grew 115 times by one page. Ending
//! every growth on a 2 MiB boundary of the memory makes a few growths of
//! that size or more instead; at most one stretch is not yet used. (The
//! stretches were first chosen so the host could back each with a
//! transparent huge page; it no longer does, see the host's allocator.) A
//! small run's memory (under 8 MiB) still grows by what it needs: faulting
//! in a whole stretch for it cost the 20-hunk diff of `bench/run` row 3 a
//! quarter of a millisecond.

use core::alloc::Layout;
use core::ptr::NonNull;

use talc::base::Talc;
use talc::base::binning::Binning;

/// Wasm pages per 2 MiB.
const STRETCH_PAGES: usize = 32;
/// A wasm page.
const PAGE: usize = 64 << 10;
/// Wasm pages of memory from which growths are rounded up to stretches.
const STRETCH_FROM_PAGES: usize = (8 << 20) / PAGE;

/// A talc source that extends one heap by what an allocation needs, and by
/// whole 2 MiB stretches of the wasm memory once that passes 8 MiB (a new
/// heap only when something else grew the memory between).
#[derive(Debug, Default)]
pub struct StretchGrowth {
    end: Option<NonNull<u8>>,
}

impl StretchGrowth {
    pub const fn new() -> Self {
        StretchGrowth { end: None }
    }
}

/// Pages that surely fit `layout` in a heap extended by them: its size, its
/// alignment and talc's chunk overheads, over-counted (a stretch is
/// rounded up to anyway).
fn pages_for(layout: Layout) -> usize {
    (layout.size() + layout.align() + 256).div_ceil(PAGE)
}

// SAFETY: the source allocates nothing; it only grows the wasm memory and
// hands talc the new bytes, extending the heap it gave before when they
// follow it.
unsafe impl talc::source::Source for StretchGrowth {
    fn acquire<B: Binning>(talc: &mut Talc<Self, B>, layout: Layout) -> Result<(), ()> {
        let size = core::arch::wasm32::memory_size::<0>();
        let needed = pages_for(layout);
        let rounded =
            if size < STRETCH_FROM_PAGES { needed } else { (size + needed).next_multiple_of(STRETCH_PAGES) - size };
        // Near the memory's limit, the rounding may not fit where the need does.
        let (prev, delta) = match core::arch::wasm32::memory_grow::<0>(rounded) {
            usize::MAX => match core::arch::wasm32::memory_grow::<0>(needed) {
                usize::MAX => return Err(()),
                prev => (prev, needed),
            },
            prev => (prev, rounded),
        };
        let base = (prev * PAGE) as *mut u8;
        let end = base.wrapping_add(delta * PAGE);
        if let Some(old_end) = talc.source.end.take()
            && old_end.as_ptr() == base
        {
            // SAFETY: `base..end` is fresh memory right after the heap's end.
            talc.source.end = Some(unsafe { talc.extend(old_end, end) });
            return Ok(());
        }
        // SAFETY: `base..end` is fresh memory nothing else uses.
        talc.source.end = unsafe { talc.claim(base, delta * PAGE) };
        Ok(())
    }
}
