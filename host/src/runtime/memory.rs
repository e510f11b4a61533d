//! A plugin's linear memory, mapped by us rather than by wasmtime so that
//! its pages are faulted in ahead of use (#27).
//!
//! Why: a plugin's memory grows when it needs room for what it is about to
//! write (a file lowered into it, the new content it builds), so every page
//! of a growth is touched at once, one fault each: on the 20-hunk diff of
//! `bench/run` row 3, 354 of the run's 750 faults. Here a growth is faulted
//! in by one `madvise(MADV_POPULATE_WRITE)`, about 1 µs a page instead of
//! 1.7.
//!
//! In small pages: a growth advised for transparent huge pages takes whole
//! 2 MiB stretches of free memory, which a virtual machine reporting its
//! free memory to the host has given back, and each is faulted in again by
//! the host before the kernel can zero it (see the allocator, `alloc.rs`).
//!
//! When the instance is done, the pages its growths faulted in go to the
//! allocator's kept blocks (`alloc::keep_pages`) rather than back to the
//! kernel: the host's next blocks (a large run's report, what it writes)
//! are cut from them instead of from fresh pages, which the kernel zeroes
//! first. Ten alternating runs on each of `bench/run`'s 10 MB replies
//! (#27): CPU time 1-8% lower (`tool-calls` 101.3 -> 93.3 ms, `compact`
//! 106.9 -> 98.9), `whole` even.
//!
//! The sandbox is the same as wasmtime's own mapping: the whole reservation
//! is mapped inaccessible, with a guard region before and after it; only
//! the memory's current size is readable and writable, so the compiled
//! code's elided bounds checks still trap past it. The memory never moves.

use std::sync::Arc;

use wasmtime::{LinearMemory, MemoryCreator, MemoryType};

/// Growths up to this size are faulted in at once. A bigger one is left to
/// fault page by page: a plugin that reserves far more than it writes
/// should not be charged the difference.
const POPULATE_AT_MOST: usize = 64 << 20;

/// The creator an engine's config is given (`Config::with_host_memory`).
pub fn creator() -> Arc<dyn MemoryCreator> {
    Arc::new(EagerMemoryCreator)
}

struct EagerMemoryCreator;

// SAFETY: every memory made is a fresh private anonymous mapping owned by
// the `EagerMemory` returned, zero-filled, page aligned, with the guard
// bytes asked for left inaccessible after its reservation; it never moves.
unsafe impl MemoryCreator for EagerMemoryCreator {
    fn new_memory(
        &self,
        _ty: MemoryType,
        minimum: usize,
        _maximum: Option<usize>,
        reserved: Option<usize>,
        guard: usize,
    ) -> Result<Box<dyn LinearMemory>, String> {
        EagerMemory::new(minimum, reserved.unwrap_or(0), guard)
            .map(|memory| Box::new(memory) as Box<dyn LinearMemory>)
            .map_err(|e| format!("could not map a plugin's memory: {e}"))
    }
}

/// One linear memory: `capacity` bytes reserved at `base`, of which the
/// first `size` (rounded up to pages) are accessible.
struct EagerMemory {
    mapping: Mapping,
    base: usize,
    size: usize,
    capacity: usize,
    /// Where the growths start (the minimum, in pages), while each growth
    /// has been faulted in; `None` once one was left to fault page by page.
    grown_from: Option<usize>,
}

impl EagerMemory {
    fn new(minimum: usize, reserved: usize, guard: usize) -> std::io::Result<Self> {
        let capacity = pages(reserved.max(minimum));
        // Guard before as after, as wasmtime's own mapping has.
        let total = [guard, capacity, guard]
            .into_iter()
            .try_fold(0usize, usize::checked_add)
            .ok_or_else(|| std::io::Error::other("the reservation does not fit the address space"))?;
        let mapping = Mapping::reserve(total)?;
        let base = mapping.start + guard;
        mapping.open(base, pages(minimum))?;
        Ok(EagerMemory { mapping, base, size: minimum, capacity, grown_from: Some(pages(minimum)) })
    }
}

// SAFETY: `base..base + capacity` is a reservation this memory alone owns;
// the accessible part only grows, in place, and is unmapped on drop.
unsafe impl LinearMemory for EagerMemory {
    fn byte_size(&self) -> usize {
        self.size
    }

    fn byte_capacity(&self) -> usize {
        self.capacity
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        let (from, to) = (pages(self.size), pages(new_size));
        if to > self.capacity {
            wasmtime::bail!("a plugin's memory cannot grow past its reservation of {} bytes", self.capacity);
        }
        if to > from {
            self.mapping.open(self.base + from, to - from)?;
            // Advice only: a kernel before 5.14 refuses it, and the pages
            // then fault in as they are touched.
            let faulted_in = to - from <= POPULATE_AT_MOST
                && self.mapping.advise(self.base + from, to - from, libc::MADV_POPULATE_WRITE);
            if !faulted_in {
                self.grown_from = None;
            }
        }
        self.size = new_size;
        Ok(())
    }

    fn as_ptr(&self) -> *mut u8 {
        self.base as *mut u8
    }
}

fn pages(bytes: usize) -> usize {
    bytes.next_multiple_of(page_size())
}

/// The system's page size (also what `code_memory` publishes code in).
pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

/// An inaccessible anonymous mapping, unmapped on drop but for the part
/// `kept` by the allocator.
struct Mapping {
    start: usize,
    len: usize,
    kept: Option<(usize, usize)>,
}

impl Mapping {
    fn reserve(len: usize) -> std::io::Result<Self> {
        // SAFETY: a new private anonymous mapping; it aliases nothing.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if start == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping { start: start as usize, len, kept: None })
    }

    /// Make `at..at + len`, inside the mapping, readable and writable.
    fn open(&self, at: usize, len: usize) -> std::io::Result<()> {
        debug_assert!(at >= self.start && at + len <= self.start + self.len);
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the range lies inside this mapping, which nothing else uses.
        match unsafe { libc::mprotect(at as *mut libc::c_void, len, libc::PROT_READ | libc::PROT_WRITE) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    /// Advice on `at..at + len`, inside the mapping, and whether it was
    /// taken; a refusal changes nothing.
    fn advise(&self, at: usize, len: usize, advice: libc::c_int) -> bool {
        debug_assert!(at >= self.start && at + len <= self.start + self.len);
        // SAFETY: the range lies inside this mapping; the advice given here
        // does not change its contents.
        unsafe { libc::madvise(at as *mut libc::c_void, len, advice) == 0 }
    }
}

impl Drop for EagerMemory {
    fn drop(&mut self) {
        // The growths, each faulted in whole, are kept: the host's later
        // blocks (a large run's report) are cut from them rather than from
        // fresh pages, which the kernel must zero. The minimum the memory
        // was made with may hold pages the plugin never touched; it is
        // unmapped with the rest of the reservation.
        let Some(grown) = self.grown_from else { return };
        let (start, len) = (self.base + grown, pages(self.size) - grown);
        // SAFETY: a part of this memory's mapping, readable and writable;
        // nothing uses it once the memory is dropped, and the mapping's own
        // drop leaves it to the allocator.
        if len > 0 && unsafe { crate::alloc::keep_pages(start, len) } {
            self.mapping.kept = Some((start, len));
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        let unmap = |start: usize, end: usize| {
            // SAFETY: a part of the mapping made in `reserve`, used by
            // nothing after this.
            if end > start {
                unsafe { libc::munmap(start as *mut libc::c_void, end - start) };
            }
        };
        let end = self.start + self.len;
        match self.kept {
            Some((kept, len)) => {
                unmap(self.start, kept);
                unmap(kept + len, end);
            }
            None => unmap(self.start, end),
        }
    }
}

#[cfg(test)]
mod tests {
    use wasmtime::{Engine, Instance, Module, Store};

    use super::*;

    /// One 64 KiB page, with `peek(at)` (an `i32.load`) and `grow(pages)`
    /// (`memory.grow`).
    fn peek_and_grow() -> Vec<u8> {
        let peek = [0x20, 0x00, 0x28, 0x02, 0x00, 0x0b];
        let grow = [0x20, 0x00, 0x40, 0x00, 0x0b];
        super::super::core_wasm::module(&[("peek", &peek), ("grow", &grow)], true)
    }

    fn resident(at: *mut u8, len: usize) -> bool {
        let mut pages = vec![0u8; len / page_size()];
        // SAFETY: `at..at + len` is mapped; `pages` holds a byte per page.
        let done = unsafe { libc::mincore(at.cast(), len, pages.as_mut_ptr()) };
        done == 0 && pages.iter().all(|p| p & 1 == 1)
    }

    /// Whether this kernel takes `advice` on an accessible page.
    fn advice_taken(advice: libc::c_int) -> bool {
        let mapping = Mapping::reserve(page_size()).unwrap();
        mapping.open(mapping.start, page_size()).unwrap();
        mapping.advise(mapping.start, page_size(), advice)
    }

    /// [`peek_and_grow`] instantiated with its memory made by [`creator`].
    fn eager_instance() -> (Store<()>, Instance) {
        let mut config = super::super::engine::config(super::super::Stop::Trap);
        config.with_host_memory(creator());
        let engine = Engine::new(&config).unwrap();
        let module = Module::new(&engine, peek_and_grow()).unwrap();
        let mut store = Store::new(&engine, ());
        store.set_epoch_deadline(u64::MAX / 2);
        let instance = Instance::new(&mut store, &module, &[]).unwrap();
        (store, instance)
    }

    #[test]
    fn memory_traps_past_its_size_and_its_growth_is_faulted_in() {
        let (mut store, instance) = eager_instance();
        let peek = instance.get_typed_func::<u32, u32>(&mut store, "peek").unwrap();
        let grow = instance.get_typed_func::<u32, i32>(&mut store, "grow").unwrap();
        let memory = instance.get_memory(&mut store, "memory").unwrap();
        const PAGE: u32 = 64 << 10;

        assert_eq!(peek.call(&mut store, PAGE - 4).unwrap(), 0);
        for past in [PAGE - 3, PAGE, 3 * PAGE, 1 << 31, u32::MAX - 3] {
            let trap = peek.call(&mut store, past).unwrap_err();
            assert_eq!(trap.downcast_ref::<wasmtime::Trap>(), Some(&wasmtime::Trap::MemoryOutOfBounds), "{past}");
        }

        assert_eq!(grow.call(&mut store, 3).unwrap(), 1);
        let grown = memory.data_ptr(&store).wrapping_add(PAGE as usize);
        // Faulting pages in on advice came with Linux 5.14.
        if advice_taken(libc::MADV_POPULATE_WRITE) {
            assert!(resident(grown, 3 * PAGE as usize), "the growth is faulted in before it is touched");
        }
        assert_eq!(peek.call(&mut store, 4 * PAGE - 4).unwrap(), 0, "grown memory reads as zeros");
        assert!(peek.call(&mut store, 4 * PAGE).is_err());
    }

    /// A memory grown by `pages` 64 KiB pages, dropped: where its growth was.
    fn grown_and_dropped(pages: u32) -> usize {
        let (mut store, instance) = eager_instance();
        let grow = instance.get_typed_func::<u32, i32>(&mut store, "grow").unwrap();
        assert_eq!(grow.call(&mut store, pages).unwrap(), 1);
        let memory = instance.get_memory(&mut store, "memory").unwrap();
        let grown = memory.data_ptr(&store) as usize + (64 << 10);
        drop(store);
        grown
    }

    #[test]
    fn a_dropped_memory_leaves_its_grown_pages_to_the_allocator_that_serves_them() {
        use crate::alloc::{MappedAlloc, release_kept, serve_kept_pages};
        use std::alloc::{GlobalAlloc, Layout};
        let _alone = crate::alloc::tests::alone();
        let block = Layout::from_size_align(4 << 16, 8).unwrap();
        let allocated_after = |grown: usize| {
            // SAFETY: a block of a valid layout, freed at once.
            let ptr = unsafe { MappedAlloc.alloc(block) };
            assert!(!ptr.is_null());
            let at = (ptr as usize == grown, resident(ptr, block.size()));
            // SAFETY: the block just allocated.
            unsafe { MappedAlloc.dealloc(ptr, block) };
            release_kept();
            at
        };
        serve_kept_pages(true);
        let grown = grown_and_dropped(4);
        let kept = allocated_after(grown);
        serve_kept_pages(false);
        assert_eq!(kept, (true, true), "the next block of that size is the memory's growth, faulted in");
    }
}
