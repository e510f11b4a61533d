//! The binary's allocator: the system's (dlmalloc in the musl build),
//! except that on Linux a block of 128 KiB or more gets a mapping of its
//! own, which is kept when freed and cut up for later blocks.
//!
//! A fresh block (a reply or a file read whole, a file's new content lifted
//! out of a format) has its pages faulted in by the call that maps it
//! (`MAP_POPULATE`) rather than one fault each: about 1 µs a page instead
//! of 1.7 here. Such blocks are written whole at once. The 20-hunk diff of
//! `bench/run` row 3 took 962 page faults, then 738.
//!
//! Its pages are small ones. Blocks of 2 MiB or more were once advised for
//! transparent huge pages, a fault per 2 MiB instead of 512; but a huge
//! page needs 2 MiB of contiguous free memory, and a virtual machine whose
//! kernel reports its free memory to the host (free page reporting, as on
//! the bench's machine) has given exactly those back: each is faulted in
//! again by the host, page by page, before the kernel can zero it. Twenty
//! alternating runs of each of the bench's 10 MB replies (#27, eighteenth
//! session): medians 122-148 ms with small pages against 146-221 ms with
//! huge ones (`editblock` 146 against 147, the others 16-35% less), the
//! slowest of twenty 169-183 ms against 299-422 ms. Only runs back to back,
//! while the previous run's huge pages are still warm, favour huge pages
//! (medians 4-12% lower, slowest runs 1.3-2.6 times as slow): not how
//! replies come.
//!
//! A freed block is kept ([`kept`]) and later blocks are cut from it: a
//! page faulted in once is free to use again, a fresh one is zeroed by the
//! kernel first. A large reply's memory, freed once its format has read it,
//! then holds the files' snapshots and new contents. Nine alternating runs
//! on each of the bench's 10 MB replies: 1-12% less time (`editblock` and
//! `hashline` least, `whole` most), peaks no higher. A plugin's memory,
//! once its instance is done, is kept so too ([`keep_pages`], in the binary,
//! whose allocator this is). [`release_kept`] gives what is kept back to the
//! kernel.

mod kept;

#[cfg(not(target_env = "musl"))]
use std::alloc::System;
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, Ordering};

// musl's allocator maps and unmaps a group of small blocks at a time (79
// `mmap` and 36 `munmap` calls on a one-edit run); dlmalloc grows one heap.
#[cfg(target_env = "musl")]
use dlmalloc::GlobalDlmalloc as System;

/// The system's allocator, with blocks of [`MAPPED_FROM`] bytes or more
/// mapped (on Linux), kept when freed and cut up for later blocks.
pub struct MappedAlloc;

/// Blocks are mapped, so they are page aligned; a stricter alignment goes
/// to the system allocator.
const PAGE: usize = 4096;

/// Blocks this big or bigger are mapped (and, once freed, kept).
pub const MAPPED_FROM: usize = 128 << 10;

/// Zeroed blocks up to this size are cut from kept pages where some are
/// kept (see [`MappedAlloc::alloc_zeroed`]).
const ZEROED_FROM_KEPT_AT_MOST: usize = 1 << 20;

/// The blocks freed and kept for later ones, shared by every thread.
static KEPT: kept::Kept = kept::Kept::new();

fn mapped(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= MAPPED_FROM && layout.align() <= PAGE
}

fn pages(size: usize) -> usize {
    size.next_multiple_of(PAGE)
}

/// Whether [`keep_pages`] keeps anything: only in a process whose global
/// allocator is [`MappedAlloc`], which alone cuts blocks from what is kept
/// (elsewhere the pages would only sit there).
static KEEPS_PAGES: AtomicBool = AtomicBool::new(false);

/// Say that [`MappedAlloc`] is the process's global allocator, so that
/// [`keep_pages`] keeps what it is given: the binary's `main` does.
pub fn serve_kept_pages(on: bool) {
    KEEPS_PAGES.store(on, Ordering::Relaxed);
}

/// Keep `len` bytes of readable, writable private anonymous memory at
/// `start` (page aligned, a whole number of pages) for later blocks, as a
/// freed block is kept: a plugin's memory once its instance is done, whose
/// pages are faulted in. False when not kept: the caller unmaps them.
///
/// # Safety
/// The range is a mapping (or part of one) the caller owns and nothing
/// uses any more; from now on the allocator owns it.
pub unsafe fn keep_pages(start: usize, len: usize) -> bool {
    cfg!(target_os = "linux")
        && KEEPS_PAGES.load(Ordering::Relaxed)
        && len >= MAPPED_FROM
        && start.is_multiple_of(PAGE)
        && len.is_multiple_of(PAGE)
        && KEPT.give(start, len)
}

/// Give the freed blocks kept for later ones back to the kernel: for a
/// process that goes on idle after a large run (the MCP server).
pub fn release_kept() {
    // SAFETY: each kept range is a whole number of pages of mappings this
    // allocator made, freed, and not handed out again since `drain` took it.
    KEPT.drain(|start, len| unsafe { mapping::unmap(start as *mut u8, len) });
}

// SAFETY: each block is served by exactly one of `System` and `mapping`,
// chosen by `mapped(layout)`; Rust passes `dealloc` and `realloc` the layout
// the block was allocated with, so the same choice frees it. A kept range
// is memory no block holds: a block is kept only once freed, and cut out
// of the kept ranges when handed out again.
unsafe impl GlobalAlloc for MappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !mapped(layout) {
            // SAFETY: the caller's contract for `alloc`, passed on.
            return unsafe { System.alloc(layout) };
        }
        match KEPT.take(pages(layout.size())) {
            Some(start) => start as *mut u8,
            None => mapping::map(layout.size(), true),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !mapped(layout) {
            // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // Kept pages are already in memory: zeroing them (0.4 µs a page on
        // the bench's machine) is cheaper than faulting in fresh ones (1.4
        // µs) and does not grow the process. The compiler turns an `alloc`
        // followed by zeroing into this call, so a buffer that is read into
        // comes here: a chunk for each file the guard compared was a fresh
        // mapping, 5.4 MiB over a 21-file run. A bigger block may be a table
        // written sparsely, which a fresh mapping (read as zeros, not
        // populated) faults in only where it is written.
        let size = pages(layout.size());
        match (size <= ZEROED_FROM_KEPT_AT_MOST).then(|| KEPT.take(size)).flatten() {
            Some(start) => {
                // SAFETY: `size` bytes at `start` are kept pages no block holds.
                unsafe { std::ptr::write_bytes(start as *mut u8, 0, size) };
                start as *mut u8
            }
            None => mapping::map(layout.size(), false),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !mapped(layout) {
            // SAFETY: `ptr` was allocated by `System` with `layout`.
            return unsafe { System.dealloc(ptr, layout) };
        }
        if !KEPT.give(ptr as usize, pages(layout.size())) {
            // SAFETY: `ptr` is a mapped block of `layout.size()` bytes.
            unsafe { mapping::unmap(ptr, layout.size()) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with this alignment is a
        // valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (mapped(layout), mapped(new_layout)) {
            // SAFETY: `ptr` came from `System` with `layout`.
            (false, false) => return unsafe { System.realloc(ptr, layout, new_size) },
            // Moved, not copied (a copy into kept memory measured 0.6 MiB
            // more at the peak of a large run, for no time saved).
            (true, true) => {
                // SAFETY: `ptr` is a mapped block of `layout.size()` bytes.
                let moved = unsafe { mapping::remap(ptr, layout.size(), new_size) };
                // A block cut across two kept ranges of separate mappings
                // cannot be moved by the kernel; it is copied below.
                if !moved.is_null() {
                    return moved;
                }
            }
            _ => {}
        }
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

#[cfg(target_os = "linux")]
mod mapping {
    use super::pages;

    /// A fresh block of `size` bytes, or null; its pages are faulted in by
    /// the mapping call itself when `populate` is set.
    pub fn map(size: usize, populate: bool) -> *mut u8 {
        let populate = if populate { libc::MAP_POPULATE } else { 0 };
        fresh(pages(size), populate).unwrap_or(std::ptr::null_mut())
    }

    /// A new private anonymous mapping of `len` bytes.
    fn fresh(len: usize, flags: libc::c_int) -> Option<*mut u8> {
        // SAFETY: a new mapping; it aliases nothing.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
                -1,
                0,
            )
        };
        (base != libc::MAP_FAILED).then_some(base.cast())
    }

    /// Give back a block from [`map`] (or a kept range).
    ///
    /// # Safety
    /// `ptr..ptr + size` is a block [`map`] or [`remap`] returned, or a part
    /// of blocks they returned, that nothing uses any more.
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
        moved.cast()
    }
}

/// Elsewhere nothing is mapped: `mapped` is always false.
#[cfg(not(target_os = "linux"))]
mod mapping {
    pub fn map(_: usize, _: bool) -> *mut u8 {
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
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::{Mutex, MutexGuard};

    const SMALL: usize = 64 << 10;
    /// Megabytes, as a large reply's blocks are.
    const BIG: usize = 2 << 20;

    /// The kept blocks are the process's: tests that allocate mapped blocks
    /// (or keep a plugin's pages) run one at a time, each from nothing kept.
    pub(crate) fn alone() -> MutexGuard<'static, ()> {
        static SERIAL: Mutex<()> = Mutex::new(());
        let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        release_kept();
        guard
    }

    /// A block of `size` bytes from the allocator, filled with a pattern.
    fn filled(size: usize) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(size, 8).unwrap();
        let ptr = unsafe { MappedAlloc.alloc(layout) };
        assert!(!ptr.is_null());
        fill(ptr, 0..size);
        (ptr, layout)
    }

    /// The offsets of a block's bytes the tests write and read: every
    /// 997th from the block's start, those within `range`.
    fn sampled(range: std::ops::Range<usize>) -> impl Iterator<Item = usize> {
        (0..range.end).step_by(997).filter(move |i| range.contains(i))
    }

    /// Write the pattern at the sampled offsets within `range`.
    fn fill(ptr: *mut u8, range: std::ops::Range<usize>) {
        sampled(range).for_each(|i| unsafe { ptr.add(i).write(pattern(i)) });
    }

    fn pattern(i: usize) -> u8 {
        (i % 251) as u8
    }

    fn holds_pattern(ptr: *mut u8, size: usize) -> bool {
        sampled(0..size).all(|i| unsafe { ptr.add(i).read() } == pattern(i))
    }

    fn within(ptr: *mut u8, size: usize, outer: (*mut u8, Layout)) -> bool {
        let (start, end) = (outer.0 as usize, outer.0 as usize + outer.1.size());
        ptr as usize >= start && ptr as usize + size <= end.next_multiple_of(PAGE)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_mapped_block_is_resident_before_it_is_written() {
        let _alone = alone();
        for size in [512 << 10, 5 * BIG + 123] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            assert!(mapped(layout));
            let ptr = unsafe { MappedAlloc.alloc(layout) };
            assert!(!ptr.is_null());
            let pages = pages(layout.size()) / PAGE;
            let mut resident = vec![0u8; pages];
            let status = unsafe { libc::mincore(ptr.cast(), pages * PAGE, resident.as_mut_ptr()) };
            assert_eq!(status, 0);
            assert!(resident.iter().all(|r| r & 1 == 1), "every page of a {size}-byte block is faulted in");
            fill(ptr, 0..layout.size());
            assert!(holds_pattern(ptr, layout.size()));
            unsafe { MappedAlloc.dealloc(ptr, layout) };
        }
    }

    #[test]
    fn small_blocks_and_strict_alignments_go_to_the_system_allocator() {
        assert!(!mapped(Layout::from_size_align(MAPPED_FROM - 1, 8).unwrap()));
        assert!(!mapped(Layout::from_size_align(BIG, 2 * PAGE).unwrap()));
        let (ptr, layout) = filled(SMALL);
        assert!(holds_pattern(ptr, SMALL));
        unsafe { MappedAlloc.dealloc(ptr, layout) };
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_freed_block_holds_the_blocks_allocated_after_it() {
        let _alone = alone();
        let freed = filled(10 << 20);
        unsafe { MappedAlloc.dealloc(freed.0, freed.1) };
        let (file, file_layout) = filled(600 << 10);
        let (content, content_layout) = filled(3 << 20);
        assert!(within(file, file_layout.size(), freed), "cut from the freed block");
        assert!(within(content, content_layout.size(), freed), "cut from what is left of it");
        assert!(holds_pattern(file, file_layout.size()) && holds_pattern(content, content_layout.size()));
        unsafe { MappedAlloc.dealloc(file, file_layout) };
        unsafe { MappedAlloc.dealloc(content, content_layout) };
        assert!(!KEPT.ranges().is_empty());
        release_kept();
        // Unmapped: the kernel may map the next block at the same address,
        // so what is kept is asked, not where the next block lands.
        assert_eq!(KEPT.ranges(), [], "released");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn pages_are_kept_only_where_this_allocator_serves_them() {
        let _alone = alone();
        let len = 2 * MAPPED_FROM;
        let pages = mapping::map(len, true) as usize;
        serve_kept_pages(false);
        assert!(!unsafe { keep_pages(pages, len) }, "not kept: nothing would cut blocks from them");
        serve_kept_pages(true);
        assert!(!unsafe { keep_pages(pages + 1, len - PAGE) }, "not page aligned");
        assert!(unsafe { keep_pages(pages, len) });
        serve_kept_pages(false);
        let (block, layout) = filled(len);
        assert_eq!(block as usize, pages, "cut from the kept pages");
        unsafe { MappedAlloc.dealloc(block, layout) };
        release_kept();
    }

    #[test]
    fn a_big_zeroed_block_reads_as_zeros_even_after_a_written_one_is_freed() {
        let _alone = alone();
        let dirty = filled(3 * BIG);
        unsafe { MappedAlloc.dealloc(dirty.0, dirty.1) };
        for size in [MAPPED_FROM, ZEROED_FROM_KEPT_AT_MOST, 3 * BIG] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            let ptr = unsafe { MappedAlloc.alloc_zeroed(layout) };
            assert!(!ptr.is_null());
            assert!(all_zero(ptr, size));
            // Where the kept pages are a process's own (Linux): a block up to
            // the bound is cut from them, a bigger one is a fresh mapping.
            if cfg!(target_os = "linux") {
                assert_eq!(within(ptr, size, dirty), size <= ZEROED_FROM_KEPT_AT_MOST, "{size} bytes");
            }
            unsafe { MappedAlloc.dealloc(ptr, layout) };
        }
        release_kept();
    }

    /// One step of [`live_blocks_never_share_a_byte`]: allocate a block of a
    /// size (zeroed or not), or free or resize the live block at an index
    /// (modulo their count).
    #[derive(Debug, Clone)]
    enum Step {
        Alloc(usize),
        AllocZeroed(usize),
        Free(usize),
        Resize(usize, usize),
    }

    fn sizes() -> impl Strategy<Value = usize> {
        prop_oneof![1usize..SMALL, MAPPED_FROM - 8..MAPPED_FROM + 8, MAPPED_FROM..BIG, BIG..4 * BIG]
    }

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        let step = prop_oneof![
            sizes().prop_map(Step::Alloc),
            sizes().prop_map(Step::AllocZeroed),
            any::<usize>().prop_map(Step::Free),
            (any::<usize>(), sizes()).prop_map(|(i, size)| Step::Resize(i, size)),
        ];
        prop::collection::vec(step, 1..24)
    }

    /// Write `tag` at the sampled offsets within `range`.
    fn tag(ptr: *mut u8, range: std::ops::Range<usize>, tag: u8) {
        sampled(range).for_each(|i| unsafe { ptr.add(i).write(tag) });
    }

    /// Every byte of the first `size` is zero: all of them, since what a
    /// freed block held sits at offsets of its own.
    fn all_zero(ptr: *mut u8, size: usize) -> bool {
        // SAFETY: the caller's block holds `size` bytes; page aligned when mapped.
        let (head, words, tail) = unsafe { std::slice::from_raw_parts(ptr, size).align_to::<u64>() };
        head.iter().chain(tail).all(|&b| b == 0) && words.iter().all(|&w| w == 0)
    }

    /// Every sampled byte of the first `size` holds `tag`.
    fn holds_tag(ptr: *mut u8, size: usize, tag: u8) -> bool {
        sampled(0..size).all(|i| unsafe { ptr.add(i).read() } == tag)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// A block resized through any sizes, small and big, across the
        /// thresholds both ways, keeps the bytes both sizes hold.
        #[test]
        fn resizing_keeps_the_contents(sizes in prop::collection::vec(sizes(), 1..6)) {
            let _alone = alone();
            let (mut ptr, mut layout) = filled(sizes[0]);
            for &size in &sizes[1..] {
                let kept = layout.size().min(size);
                ptr = unsafe { MappedAlloc.realloc(ptr, layout, size) };
                prop_assert!(!ptr.is_null());
                prop_assert!(holds_pattern(ptr, kept));
                layout = Layout::from_size_align(size, 8).unwrap();
                fill(ptr, kept..size);
            }
            prop_assert!(holds_pattern(ptr, layout.size()));
            unsafe { MappedAlloc.dealloc(ptr, layout) };
        }

        /// Blocks cut from freed ones, freed again, joined and resized never
        /// overlap a live block: each keeps the tag written into it.
        #[test]
        fn live_blocks_never_share_a_byte(steps in steps()) {
            let _alone = alone();
            let mut blocks: Vec<(*mut u8, Layout, u8)> = Vec::new();
            for (n, step) in steps.into_iter().enumerate() {
                let next = n as u8 + 1;
                match step {
                    Step::Alloc(size) => {
                        let layout = Layout::from_size_align(size, 8).unwrap();
                        let ptr = unsafe { MappedAlloc.alloc(layout) };
                        prop_assert!(!ptr.is_null());
                        tag(ptr, 0..size, next);
                        blocks.push((ptr, layout, next));
                    }
                    Step::AllocZeroed(size) => {
                        let layout = Layout::from_size_align(size, 8).unwrap();
                        let ptr = unsafe { MappedAlloc.alloc_zeroed(layout) };
                        prop_assert!(!ptr.is_null());
                        prop_assert!(all_zero(ptr, size), "a zeroed block reads as zeros");
                        tag(ptr, 0..size, next);
                        blocks.push((ptr, layout, next));
                    }
                    Step::Free(i) if !blocks.is_empty() => {
                        let (ptr, layout, _) = blocks.swap_remove(i % blocks.len());
                        unsafe { MappedAlloc.dealloc(ptr, layout) };
                    }
                    Step::Resize(i, size) if !blocks.is_empty() => {
                        let at = i % blocks.len();
                        let (ptr, layout, old) = blocks[at];
                        let kept = layout.size().min(size);
                        let ptr = unsafe { MappedAlloc.realloc(ptr, layout, size) };
                        prop_assert!(!ptr.is_null());
                        prop_assert!(holds_tag(ptr, kept, old), "resizing kept the block's bytes");
                        tag(ptr, 0..size, next);
                        blocks[at] = (ptr, Layout::from_size_align(size, 8).unwrap(), next);
                    }
                    _ => {}
                }
                for &(ptr, layout, tag) in &blocks {
                    prop_assert!(holds_tag(ptr, layout.size(), tag), "a live block kept its bytes");
                }
            }
            for (ptr, layout, _) in blocks {
                unsafe { MappedAlloc.dealloc(ptr, layout) };
            }
        }
    }
}
