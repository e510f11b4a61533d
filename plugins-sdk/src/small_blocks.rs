//! A front for a plugin's allocator: small blocks, once freed, wait on a
//! list of their size class and are handed out again without a search
//! (#27).
//!
//! A format of many small edits makes an allocation or two per line of the
//! reply and several per edit (its lines, its message), most of them freed
//! soon after. talc finds each a bin and splits or merges chunks: about 150
//! instructions an allocation with its free, 8-10% of `editblock`'s and
//! `compact`'s runs on a 10 MB reply. A freed small block here is pushed on
//! its class's list and popped by the next allocation of that class.
//!
//! The price: a small block never goes back to the allocator behind, so
//! memory freed as small blocks of one class serves only that class.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr;

/// Blocks of up to this many bytes are kept on class lists.
const LARGEST: usize = 256;
/// Class width: a block of `n` bytes is in class `ceil(n / 16)`, and takes
/// that many 16-byte units from the allocator behind.
const UNIT: usize = 16;
const CLASSES: usize = LARGEST / UNIT + 1;

/// [`GlobalAlloc`] over `inner`, keeping freed blocks of up to 256 bytes
/// (aligned at most 16) for the next allocation of their class.
pub struct SmallBlocks<A> {
    inner: A,
    /// The head of each class's list; a free block holds the next one's address.
    free: UnsafeCell<[*mut u8; CLASSES]>,
}

impl<A> SmallBlocks<A> {
    pub const fn new(inner: A) -> Self {
        SmallBlocks { inner, free: UnsafeCell::new([ptr::null_mut(); CLASSES]) }
    }
}

// SAFETY: wasm without threads: the lists are never touched by two threads.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
unsafe impl<A: Sync> Sync for SmallBlocks<A> {}

/// The class of `layout`, if its blocks are kept on a list.
fn class_of(layout: Layout) -> Option<usize> {
    (layout.size() <= LARGEST && layout.align() <= UNIT).then(|| layout.size().div_ceil(UNIT).max(1))
}

/// What a block of `class` is allocated as from the allocator behind.
fn class_layout(class: usize) -> Layout {
    // SAFETY: a non-zero multiple of 16 no larger than 272, aligned at 16.
    unsafe { Layout::from_size_align_unchecked(class * UNIT, UNIT) }
}

// SAFETY: a kept block was allocated from `inner` with its class's layout
// and is handed out to one owner at a time: popped from its list when
// allocated, pushed back when freed. Every block of a class has the class's
// size and alignment, which fit every layout of that class.
unsafe impl<A: GlobalAlloc> GlobalAlloc for SmallBlocks<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else {
            // SAFETY: the caller's contract, passed on.
            return unsafe { self.inner.alloc(layout) };
        };
        // SAFETY: single-threaded (see `Sync`), and no reference to the
        // lists outlives this call.
        let head = unsafe { &mut (*self.free.get())[class] };
        if head.is_null() {
            // SAFETY: a valid non-zero layout.
            return unsafe { self.inner.alloc(class_layout(class)) };
        }
        let block = *head;
        // SAFETY: a free block's first word holds the next free block.
        *head = unsafe { block.cast::<*mut u8>().read() };
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let Some(class) = class_of(layout) else {
            // SAFETY: allocated from `inner` with `layout` (not a class's).
            return unsafe { self.inner.dealloc(block, layout) };
        };
        // SAFETY: as in `alloc`; the block is at least 16 bytes, aligned
        // at 16, and no longer the caller's.
        unsafe {
            let head = &mut (*self.free.get())[class];
            block.cast::<*mut u8>().write(*head);
            *head = block;
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees the new layout is valid.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class_of(layout), class_of(new_layout)) {
            (Some(old), Some(new)) if old == new => block,
            // Large to large: talc may grow or shrink the block in place.
            // SAFETY: allocated from `inner` with `layout`.
            (None, None) => unsafe { self.inner.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: `new_layout` is valid; both blocks hold at least
                // the bytes copied, and are distinct.
                unsafe {
                    let moved = self.alloc(new_layout);
                    if !moved.is_null() {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                    moved
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::System;

    use super::*;

    #[test]
    fn a_freed_block_serves_the_next_allocation_of_its_class_only() {
        let blocks = SmallBlocks::new(System);
        let layout = |size, align| Layout::from_size_align(size, align).unwrap();
        unsafe {
            let a = blocks.alloc(layout(20, 8));
            a.write_bytes(0xAB, 20);
            blocks.dealloc(a, layout(20, 8));
            assert_eq!(blocks.alloc(layout(32, 16)), a, "20 and 32 bytes are one class");
            let b = blocks.alloc(layout(33, 1));
            assert_ne!(b, a);
            blocks.dealloc(b, layout(33, 1));
            assert_ne!(blocks.alloc(layout(16, 1)), b, "16 bytes is another class");
            let big = blocks.alloc(layout(257, 8));
            blocks.dealloc(big, layout(257, 8));
            assert_eq!(blocks.alloc(layout(48, 8)), b);
        }
    }

    #[test]
    fn realloc_keeps_the_bytes_across_classes_and_into_large_blocks() {
        let blocks = SmallBlocks::new(System);
        unsafe {
            let mut size = 1;
            let mut block = blocks.alloc(Layout::from_size_align(size, 1).unwrap());
            block.write(7);
            for new_size in [8, 16, 17, 100, 256, 257, 4096, 200, 3] {
                block = blocks.realloc(block, Layout::from_size_align(size, 1).unwrap(), new_size);
                for i in size..new_size {
                    block.add(i).write((i % 251) as u8);
                }
                assert_eq!(block.read(), 7);
                for i in 1..size.min(new_size) {
                    assert_eq!(block.add(i).read(), (i % 251) as u8, "byte {i} after {size} -> {new_size}");
                }
                size = new_size;
            }
            blocks.dealloc(block, Layout::from_size_align(size, 1).unwrap());
        }
    }
}
