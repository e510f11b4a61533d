//! Finding a block of lines in a file: each level's line hashes, chained
//! into an index, searched from the block's rarest line.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;

use crate::text::{ByteSplices, same_text, splice_lines, split_bom};

use super::*;

#[inline]
pub(super) fn hash_str(s: &str) -> u64 {
    hash_bytes::<false>(s.as_bytes()).0
}

/// [`hash_str`] of `s` if `s` is ASCII, told in the same pass: every byte
/// hashed is also OR-ed into a word whose high bits a non-ASCII byte sets.
#[inline]
fn hash_if_ascii(s: &str) -> Option<u64> {
    let (hash, seen) = hash_bytes::<true>(s.as_bytes());
    (seen & 0x8080_8080_8080_8080 == 0).then_some(hash)
}

/// The hash of `bytes`, and (when `SEEN`) every word read OR-ed together:
/// the words and the last ones read cover each byte.
#[inline(always)]
fn hash_bytes<const SEEN: bool>(bytes: &[u8]) -> (u64, u64) {
    // Eight bytes at a time, then a final avalanche so rolling sums spread well.
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = (bytes.len() as u64).wrapping_mul(K);
    let mut seen = 0;
    // Split off word by word rather than `chunks_exact`: a file's every
    // line is hashed, and the chunk iterator's bookkeeping cost as much as
    // the mixing.
    let mut rest = bytes;
    while let Some((word, tail)) = rest.split_first_chunk::<8>() {
        let word = u64::from_le_bytes(*word);
        if SEEN {
            seen |= word;
        }
        h = (h ^ word).wrapping_mul(K).rotate_left(31);
        rest = tail;
    }
    let last = last_bytes(bytes, rest.len());
    if SEEN {
        seen |= last;
    }
    h = (h ^ last).wrapping_mul(K);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    (h | 1, seen)
}

/// The last `rest` (< 8) bytes of `bytes` as a word, read in at most two
/// loads rather than copied byte by byte: lines are short, so this tail is
/// a large part of hashing one. Which bytes stand beside them in the word
/// does not matter, only that equal lines give equal words (their length
/// is hashed already).
fn last_bytes(bytes: &[u8], rest: usize) -> u64 {
    let len = bytes.len();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")));
    match (rest, len) {
        (0, _) => 0,
        // Overlaps the last whole chunk.
        (_, 8..) => word(len - 8),
        (4.., _) => half(0) | half(len - 4) << 32,
        _ => u64::from(bytes[0]) | u64::from(bytes[len / 2]) << 8 | u64::from(bytes[len - 1]) << 16,
    }
}

/// A map by line key, or by any `u64` that is well mixed already (a hash):
/// the map uses the keys as they are rather than hashing them again.
pub type KeyMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// The hasher of [`KeyMap`]: a `u64` key is its own hash.
#[derive(Default)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed; fold anything else in all the same.
        self.0 = bytes.iter().fold(self.0, |h, &b| h.rotate_left(8) ^ u64::from(b));
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

#[inline]
pub(super) fn line_key(line: &str, level: Level) -> u64 {
    match level {
        // The index hashes every line of a file at this level first, and
        // the exact line needs no normalizing.
        Level::Exact => hash_str(line),
        // Text that is ASCII once trimmed has no look-alike to fold: it is
        // keyed trimmed, its ASCII checked as it is hashed, with no `Cow`
        // made and dropped (the one-pass checks key every line of every
        // block at the loosest level: a pass over each for `is_ascii` alone
        // was 40% of keying it, four bytes at a time in a component).
        Level::Unicode | Level::Fuzzy => {
            hash_if_ascii(crate::text::trim(line)).unwrap_or_else(|| hash_str(&normalize(line, level)))
        }
        _ => hash_str(&normalize(line, level)),
    }
}

/// Blocks of up to this many lines are searched without allocating.
const SHORT_NEEDLE: usize = 16;

/// The most lines [`Haystack::find_all`] compares directly rather than
/// through the level's index.
const SMALL_WINDOW: usize = 64;

pub(super) const ROLL_BASE: u64 = 0x100_0000_01b3_u64 | 0x9e37_79b9_0000_0000;

/// A file's lines (without endings), with per-level line hashes and an index
/// of them, each computed on first use.
pub struct Haystack<'a> {
    pub(super) lines: Vec<&'a str>,
    /// The content after any BOM, when made by [`Haystack::of`]: each line
    /// is a slice of it, so where a line starts is known, not sought.
    body: Option<&'a str>,
    keys: [OnceCell<Vec<u64>>; 4],
    /// Per level: where each line hash occurs.
    index: [OnceCell<LineIndex>; 4],
}

impl<'a> Haystack<'a> {
    /// Lines without their endings (see [`crate::text::strip_ending`]).
    pub fn new(lines: Vec<&'a str>) -> Self {
        Haystack { lines, body: None, keys: Default::default(), index: Default::default() }
    }

    /// The lines of a file's content (after any BOM).
    pub fn of(content: &'a str) -> Self {
        let (_, body) = split_bom(content);
        Haystack { body: Some(body), ..Haystack::new(crate::text::lines_without_endings(body)) }
    }

    /// [`crate::text::splice_lines`] of `content`, faster when this haystack
    /// was made of it ([`Haystack::of`]): the unchanged stretches between
    /// splices are not walked line by line. The haystack is used up: its
    /// lines, hashes and index are freed before the new content is
    /// allocated, so that in a component the content takes their memory
    /// rather than growing it (for a 20,000-line file, 0.5 MB of them
    /// against 0.45 MB of content: every fresh page costs a fault).
    pub fn splice_lines<'s, L: AsRef<str> + 's>(
        self,
        content: &str,
        splices: impl IntoIterator<Item = (Range<usize>, &'s [L])>,
        eol: &str,
        final_newline: bool,
    ) -> String {
        let (_, body) = split_bom(content);
        match self.body {
            Some(own) if std::ptr::eq(own, body) => {
                let start =
                    |i: usize| self.lines.get(i).map_or(body.len(), |l| l.as_ptr() as usize - body.as_ptr() as usize);
                let planned = ByteSplices::new(content, splices, eol, start);
                drop(self);
                planned.render(final_newline)
            }
            _ => {
                drop(self);
                splice_lines(content, splices, eol, final_newline)
            }
        }
    }

    /// The file's lines, without endings.
    pub fn lines(&self) -> &[&'a str] {
        &self.lines
    }

    /// How many lines the file has.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the file has no lines.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub(super) fn keys(&self, level: Level) -> &[u64] {
        // The exact level, which every search keys first, by its own loop:
        // `line_key` chose the level anew for each line.
        self.keys[level.key_slot()].get_or_init(|| match level {
            Level::Exact => self.lines.iter().map(|l| hash_str(l)).collect(),
            _ => self.lines.iter().map(|l| line_key(l, level)).collect(),
        })
    }

    /// The level's line hashes with their index, each made on first use.
    fn indexed(&self, level: Level) -> Occurrences<'_> {
        let keys = self.keys(level);
        Occurrences { keys, index: self.index[level.key_slot()].get_or_init(|| LineIndex::new(keys)) }
    }

    /// Start indexes (0-based) of every place in `within` where `needle`
    /// matches at `level` (a line level, not elision or fuzzy), at most
    /// `limit` of them, in order.
    pub fn find_all(&self, needle: &[&str], level: Level, within: Range<usize>, limit: usize) -> Vec<usize> {
        let m = needle.len();
        let within = within.start.min(self.len())..within.end.min(self.len());
        if m == 0 || within.len() < m || limit == 0 {
            return Vec::new();
        }
        // The exact level compares the needle as it is; the others compare
        // it normalized.
        let normalized: Vec<Cow<'_, str>> =
            if level == Level::Exact { Vec::new() } else { needle.iter().map(|l| normalize(l, level)).collect() };
        let want = |j: usize| -> &str { if level == Level::Exact { needle[j] } else { &normalized[j] } };
        let same_lines = |start: usize| {
            self.lines[start..start + m].iter().enumerate().all(|(j, line)| match level {
                Level::Exact => same_text(line, want(j)),
                _ => same_text(&normalize(line, level), want(j)),
            })
        };
        // A window a few blocks long (the lines around a match, looked at
        // for an edit already applied) is compared line by line when this
        // level has no index yet: indexing the whole file for it would cost
        // more than the comparisons, once per file and level.
        if self.keys[level.key_slot()].get().is_none() && within.len() <= SMALL_WINDOW {
            return (within.start..=within.end - m).filter(|&start| same_lines(start)).take(limit).collect();
        }
        // A block of a few lines (a hunk's old side, a scope line) keeps its
        // hashes on the stack: every search allocated for them.
        let mut short = [0u64; SHORT_NEEDLE];
        let long: Vec<u64>;
        let needle_keys: &[u64] = if m <= SHORT_NEEDLE {
            for (j, key) in short[..m].iter_mut().enumerate() {
                *key = hash_str(want(j));
            }
            &short[..m]
        } else {
            long = (0..m).map(|j| hash_str(want(j))).collect();
            &long
        };
        let occurrences = self.indexed(level);
        let keys = occurrences.keys;
        // Key by key: a slice comparison is a `memcmp` call, byte by byte in
        // a component.
        let same_at =
            |start: usize| keys[start..start + m].iter().zip(needle_keys).all(|(a, b)| a == b) && same_lines(start);

        // The rarest line of the block anchors the search; a block of common
        // lines only (each more frequent than the window is long, over the
        // block's length) is cheaper to scan for. Lines are counted, not
        // collected: a hunk's search ran a dozen allocations. Any anchor
        // gives the same starts, so a line found once (or nowhere) ends
        // the choice: the others cannot make the search shorter.
        let budget = within.len() / m + 1;
        let mut anchor: Option<(usize, usize)> = None;
        for (j, &key) in needle_keys.iter().enumerate() {
            let cap = anchor.map_or(budget, |(_, count)| count);
            let count = occurrences.of(key).take(cap + 1).count();
            if count <= cap && anchor.is_none_or(|(_, best)| count < best) {
                anchor = Some((j, count));
                if count <= 1 {
                    break;
                }
            }
        }
        if let Some((j, _)) = anchor {
            let starts = occurrences.of(needle_keys[j]).filter_map(|at| at.checked_sub(j));
            return starts
                .filter(|&start| start >= within.start && start + m <= within.end && same_at(start))
                .take(limit)
                .collect();
        }
        self.scan(level, needle_keys, within, limit, same_at)
    }

    /// Slide a rolling hash of `needle_keys` over the line hashes of `within`.
    fn scan(
        &self,
        level: Level,
        needle_keys: &[u64],
        within: Range<usize>,
        limit: usize,
        same_at: impl Fn(usize) -> bool,
    ) -> Vec<usize> {
        let m = needle_keys.len();
        let keys = &self.keys(level)[within.clone()];
        let mut target: u64 = 0;
        let mut window: u64 = 0;
        let mut top: u64 = 1; // ROLL_BASE^(m-1)
        for j in 0..m {
            target = target.wrapping_mul(ROLL_BASE).wrapping_add(needle_keys[j]);
            window = window.wrapping_mul(ROLL_BASE).wrapping_add(keys[j]);
            if j > 0 {
                top = top.wrapping_mul(ROLL_BASE);
            }
        }
        let mut found = Vec::new();
        let mut s = 0;
        loop {
            if window == target && same_at(within.start + s) {
                found.push(within.start + s);
                if found.len() >= limit {
                    break;
                }
            }
            if s + m >= keys.len() {
                break;
            }
            window = window.wrapping_sub(keys[s].wrapping_mul(top)).wrapping_mul(ROLL_BASE).wrapping_add(keys[s + m]);
            s += 1;
        }
        found
    }
}

/// A level's line hashes and their index, as one search reads them.
#[derive(Clone, Copy)]
struct Occurrences<'h> {
    keys: &'h [u64],
    index: &'h LineIndex,
}

impl<'h> Occurrences<'h> {
    /// The line indexes whose hash is `key`, ascending.
    #[inline]
    fn of(self, key: u64) -> impl Iterator<Item = usize> + 'h {
        self.index.chain(key).filter(move |&i| self.keys[i] == key)
    }
}

/// Line hashes chained by bucket: `head[bucket]` is the first line of the
/// bucket, `next[line]` the following one, in ascending line order. Built in
/// one pass, no sorting.
pub(super) struct LineIndex {
    shift: u32,
    head: Vec<u32>,
    next: Vec<u32>,
}

impl LineIndex {
    const END: u32 = u32::MAX;

    fn new(keys: &[u64]) -> Self {
        let bits = keys.len().max(2).next_power_of_two().trailing_zeros();
        let shift = 64 - bits;
        let mut head = vec![Self::END; 1 << bits];
        let mut next = vec![Self::END; keys.len()];
        for (i, &key) in keys.iter().enumerate().rev() {
            let bucket = (key >> shift) as usize;
            next[i] = head[bucket];
            head[bucket] = i as u32;
        }
        LineIndex { shift, head, next }
    }

    /// The lines in `key`'s bucket (other keys included), ascending.
    fn chain(&self, key: u64) -> impl Iterator<Item = usize> + '_ {
        let first = self.head[(key >> self.shift) as usize];
        std::iter::successors((first != Self::END).then_some(first), |&i| {
            let n = self.next[i as usize];
            (n != Self::END).then_some(n)
        })
        .map(|i| i as usize)
    }
}

/// Where a block was found: lines `start..end` (0-based, end exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockMatch {
    /// First matched line, 0-based.
    pub start: usize,
    /// One past the last matched line.
    pub end: usize,
    /// How far the match had to bend.
    pub level: Level,
}

/// Why a block was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchError {
    /// Nowhere, at any level tried.
    NotFound,
    /// Found at `level` in several places; `starts` are 0-based line indexes
    /// (at most [`AMBIGUITY_LIMIT`] of them).
    Ambiguous {
        /// The first level with any match.
        level: Level,
        /// Where each match starts (0-based lines).
        starts: Vec<usize>,
    },
}

/// How many places an ambiguity report lists.
pub const AMBIGUITY_LIMIT: usize = 10;

/// Find `needle` in `within` at the line levels (exact, trailing whitespace,
/// leading whitespace, look-alikes) and then fuzzily if enabled. The first
/// level with any match decides: one match is found, two or more ambiguous.
pub fn find_block(
    hay: &Haystack<'_>,
    needle: &[&str],
    within: Range<usize>,
    options: &LadderOptions,
) -> Result<BlockMatch, MatchError> {
    for level in LINE_LEVELS {
        if let Some(result) = find_at(hay, needle, within.clone(), level) {
            return result;
        }
    }
    match options.fuzzy {
        Some(min) => fuzzy_find(hay, needle, within, min, options.fuzzy_margin),
        None => Err(MatchError::NotFound),
    }
}

/// One line level: `None` when nothing matches there.
pub(super) fn find_at(
    hay: &Haystack<'_>,
    needle: &[&str],
    within: Range<usize>,
    level: Level,
) -> Option<Result<BlockMatch, MatchError>> {
    let starts = hay.find_all(needle, level, within, AMBIGUITY_LIMIT + 1);
    match starts.len() {
        0 => None,
        1 => Some(Ok(BlockMatch { start: starts[0], end: starts[0] + needle.len(), level })),
        _ => Some(Err(MatchError::Ambiguous { level, starts })),
    }
}
