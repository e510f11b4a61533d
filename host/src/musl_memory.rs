//! `memcmp`, `bcmp`, `memcpy` and `memmove` for the static musl build (#27),
//! in place of musl's: its `memcmp` compares a byte at a time (the guard
//! compares every touched file with its snapshot, 443 KB on the bench's
//! 20-hunk diff), and its `memcpy` and `memmove` start a `rep movsq` even for
//! the few bytes most of Rust's copies move. Linked into the binary, these
//! definitions are found before the C library's archive is searched.
//!
//! Copies of at most 64 bytes load everything before they store anything,
//! in straight-line code: right for overlapping ranges too. Longer ones use
//! `rep movsb`, which the processors this runs on move in cache lines; an
//! overlapping move to a higher address runs it backwards. Nothing here may
//! be a loop the compiler could turn back into a call to itself.
//!
//! Other builds compile them under their Rust names, unexported, so that
//! every build's unit tests check them.
#![cfg_attr(not(target_env = "musl"), allow(dead_code))]

use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_storeu_si128};

/// Compares `n` bytes at `a` and `b` as unsigned bytes: negative, zero or
/// positive as `a` sorts before, equal to or after `b`.
///
/// # Safety
/// `a` and `b` are valid for reads of `n` bytes.
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: every offset read below is less than `n`.
    unsafe {
        if n >= 16 {
            let mut at = 0;
            while at + 16 <= n {
                if let Some(order) = first_difference(a, b, at) {
                    return order;
                }
                at += 16;
            }
            // The last 16 bytes, overlapping what was compared already.
            return if at == n { 0 } else { first_difference(a, b, n - 16).unwrap_or(0) };
        }
        // Two overlapping words, one from each end: the first that differs
        // orders the ranges.
        if n >= 8 {
            let [head, tail] = [0, n - 8].map(|at| compare_words(load_be_u64(a.add(at)), load_be_u64(b.add(at))));
            return if head != 0 { head } else { tail };
        }
        if n >= 4 {
            let word = |at: usize| compare_words(load_be_u32(a.add(at)).into(), load_be_u32(b.add(at)).into());
            let [head, tail] = [0, n - 4].map(word);
            return if head != 0 { head } else { tail };
        }
        for at in [0, 1, 2] {
            if at < n && *a.add(at) != *b.add(at) {
                return i32::from(*a.add(at)) - i32::from(*b.add(at));
            }
        }
        0
    }
}

/// Zero when `n` bytes at `a` and `b` are equal (what the compiler calls for
/// `==` on byte slices).
///
/// # Safety
/// As for [`memcmp`].
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract, passed on.
    unsafe { memcmp(a, b, n) }
}

/// Copies `n` bytes from `source` to `destination`; returns `destination`.
///
/// # Safety
/// Both ranges are valid for `n` bytes and do not overlap.
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub unsafe extern "C" fn memcpy(destination: *mut u8, source: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller's contract; a copy forwards is right for any ranges
    // that do not overlap.
    unsafe {
        if n <= 64 {
            copy_small(destination, source, n);
        } else {
            copy_forwards(destination, source, n);
        }
    }
    destination
}

/// Copies `n` bytes from `source` to `destination`, which may overlap;
/// returns `destination`.
///
/// # Safety
/// Both ranges are valid for `n` bytes.
#[cfg_attr(target_env = "musl", unsafe(no_mangle))]
pub unsafe extern "C" fn memmove(destination: *mut u8, source: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller's contract. A forward copy reads each byte before
    // writing over it unless the destination starts inside the source.
    unsafe {
        if n <= 64 {
            copy_small(destination, source, n);
        } else if (destination as usize).wrapping_sub(source as usize) >= n {
            copy_forwards(destination, source, n);
        } else {
            copy_backwards(destination, source, n);
        }
    }
    destination
}

/// The order of the first differing byte in the 16 at `at`, if one differs.
unsafe fn first_difference(a: *const u8, b: *const u8, at: usize) -> Option<i32> {
    // SAFETY: the caller's: 16 bytes from `at` are readable in both.
    unsafe {
        let x = _mm_loadu_si128(a.add(at).cast::<__m128i>());
        let y = _mm_loadu_si128(b.add(at).cast::<__m128i>());
        let equal = _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) as u32;
        if equal == 0xffff {
            return None;
        }
        let first = at + (!equal).trailing_zeros() as usize;
        Some(i32::from(*a.add(first)) - i32::from(*b.add(first)))
    }
}

fn compare_words(x: u64, y: u64) -> i32 {
    i32::from(x > y) - i32::from(x < y)
}

/// Eight bytes as a big-endian number, which orders as the bytes do.
unsafe fn load_be_u64(at: *const u8) -> u64 {
    // SAFETY: the caller's: 8 readable bytes.
    u64::from_be(unsafe { at.cast::<u64>().read_unaligned() })
}

unsafe fn load_be_u32(at: *const u8) -> u32 {
    // SAFETY: the caller's: 4 readable bytes.
    u32::from_be(unsafe { at.cast::<u32>().read_unaligned() })
}

/// Copies `n <= 64` bytes, reading all of them before writing any.
unsafe fn copy_small(destination: *mut u8, source: *const u8, n: usize) {
    // SAFETY: the caller's: both ranges are valid for `n` bytes; each pair
    // of loads covers the range from its two ends.
    unsafe {
        match n {
            33..=64 => {
                let [a, b] = [0, 16].map(|at| _mm_loadu_si128(source.add(at).cast::<__m128i>()));
                let [c, d] = [n - 32, n - 16].map(|at| _mm_loadu_si128(source.add(at).cast::<__m128i>()));
                for (at, value) in [(0, a), (16, b), (n - 32, c), (n - 16, d)] {
                    _mm_storeu_si128(destination.add(at).cast::<__m128i>(), value);
                }
            }
            17..=32 => {
                let a = _mm_loadu_si128(source.cast::<__m128i>());
                let b = _mm_loadu_si128(source.add(n - 16).cast::<__m128i>());
                _mm_storeu_si128(destination.cast::<__m128i>(), a);
                _mm_storeu_si128(destination.add(n - 16).cast::<__m128i>(), b);
            }
            9..=16 => copy_ends::<u64>(destination, source, n),
            5..=8 => copy_ends::<u32>(destination, source, n),
            2..=4 => copy_ends::<u16>(destination, source, n),
            1 => *destination = *source,
            _ => {}
        }
    }
}

/// Copies `n` bytes, `size_of::<T>() <= n <= 2 * size_of::<T>()`, as a `T`
/// from each end.
unsafe fn copy_ends<T: Copy>(destination: *mut u8, source: *const u8, n: usize) {
    let tail = n - size_of::<T>();
    // SAFETY: the caller's: both `T`s lie inside the `n` bytes of each range.
    unsafe {
        let head_value = source.cast::<T>().read_unaligned();
        let tail_value = source.add(tail).cast::<T>().read_unaligned();
        destination.cast::<T>().write_unaligned(head_value);
        destination.add(tail).cast::<T>().write_unaligned(tail_value);
    }
}

unsafe fn copy_forwards(destination: *mut u8, source: *const u8, n: usize) {
    // SAFETY: the caller's: both ranges are valid for `n` bytes. The
    // direction flag is clear on entry to any function (the ABI's rule).
    unsafe {
        std::arch::asm!(
            "rep movsb",
            inout("rcx") n => _,
            inout("rdi") destination => _,
            inout("rsi") source => _,
            options(nostack, preserves_flags)
        );
    }
}

unsafe fn copy_backwards(destination: *mut u8, source: *const u8, n: usize) {
    // SAFETY: the caller's: both ranges are valid for `n >= 1` bytes; the
    // copy starts at their last bytes and the direction flag is cleared again.
    unsafe {
        std::arch::asm!(
            "std",
            "rep movsb",
            "cld",
            inout("rcx") n => _,
            inout("rdi") destination.add(n - 1) => _,
            inout("rsi") source.add(n - 1) => _,
            options(nostack)
        );
    }
}

#[cfg(test)]
mod tests {
    use std::hint::black_box;

    use super::{memcmp, memmove};

    /// The sign of `a` against `b` in byte order, a byte at a time (slice
    /// comparison would call the `memcmp` under test).
    fn reference_order(a: &[u8], b: &[u8]) -> i32 {
        (0..a.len()).map(black_box).find(|&i| a[i] != b[i]).map_or(0, |i| if a[i] < b[i] { -1 } else { 1 })
    }

    /// Every length to 200 at every alignment to 16, against the order a
    /// byte at a time.
    #[test]
    fn memcmp_orders_as_bytes_do() {
        let base: Vec<u8> = (0..256u32).map(|i| (i * 37 % 251) as u8).collect();
        for offset in 0..16 {
            for n in 0..200 {
                let a = &base[offset..offset + n];
                let mut b = a.to_vec();
                // SAFETY: both are `n` readable bytes.
                assert_eq!(unsafe { memcmp(a.as_ptr(), b.as_ptr(), n) }, 0, "equal, n {n}");
                for at in [0, n / 3, n / 2, n.saturating_sub(1)].into_iter().filter(|&at| at < n) {
                    for delta in [1u8, 0x80, 0xff] {
                        b.copy_from_slice(a);
                        b[at] = b[at].wrapping_add(delta);
                        // SAFETY: as above.
                        let got = unsafe { memcmp(a.as_ptr(), b.as_ptr(), n) }.signum();
                        assert_eq!(got, reference_order(a, &b), "n {n}, difference at {at}");
                    }
                }
            }
        }
    }

    /// Every length to 300, moved up and down by every distance to 70 within
    /// one buffer, against the same move a byte at a time through a copy.
    #[test]
    fn memmove_handles_overlap_both_ways() {
        let base: Vec<u8> = (0..512u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..300 {
            for distance in 0..70 {
                for (from, to) in [(0, distance), (distance, 0)] {
                    let mut buffer = base.clone();
                    let mut expected = base.clone();
                    for i in (0..n).map(black_box) {
                        expected[to + i] = base[from + i];
                    }
                    // SAFETY: both ranges lie inside `buffer`.
                    unsafe { memmove(buffer.as_mut_ptr().add(to), buffer.as_ptr().add(from), n) };
                    let wrong = (0..buffer.len()).map(black_box).find(|&i| buffer[i] != expected[i]);
                    assert_eq!(wrong, None, "n {n}, from {from} to {to}");
                }
            }
        }
    }
}
