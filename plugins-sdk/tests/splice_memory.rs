//! A haystack's splice frees the haystack's lines, hashes and index before
//! it allocates the new content, so in a component the content takes their
//! memory rather than growing the linear memory by its own size (#27: the
//! 20-hunk diff of `bench/run` row 3, 448 KB fewer bytes populated).
//!
//! Counted here with an allocator that tracks this thread's live bytes and
//! their high-water mark (other test threads' allocations do not count).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use agent_apply_sdk::matching::{Haystack, Level};

struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn note(grown: isize) {
    // `try_with`: the allocator also runs while thread locals are torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add_signed(grown);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to `System` unchanged; only counts are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

#[test]
fn the_new_content_is_allocated_after_the_index_is_freed() {
    let content: String = (0..20_000).map(|i| format!("    total_{i} = x * {} + y\n", i % 97)).collect();
    let new_lines = ["    changed = 1"];
    let hay = Haystack::of(&content);
    // A search builds the exact level's hashes and their index.
    assert_eq!(hay.find_all(&["    total_12345 = x * 26 + y"], Level::Exact, 0..hay.len(), 4), vec![12345]);
    let before = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(before));

    let spliced = hay.splice_lines(&content, [(12345..12346, &new_lines[..])], "\n", true);

    let peak = PEAK.with(Cell::get);
    assert!(spliced.contains("    total_12344 = x * 25 + y\n    changed = 1\n    total_12346"));
    // Without the haystack freed first, the peak is everything live before
    // plus the whole new content (about 560 KB here).
    assert!(
        peak < before + spliced.len() / 4,
        "the splice's peak was {} bytes over what was live before it, for {} bytes of new content",
        peak - before,
        spliced.len()
    );
}
