//! The binary's allocator: the system's, except that on Linux a block of
//! 2 MiB or more gets a mapping of its own, which the kernel may back with
//! transparent huge pages (`madvise`).
//!
//! Why: fresh memory costs a page fault per 4 KiB page touched, and a big
//! reply is read whole into one block: 10 MB took 2,450 faults, on huge
//! pages it takes five. Measured on the bench's 10 MB replies, one run per
//! format: 13-23% fewer page faults (`whole` 9,158 -> 7,189, `hashline`
//! 16,264 -> 12,693). Any block where the kernel keeps huge pages off
//! behaves as before.
//!
//! A block from 128 KiB up to 2 MiB (a file read whole, a file's new
//! content lifted out of a format) stays the system allocator's, but its
//! pages are faulted in by one `madvise(MADV_POPULATE_WRITE)` rather than
//! one fault each: about 1 µs a page instead of 1.7 here. Such blocks are
//! written whole at once. The 20-hunk diff of `bench/run` row 3 took 962
//! page faults, now 738.

use std::alloc::{GlobalAlloc, Layout, System};

/// [`System`], with blocks of [`HUGE_PAGE`] bytes or more mapped for huge
/// pages on Linux.
pub struct HugePageAlloc;

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// Blocks are mapped, so they are page aligned; a stricter alignment goes
/// to the system allocator.
const PAGE: usize = 4096;

/// Blocks this big and below [`HUGE_PAGE`] are faulted in by one call.
const POPULATE: usize = 128 << 10;

fn populated(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= POPULATE && layout.size() < HUGE_PAGE
}

fn mapped(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= HUGE_PAGE && layout.align() <= PAGE
}

// SAFETY: each block is served by exactly one of `System` and `map`, chosen
// by `mapped(layout)`; Rust passes `dealloc` and `realloc` the layout the
// block was allocated with, so the same choice frees it.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            return huge::map(layout.size());
        }
        // SAFETY: the caller's contract for `alloc`, passed on.
        let ptr = unsafe { System.alloc(layout) };
        if populated(layout) && !ptr.is_null() {
            huge::populate(ptr, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // Not populated: a zeroed block is often a table written sparsely.
        // A fresh anonymous mapping reads as zeros.
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        if mapped(layout) { huge::map(layout.size()) } else { unsafe { System.alloc_zeroed(layout) } }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated with `layout`, so by the same side.
        if mapped(layout) { unsafe { huge::unmap(ptr, layout.size()) } } else { unsafe { System.dealloc(ptr, layout) } }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with this alignment is a
        // valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (mapped(layout), mapped(new_layout)) {
            // SAFETY: `ptr` came from `System` with `layout`.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            // SAFETY: `ptr` is a mapping of `layout.size()` bytes.
            (true, true) => unsafe { huge::remap(ptr, layout.size(), new_size) },
            _ => {
                // SAFETY: a fresh block of `new_layout`; `ptr` stays valid for
                // `layout.size()` bytes until it is freed below.
                let moved = unsafe { self.alloc(new_layout) };
                if !moved.is_null() {
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod huge {
    use super::{HUGE_PAGE, PAGE};

    fn pages(size: usize) -> usize {
        size.next_multiple_of(PAGE)
    }

    /// A fresh mapping of `size` bytes starting on a huge page boundary
    /// (only whole, aligned 2 MiB stretches can be huge), or null.
    pub fn map(size: usize) -> *mut u8 {
        let size = pages(size);
        let Some(reserve) = size.checked_add(HUGE_PAGE) else { return std::ptr::null_mut() };
        // SAFETY: a new private anonymous mapping; it aliases nothing.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                reserve,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        let base = base as usize;
        let start = base.next_multiple_of(HUGE_PAGE);
        // SAFETY: both trimmed stretches lie inside the mapping just made
        // and outside the block handed out.
        unsafe {
            if start > base {
                libc::munmap(base as *mut libc::c_void, start - base);
            }
            let tail = base + reserve - (start + size);
            if tail > 0 {
                libc::munmap((start + size) as *mut libc::c_void, tail);
            }
            // Advice only: a kernel without huge pages keeps small ones.
            libc::madvise(start as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
        }
        start as *mut u8
    }

    /// Fault in the whole pages of `ptr..ptr + size` at once.
    pub fn populate(ptr: *mut u8, size: usize) {
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + size) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside a block just allocated; the advice
            // changes no contents. Advice only: older kernels refuse it.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE) };
        }
    }

    /// Give back a block from [`map`].
    ///
    /// # Safety
    /// `ptr` and `size` are a block [`map`] or [`remap`] returned.
    pub unsafe fn unmap(ptr: *mut u8, size: usize) {
        // SAFETY: the caller's contract.
        unsafe { libc::munmap(ptr.cast(), pages(size)) };
    }

    /// Grow or shrink a block from [`map`], moving its pages rather than
    /// copying them; null when the kernel refuses.
    ///
    /// # Safety
    /// As [`unmap`].
    pub unsafe fn remap(ptr: *mut u8, size: usize, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract; the old block is not used after a
        // successful move.
        let moved = unsafe { libc::mremap(ptr.cast(), pages(size), pages(new_size), libc::MREMAP_MAYMOVE) };
        if moved == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        // SAFETY: the block just returned.
        unsafe { libc::madvise(moved, pages(new_size), libc::MADV_HUGEPAGE) };
        moved.cast()
    }
}

/// Elsewhere nothing is mapped: `mapped` is always false.
#[cfg(not(target_os = "linux"))]
mod huge {
    pub fn populate(_: *mut u8, _: usize) {}
    pub fn map(_: usize) -> *mut u8 {
        unreachable!("only Linux maps blocks")
    }
    pub unsafe fn unmap(_: *mut u8, _: usize) {
        unreachable!("only Linux maps blocks")
    }
    pub unsafe fn remap(_: *mut u8, _: usize, _: usize) -> *mut u8 {
        unreachable!("only Linux maps blocks")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SMALL: usize = 64 << 10;

    /// A block of `size` bytes from the allocator, filled with a pattern.
    fn filled(size: usize) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(size, 8).unwrap();
        let ptr = unsafe { HugePageAlloc.alloc(layout) };
        assert!(!ptr.is_null());
        fill(ptr, 0..size);
        (ptr, layout)
    }

    /// Write the pattern at the sampled offsets within `range`.
    fn fill(ptr: *mut u8, range: std::ops::Range<usize>) {
        for i in (0..range.end).step_by(997).filter(|i| range.contains(i)) {
            unsafe { ptr.add(i).write(pattern(i)) };
        }
    }

    fn pattern(i: usize) -> u8 {
        (i % 251) as u8
    }

    fn holds_pattern(ptr: *mut u8, size: usize) -> bool {
        (0..size).step_by(997).all(|i| unsafe { ptr.add(i).read() } == pattern(i))
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_mid_sized_block_is_resident_before_it_is_written() {
        let layout = Layout::from_size_align(512 << 10, 8).unwrap();
        assert!(populated(layout) && !mapped(layout));
        let ptr = unsafe { HugePageAlloc.alloc(layout) };
        assert!(!ptr.is_null());
        let start = (ptr as usize).next_multiple_of(PAGE);
        let pages = (ptr as usize + layout.size() - start) / PAGE;
        let mut resident = vec![0u8; pages];
        let status = unsafe { libc::mincore(start as *mut libc::c_void, pages * PAGE, resident.as_mut_ptr()) };
        assert_eq!(status, 0);
        assert!(resident.iter().all(|r| r & 1 == 1), "every whole page of the block is faulted in");
        fill(ptr, 0..layout.size());
        assert!(holds_pattern(ptr, layout.size()));
        unsafe { HugePageAlloc.dealloc(ptr, layout) };
    }

    #[test]
    fn a_big_block_is_its_own_mapping_on_a_huge_page_boundary() {
        let (ptr, layout) = filled(5 * HUGE_PAGE + 123);
        assert!(mapped(layout) == cfg!(target_os = "linux"));
        if mapped(layout) {
            assert_eq!(ptr as usize % HUGE_PAGE, 0, "only aligned 2 MiB stretches can be huge pages");
        }
        assert!(holds_pattern(ptr, layout.size()));
        unsafe { HugePageAlloc.dealloc(ptr, layout) };
    }

    #[test]
    fn small_blocks_and_strict_alignments_go_to_the_system_allocator() {
        assert!(!mapped(Layout::from_size_align(HUGE_PAGE - 1, 8).unwrap()));
        assert!(!mapped(Layout::from_size_align(HUGE_PAGE, 2 * PAGE).unwrap()));
        let (ptr, layout) = filled(SMALL);
        assert!(holds_pattern(ptr, SMALL));
        unsafe { HugePageAlloc.dealloc(ptr, layout) };
    }

    #[test]
    fn a_big_zeroed_block_reads_as_zeros() {
        let layout = Layout::from_size_align(3 * HUGE_PAGE, 8).unwrap();
        let ptr = unsafe { HugePageAlloc.alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        assert!((0..layout.size()).step_by(4093).all(|i| unsafe { ptr.add(i).read() } == 0));
        unsafe { HugePageAlloc.dealloc(ptr, layout) };
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// A block resized through any sizes, small and big, across the
        /// threshold both ways, keeps the bytes both sizes hold.
        #[test]
        fn resizing_keeps_the_contents(sizes in prop::collection::vec(
            prop_oneof![1usize..SMALL, HUGE_PAGE - 8..HUGE_PAGE + 8, HUGE_PAGE..4 * HUGE_PAGE],
            1..6,
        )) {
            let (mut ptr, mut layout) = filled(sizes[0]);
            for &size in &sizes[1..] {
                let kept = layout.size().min(size);
                ptr = unsafe { HugePageAlloc.realloc(ptr, layout, size) };
                prop_assert!(!ptr.is_null());
                prop_assert!(holds_pattern(ptr, kept));
                layout = Layout::from_size_align(size, 8).unwrap();
                fill(ptr, kept..size);
            }
            prop_assert!(holds_pattern(ptr, layout.size()));
            unsafe { HugePageAlloc.dealloc(ptr, layout) };
        }
    }
}
