//! A run of `Edit` calls on one file in one pass. One by one, each call
//! searches the whole file as the calls before it left it: a reply of a
//! thousand calls on a large file reads it a thousand times. Here every
//! `old_string` is looked for at once, in the file as it was, and the
//! result is taken only when it is provably the one-by-one result.

use agent_apply_sdk::matching::elided_replacement;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::shifts::Shifts;
use agent_apply_sdk::text::{line_count, newline_count};

use crate::Replacement;
use crate::apply::lines_of;

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
    let plain = |r: &&Replacement| {
        !r.all
            && !r.old.is_empty()
            && r.old != r.new
            && !r.old.contains('\r')
            && !r.new.contains('\r')
            && elided_replacement(&lines_of(&r.old), &lines_of(&r.new), []).is_none()
    };
    if calls.len() < 2 || content.contains('\r') || !calls.iter().all(plain) {
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

/// Every `old_string` looked for at once: a rolling hash of the first
/// `window` bytes at each place of the text, checked against the calls'
/// prefixes, then compared in full (Rabin–Karp over many patterns).
struct Search<'p> {
    patterns: &'p [&'p str],
    window: usize,
    /// Each byte times BASE to the power `window`: what rolling it out of
    /// the window takes from the hash (a table, not a multiplication per byte).
    out_term: [u64; 256],
    /// A bit per hash's high bits: most places are ruled out by it alone.
    filter: Box<[u64; FILTER_WORDS]>,
    by_hash: std::collections::HashMap<u64, Vec<usize>>,
}

const BASE: u64 = 0x100_0000_01b3;
const FILTER_BITS: u32 = 16;
const FILTER_WORDS: usize = 1 << (FILTER_BITS - 6);

impl<'p> Search<'p> {
    fn new(patterns: &'p [&'p str]) -> Option<Self> {
        let window = patterns.iter().map(|p| p.len()).min()?.min(MAX_WINDOW);
        if window < MIN_WINDOW {
            return None;
        }
        let mut by_hash: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::new();
        let mut filter = Box::new([0u64; FILTER_WORDS]);
        for (k, p) in patterns.iter().enumerate() {
            let h = hash(&p.as_bytes()[..window]);
            let sharing = by_hash.entry(h).or_default();
            sharing.push(k);
            if sharing.len() > MAX_SHARING {
                return None;
            }
            let bit = (h >> (64 - FILTER_BITS)) as usize;
            filter[bit / 64] |= 1 << (bit % 64);
        }
        let top = (0..window).fold(1u64, |t, _| t.wrapping_mul(BASE));
        let out_term = std::array::from_fn(|byte| (byte as u64).wrapping_mul(top));
        Some(Search { patterns, window, out_term, filter, by_hash })
    }

    /// Calls `found(k, at)` for every place `at` of `text` where pattern `k`
    /// starts, overlapping ones included, in order of `at`, until it
    /// returns false.
    fn each(&self, text: &str, mut found: impl FnMut(usize, usize) -> bool) {
        let bytes = text.as_bytes();
        if bytes.len() < self.window {
            return;
        }
        let (first, rest) = bytes.split_at(self.window);
        let mut h = hash(first);
        // The window at `at` holds bytes[at..at + window]; each step rolls
        // bytes[at] out and bytes[at + window] in.
        let mut at = 0;
        let mut steps = bytes.iter().zip(rest);
        loop {
            let bit = (h >> (64 - FILTER_BITS)) as usize;
            if self.filter[bit / 64] & (1 << (bit % 64)) != 0 && !self.candidates(bytes, at, h, &mut found) {
                return;
            }
            let Some((&out, &into)) = steps.next() else { return };
            h = h.wrapping_mul(BASE).wrapping_sub(self.out_term[out as usize]).wrapping_add(into as u64);
            at += 1;
        }
    }

    /// The patterns whose prefix hashes to `h` that start at `at`, each told
    /// to `found`; false once `found` says to stop.
    #[cold]
    fn candidates(&self, bytes: &[u8], at: usize, h: u64, found: &mut impl FnMut(usize, usize) -> bool) -> bool {
        for &k in self.by_hash.get(&h).map(Vec::as_slice).unwrap_or(&[]) {
            if bytes[at..].starts_with(self.patterns[k].as_bytes()) && !found(k, at) {
                return false;
            }
        }
        true
    }
}

fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |h, &b| h.wrapping_mul(BASE).wrapping_add(b as u64))
}

#[cfg(test)]
mod tests {
    use super::Search;

    proptest::proptest! {
        /// Every place of every pattern, overlapping ones included, as a
        /// naive scan finds them; short windows and the longest alike.
        #[test]
        fn the_search_finds_every_place_a_naive_scan_finds(
            text in "[ab\n]{0,300}",
            patterns in proptest::collection::vec("[ab\n]{4,80}", 1..6),
        ) {
            let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
            let Some(search) = Search::new(&patterns) else { return Ok(()) };
            let mut found = Vec::new();
            search.each(&text, |k, at| {
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
            naive.sort();
            proptest::prop_assert_eq!(found, naive);
        }
    }
}
