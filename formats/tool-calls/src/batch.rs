//! A run of `Edit` calls on one file in one pass. One by one, each call
//! searches the whole file as the calls before it left it: a reply of a
//! thousand calls on a large file reads it a thousand times. Here every
//! `old_string` is looked for at once, in the file as it was, and the
//! result is taken only when it is provably the one-by-one result.

use agent_apply_sdk::matching::KeyMap;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::shifts::Shifts;
use agent_apply_sdk::text::{line_count, newline_count, same_bytes};

use crate::Replacement;
use crate::apply::elided_texts;

/// The longest prefix of the `old_string`s the search hashes.
const MAX_WINDOW: usize = 64;
/// Shorter `old_string`s are left to the one-by-one path: too many places
/// would share a prefix.
const MIN_WINDOW: usize = 4;
/// Calls whose `old_string`s share a prefix, at most, before the run is
/// left to the one-by-one path (each shared place is compared with each).
const MAX_SHARING: usize = 8;

/// The new content and the lines each call replaced, as that call saw the
/// file: what [`crate::apply::replace`] in a loop gives. `None` when one
/// pass cannot be shown to give the same. It is taken only when the file
/// and the calls hold no `\r` (so no call's line endings are converted),
/// every call is a plain replacement (not `replace_all`, not a creation,
/// not a no-op, no placeholder in its `new_string`) whose `old_string`
/// occurs exactly once in the file, overlaps counted, the places are
/// farther apart than the longest `old_string`, and no `old_string` occurs
/// where an earlier call's `new_string` meets the text around it.
pub fn replace_at_once(content: &str, calls: &[&Replacement]) -> Option<(String, Vec<LineRange>)> {
    // By memchr's SIMD search (a component's too): `contains('\r')` reads
    // four bytes at a time there, and every call's two texts are asked.
    let has_cr = |text: &str| agent_apply_sdk::text::contains(text, "\r");
    let plain = |r: &&Replacement| {
        !r.all
            && !r.old.is_empty()
            && r.old != r.new
            && !has_cr(&r.old)
            && !has_cr(&r.new)
            && elided_texts(&r.old, &r.new, []).is_none()
    };
    if calls.len() < 2 || has_cr(content) || !calls.iter().all(plain) {
        return None;
    }
    let olds: Vec<&str> = calls.iter().map(|r| r.old.as_str()).collect();
    let search = Search::new(&olds)?;
    let mut places: Vec<Option<usize>> = vec![None; calls.len()];
    let mut twice = false;
    search.each(content, |k, at| {
        twice |= places[k].replace(at).is_some();
        !twice
    });
    let places: Vec<usize> = places.into_iter().collect::<Option<_>>().filter(|_| !twice)?;
    // The calls in file order; the gap past each must hide any other region
    // from a window around it.
    let mut order: Vec<usize> = (0..calls.len()).collect();
    order.sort_by_key(|&k| places[k]);
    let margin = olds.iter().map(|o| o.len()).max().unwrap_or(0) - 1;
    for pair in order.windows(2) {
        if places[pair[1]] < places[pair[0]] + olds[pair[0]].len() + margin {
            return None;
        }
    }
    // A new occurrence of a later call's text must cross an earlier call's
    // `new_string`: look for one in each window around it.
    for (j, call) in calls.iter().enumerate() {
        let (start, end) = (places[j], places[j] + olds[j].len());
        let before = &content[content.floor_char_boundary(start.saturating_sub(margin))..start];
        let after = &content[end..content.ceil_char_boundary(end + margin)];
        let window = [before, &call.new, after].concat();
        let new_text = before.len()..before.len() + call.new.len();
        let mut crossed = false;
        search.each(&window, |k, at| {
            crossed |= k > j && at < new_text.end && at + olds[k].len() > new_text.start;
            !crossed
        });
        if crossed {
            return None;
        }
    }
    Some(splice(content, calls, &places, &order))
}

/// Writes each call's `new_string` at its place, and counts the lines each
/// call replaced as it saw the file: shifted by the earlier calls above it.
fn splice(content: &str, calls: &[&Replacement], places: &[usize], order: &[usize]) -> (String, Vec<LineRange>) {
    let grown: usize = calls.iter().map(|r| r.new.len()).sum();
    let mut out = String::with_capacity(content.len() + grown);
    let mut rank = vec![0; calls.len()];
    let mut line_before = vec![0; calls.len()];
    let (mut copied, mut line) = (0, 0);
    for (r, &k) in order.iter().enumerate() {
        rank[k] = r;
        line += newline_count(&content[copied..places[k]]);
        line_before[k] = line;
        out.push_str(&content[copied..places[k]]);
        out.push_str(&calls[k].new);
        copied = places[k] + calls[k].old.len();
        line += newline_count(&calls[k].old);
    }
    out.push_str(&content[copied..]);
    let mut shifts = Shifts::new(calls.len());
    let lines = calls
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let start = (line_before[k] as isize + shifts.before(rank[k])) as u32;
            let span = line_count(&r.old);
            shifts.grow(rank[k], newline_count(&r.new) as isize - newline_count(&r.old) as isize);
            LineRange::new(start + 1, start + span.max(1) as u32)
        })
        .collect();
    (out, lines)
}

/// Every `old_string` looked for at once, without reading every place of
/// the text. Each is at least `window` bytes long, so an occurrence covers
/// a `gram` of up to 8 bytes at exactly one place that is a multiple of
/// `stride` (`window - gram + 1`), at an offset below `stride` into it:
/// only those places are read, and the gram there says at which offsets an
/// `old_string` could have started. A place that passes is checked as
/// before: a key of the (up to) 16 last bytes of the `window` starting
/// there, then each call with that key compared in full.
struct Search<'p> {
    patterns: &'p [&'p str],
    window: usize,
    gram: usize,
    stride: usize,
    /// A bit per gram's high bits: most sampled places are ruled out by it.
    gram_filter: Box<[u64; FILTER_WORDS]>,
    /// Each gram of the patterns (mixed: [`mix`] is one to one), with a
    /// bit per offset it has in one. Hashed, not sorted: a file's calls
    /// give thousands of grams each.
    offsets: KeyMap<u64>,
    /// A bit per window key's high bits.
    key_filter: Box<[u64; FILTER_WORDS]>,
    /// The calls by window key, sorted.
    by_key: Vec<(u64, usize)>,
}

const FILTER_BITS: u32 = 18;
const FILTER_WORDS: usize = 1 << (FILTER_BITS - 6);
/// The most bytes of a window its key reads.
const KEY_BYTES: usize = 16;
/// The most bytes of a gram: one word.
const GRAM_BYTES: usize = 8;

impl<'p> Search<'p> {
    fn new(patterns: &'p [&'p str]) -> Option<Self> {
        let window = patterns.iter().map(|p| p.len()).min()?.min(MAX_WINDOW);
        if window < MIN_WINDOW {
            return None;
        }
        let mut by_key: Vec<(u64, usize)> =
            patterns.iter().enumerate().map(|(k, p)| (key(&p.as_bytes()[..window]), k)).collect();
        by_key.sort_unstable();
        if by_key.windows(MAX_SHARING + 1).any(|run| run[0].0 == run[MAX_SHARING].0) {
            return None;
        }
        let mut key_filter = Box::new([0u64; FILTER_WORDS]);
        by_key.iter().for_each(|&(key, _)| set_bit(&mut key_filter, key));
        let gram = window.min(GRAM_BYTES);
        let stride = window - gram + 1;
        let mut offsets = KeyMap::with_capacity_and_hasher(patterns.len() * stride, Default::default());
        let mut gram_filter = Box::new([0u64; FILTER_WORDS]);
        for p in patterns {
            for o in 0..stride {
                let g = mix(gram_at(&p.as_bytes()[o..], gram));
                *offsets.entry(g).or_insert(0) |= 1 << o;
                set_bit(&mut gram_filter, g);
            }
        }
        Some(Search { patterns, window, gram, stride, gram_filter, offsets, key_filter, by_key })
    }

    /// Calls `found(k, at)` for every place `at` of `text` where pattern `k`
    /// starts, overlapping ones included, each once and in no set order,
    /// until it returns false.
    fn each(&self, text: &str, mut found: impl FnMut(usize, usize) -> bool) {
        let bytes = text.as_bytes();
        if bytes.len() < self.window {
            return;
        }
        for place in (0..=bytes.len() - self.gram).step_by(self.stride) {
            let gram = mix(gram_at(&bytes[place..], self.gram));
            if has_bit(&self.gram_filter, gram) && !self.at_gram(bytes, place, gram, &mut found) {
                return;
            }
        }
    }

    /// The patterns that could hold the (mixed) gram at `place` (where its offsets
    /// say they would start), each checked; false once `found` says to stop.
    #[cold]
    fn at_gram(&self, bytes: &[u8], place: usize, gram: u64, found: &mut impl FnMut(usize, usize) -> bool) -> bool {
        let Some(&offsets) = self.offsets.get(&gram) else { return true };
        let mut mask: u64 = offsets;
        while mask != 0 {
            let offset = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let Some(at) = place.checked_sub(offset).filter(|at| at + self.window <= bytes.len()) else { continue };
            let key = key(&bytes[at..at + self.window]);
            if has_bit(&self.key_filter, key) && !self.candidates(bytes, at, key, found) {
                return false;
            }
        }
        true
    }

    /// The patterns whose window has key `key` that start at `at`, each told
    /// to `found`; false once `found` says to stop.
    fn candidates(&self, bytes: &[u8], at: usize, key: u64, found: &mut impl FnMut(usize, usize) -> bool) -> bool {
        let first = self.by_key.partition_point(|&(k, _)| k < key);
        for &(_, k) in self.by_key[first..].iter().take_while(|&&(k, _)| k == key) {
            let pattern = self.patterns[k].as_bytes();
            let here = bytes.get(at..at + pattern.len());
            if here.is_some_and(|here| same_bytes(here, pattern)) && !found(k, at) {
                return false;
            }
        }
        true
    }
}

fn set_bit(filter: &mut [u64; FILTER_WORDS], hash: u64) {
    let bit = (hash >> (64 - FILTER_BITS)) as usize;
    filter[bit / 64] |= 1 << (bit % 64);
}

fn has_bit(filter: &[u64; FILTER_WORDS], hash: u64) -> bool {
    let bit = (hash >> (64 - FILTER_BITS)) as usize;
    filter[bit / 64] & (1 << (bit % 64)) != 0
}

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// A one-to-one mix of a word: a xorshift, then an odd multiplier.
fn mix(word: u64) -> u64 {
    (word ^ (word >> 29)).wrapping_mul(K)
}

/// The first `len` bytes of `bytes` (4 to 8 of them) as one word, exactly:
/// two overlapping halves when fewer than 8.
fn gram_at(bytes: &[u8], len: usize) -> u64 {
    if len == GRAM_BYTES {
        return u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    }
    let half = |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")));
    half(0) | (half(len - 4) << 32)
}

/// The key of a window (at least [`MIN_WINDOW`] bytes): its last
/// [`KEY_BYTES`] bytes at most, read as two words (overlapping when the
/// window is shorter), mixed so that its high bits spread.
fn key(window: &[u8]) -> u64 {
    let tail = &window[window.len().saturating_sub(KEY_BYTES)..];
    let n = tail.len();
    let (a, b) = if n >= 8 {
        let word = |at: usize| u64::from_le_bytes(tail[at..at + 8].try_into().expect("8 bytes"));
        (word(0), word(n - 8))
    } else {
        let half = |at: usize| u64::from(u32::from_le_bytes(tail[at..at + 4].try_into().expect("4 bytes")));
        (half(0), half(n - 4))
    };
    (a.wrapping_mul(K).rotate_left(29) ^ b).wrapping_mul(K)
}

#[cfg(test)]
mod tests {
    use super::Search;

    /// Places as (where, which pattern).
    type Places = Vec<(usize, usize)>;

    /// The places `Search` reports in `text`, and those a naive scan finds,
    /// both sorted; `None` when the patterns are left to the one-by-one path.
    fn found_and_naive(patterns: &[&str], text: &str) -> Option<(Places, Places)> {
        let search = Search::new(patterns)?;
        let mut found = Vec::new();
        search.each(text, |k, at| {
            found.push((at, k));
            true
        });
        let mut naive = Vec::new();
        for at in 0..=text.len() {
            for (k, pattern) in patterns.iter().enumerate() {
                if text.as_bytes()[at..].starts_with(pattern.as_bytes()) {
                    naive.push((at, k));
                }
            }
        }
        found.sort();
        Some((found, naive))
    }

    proptest::proptest! {
        /// Every place of every pattern, overlapping ones included, as a
        /// naive scan finds them; short windows and the longest alike.
        #[test]
        fn the_search_finds_every_place_a_naive_scan_finds(
            text in "[ab\n]{0,300}",
            patterns in proptest::collection::vec("[ab\n]{4,80}", 1..6),
        ) {
            let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
            if let Some((found, naive)) = found_and_naive(&patterns, &text) {
                proptest::prop_assert_eq!(found, naive);
            }
        }

        /// The same with long patterns (the widest stride between the places
        /// read) written into the text, next to each other and overlapping.
        #[test]
        fn long_patterns_written_into_the_text_are_all_found(
            patterns in proptest::collection::vec("[ab ]{8,90}", 1..6),
            pieces in proptest::collection::vec((0usize..6, "[ab ]{0,12}"), 0..40),
        ) {
            let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
            // A piece is a pattern (the second and later ones cut short by
            // a byte or two: near misses) or filler.
            let text: String = pieces
                .iter()
                .map(|(k, filler)| patterns.get(*k).map_or(filler.as_str(), |p| &p[..p.len() - (*k).min(2)]))
                .collect();
            if let Some((found, naive)) = found_and_naive(&patterns, &text) {
                proptest::prop_assert_eq!(found, naive);
            }
        }
    }
}
