//! The matching ladder: find where a block of old lines sits in a file, and
//! replace it, tolerating the drift models introduce, but never guessing.
//!
//! Levels, tried in order (see DESIGN.md, "The matching ladder"):
//! exact → ignoring trailing whitespace → ignoring leading whitespace (the
//! replacement is re-indented by the same offset) → `...` elision lines (each
//! piece found once, in order) → Unicode look-alikes folded (curly quotes,
//! dashes, non-breaking spaces) → optional fuzzy similarity with a clear
//! margin over the runner-up.
//!
//! **At every level the match must be unique.** Two or more places is an
//! `ambiguous` failure naming their line numbers; the first hit is never
//! edited silently.
//!
//! Cost is linear in the file: each level hashes every line once (lazily,
//! only when the level is reached) and chains the line hashes into an index.
//! A search starts from the block's rarest line and verifies only the places
//! that line occurs, so a reply with thousands of blocks costs thousands of
//! lookups, not thousands of scans; a block made only of common lines (blank
//! lines, braces) slides a rolling hash over the file instead.
//!
//! [`replace_block`] is the one-call entry point. [`Haystack`] and
//! [`find_block`] are the pieces, for formats that only need positions.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::ops::Range;

use crate::elision::{elisions_not_in, is_placeholder};
use crate::format::EditFailure;
use crate::text::{TextStyle, lines_with_endings, split_bom, strip_ending};
use crate::types::{FailureKind, LevelCount, LineRange, MatchInfo};

/// How far a match had to bend to be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Byte for byte (line endings aside).
    Exact,
    /// Ignoring whitespace at the ends of lines.
    TrailingWhitespace,
    /// Ignoring indentation; the replacement is re-indented to match.
    LeadingWhitespace,
    /// Pieces between `...` lines, each found once, in order.
    Elision,
    /// Curly quotes, dashes and non-breaking spaces folded to ASCII.
    Unicode,
    /// Similar enough, with a clear margin over the runner-up (opt-in).
    Fuzzy,
}

impl Level {
    /// A short machine name: `exact`, `trailing-whitespace`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::TrailingWhitespace => "trailing-whitespace",
            Level::LeadingWhitespace => "leading-whitespace",
            Level::Elision => "elision",
            Level::Unicode => "unicode",
            Level::Fuzzy => "fuzzy",
        }
    }

    /// How the match was made, for messages: "ignoring indentation".
    pub fn describe(self) -> &'static str {
        match self {
            Level::Exact => "exactly",
            Level::TrailingWhitespace => "ignoring trailing whitespace",
            Level::LeadingWhitespace => "ignoring indentation",
            Level::Elision => "around `...` elision lines",
            Level::Unicode => "ignoring look-alike characters (quotes, dashes, spaces)",
            Level::Fuzzy => "by fuzzy similarity",
        }
    }

    fn key_slot(self) -> usize {
        match self {
            Level::Exact => 0,
            Level::TrailingWhitespace => 1,
            Level::LeadingWhitespace | Level::Elision => 2,
            Level::Unicode | Level::Fuzzy => 3,
        }
    }
}

/// The line levels [`find_block`] tries, in order (elision and fuzzy are
/// handled separately).
const LINE_LEVELS: [Level; 4] = [Level::Exact, Level::TrailingWhitespace, Level::LeadingWhitespace, Level::Unicode];

/// Knobs of the ladder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LadderOptions {
    /// Enable the fuzzy level: the minimum mean line similarity (0.0–1.0) a
    /// window needs. `None` (the default) disables it.
    pub fuzzy: Option<f32>,
    /// How much better than the runner-up the best fuzzy window must score.
    pub fuzzy_margin: f32,
    /// Try the `...` elision level.
    pub elision: bool,
}

impl Default for LadderOptions {
    fn default() -> Self {
        LadderOptions { fuzzy: None, fuzzy_margin: 0.1, elision: true }
    }
}

/// Fold Unicode look-alikes to ASCII: curly quotes and primes to `'`/`"`,
/// dashes and minus signs to `-`, exotic spaces to a space, `…` to `...`;
/// zero-width characters are dropped.
pub fn fold_lookalikes(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{2035}' | '\u{FF07}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{2036}' | '\u{FF02}' => out.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => out.push('-'),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => out.push(' '),
            '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => {}
            '\u{2026}' => out.push_str("..."),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A line as a level compares it.
pub fn normalize(line: &str, level: Level) -> Cow<'_, str> {
    match level {
        Level::Exact => Cow::Borrowed(line),
        Level::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
        Level::LeadingWhitespace | Level::Elision => Cow::Borrowed(line.trim()),
        Level::Unicode | Level::Fuzzy => match fold_lookalikes(line.trim()) {
            Cow::Borrowed(s) => Cow::Borrowed(s),
            Cow::Owned(s) => Cow::Owned(s.trim().to_string()),
        },
    }
}

fn hash_str(s: &str) -> u64 {
    // Eight bytes at a time, then a final avalanche so rolling sums spread well.
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes = s.as_bytes();
    let mut h: u64 = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = (h ^ word).wrapping_mul(K).rotate_left(31);
    }
    let mut tail = [0u8; 8];
    let rest = chunks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h | 1
}

fn line_key(line: &str, level: Level) -> u64 {
    hash_str(&normalize(line, level))
}

const ROLL_BASE: u64 = 0x100_0000_01b3_u64 | 0x9e37_79b9_0000_0000;

/// A file's lines (without endings), with per-level line hashes and an index
/// of them, each computed on first use.
pub struct Haystack<'a> {
    lines: Vec<&'a str>,
    keys: [OnceCell<Vec<u64>>; 4],
    /// Per level: where each line hash occurs.
    index: [OnceCell<LineIndex>; 4],
}

impl<'a> Haystack<'a> {
    /// Lines without their endings (see [`crate::text::strip_ending`]).
    pub fn new(lines: Vec<&'a str>) -> Self {
        Haystack { lines, keys: Default::default(), index: Default::default() }
    }

    /// The lines of a file's content (after any BOM).
    pub fn of(content: &'a str) -> Self {
        let (_, body) = split_bom(content);
        // Sized up front: growing by doubling would copy it several times.
        let mut lines = Vec::with_capacity(crate::text::line_count(body));
        lines.extend(lines_with_endings(body).map(strip_ending));
        Haystack::new(lines)
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

    fn keys(&self, level: Level) -> &[u64] {
        self.keys[level.key_slot()].get_or_init(|| self.lines.iter().map(|l| line_key(l, level)).collect())
    }

    /// The line indexes whose hash at `level` is `key`, ascending, at most
    /// `cap` of them (counting stops there).
    fn occurrences(&self, level: Level, key: u64, cap: usize) -> Vec<usize> {
        let keys = self.keys(level);
        let index = self.index[level.key_slot()].get_or_init(|| LineIndex::new(keys));
        index.chain(key).filter(|&i| keys[i] == key).take(cap).collect()
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
        let needle_norm: Vec<Cow<'_, str>> = needle.iter().map(|l| normalize(l, level)).collect();
        let needle_keys: Vec<u64> = needle_norm.iter().map(|l| hash_str(l)).collect();
        let same_at = |start: usize| {
            let keys = &self.keys(level)[start..start + m];
            keys == needle_keys.as_slice() && (0..m).all(|j| normalize(self.lines[start + j], level) == needle_norm[j])
        };

        // The rarest line of the block anchors the search; a block of common
        // lines only (each more frequent than the window is long, over the
        // block's length) is cheaper to scan for.
        let budget = within.len() / m + 1;
        let mut anchor: Option<(usize, Vec<usize>)> = None;
        for (j, &key) in needle_keys.iter().enumerate() {
            let cap = anchor.as_ref().map_or(budget, |(_, places)| places.len());
            let places = self.occurrences(level, key, cap + 1);
            if places.len() <= cap && anchor.as_ref().is_none_or(|(_, best)| places.len() < best.len()) {
                let done = places.is_empty();
                anchor = Some((j, places));
                if done {
                    break;
                }
            }
        }
        if let Some((j, places)) = anchor {
            let starts = places.into_iter().filter_map(|at| at.checked_sub(j));
            return starts
                .filter(|&start| start >= within.start && start + m <= within.end && same_at(start))
                .take(limit)
                .collect();
        }
        self.scan(level, &needle_keys, within, limit, same_at)
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

/// Line hashes chained by bucket: `head[bucket]` is the first line of the
/// bucket, `next[line]` the following one, in ascending line order. Built in
/// one pass, no sorting.
struct LineIndex {
    shift: u32,
    head: Vec<u32>,
    next: Vec<u32>,
}

impl LineIndex {
    const END: u32 = u32::MAX;

    fn new(keys: &[u64]) -> Self {
        let bits = (keys.len().max(2) * 2).next_power_of_two().trailing_zeros();
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
fn find_at(
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

// ---------------------------------------------------------------------------
// Similarity, closest lines, fuzzy

fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().collect();
    let mut grams: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    grams.sort_unstable();
    grams
}

fn dice(a: &[(char, char)], b: &[(char, char)]) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f32 / (a.len() + b.len()) as f32
}

/// Similarity of two lines, 0.0–1.0, ignoring surrounding whitespace and
/// look-alike characters.
pub fn line_similarity(a: &str, b: &str) -> f32 {
    let (a, b) = (normalize(a, Level::Unicode), normalize(b, Level::Unicode));
    if a == b {
        return 1.0;
    }
    let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = ca.len().max(cb.len());
    if longest <= 200 { 1.0 - levenshtein(&ca, &cb) as f32 / longest as f32 } else { dice(&bigrams(&a), &bigrams(&b)) }
}

/// Lines shared by the needle and the file, as votes for where the needle
/// would start. Lines that occur very often in the file do not vote.
fn vote_starts(hay: &Haystack<'_>, needle: &[&str], within: Range<usize>) -> Vec<(isize, u32)> {
    const COMMON: usize = 64;
    let keys = hay.keys(Level::Unicode);
    let wanted: HashMap<u64, Vec<usize>> = {
        let mut map: HashMap<u64, Vec<usize>> = HashMap::new();
        for (j, line) in needle.iter().enumerate() {
            if line.trim().len() > 1 {
                map.entry(line_key(line, Level::Unicode)).or_default().push(j);
            }
        }
        map
    };
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut votes: HashMap<isize, u32> = HashMap::new();
    let within = within.start.min(hay.len())..within.end.min(hay.len());
    for i in within {
        if let Some(js) = wanted.get(&keys[i]) {
            let count = seen.entry(keys[i]).or_default();
            *count += 1;
            if *count > COMMON {
                continue;
            }
            for &j in js {
                *votes.entry(i as isize - j as isize).or_default() += 1;
            }
        }
    }
    let mut votes: Vec<(isize, u32)> = votes.into_iter().collect();
    votes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    votes
}

fn window_score(hay: &Haystack<'_>, needle: &[&str], start: usize) -> f32 {
    let total: f32 = needle.iter().enumerate().map(|(j, l)| line_similarity(l, hay.lines[start + j])).sum();
    total / needle.len().max(1) as f32
}

fn fuzzy_find(
    hay: &Haystack<'_>,
    needle: &[&str],
    within: Range<usize>,
    min: f32,
    margin: f32,
) -> Result<BlockMatch, MatchError> {
    let m = needle.len();
    if m == 0 {
        return Err(MatchError::NotFound);
    }
    let mut scored: Vec<(f32, usize)> = vote_starts(hay, needle, within.clone())
        .into_iter()
        .filter(|&(start, _)| start >= within.start as isize && start as usize + m <= within.end.min(hay.len()))
        .take(8)
        .map(|(start, _)| (window_score(hay, needle, start as usize), start as usize))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let Some(&(best, start)) = scored.first() else {
        return Err(MatchError::NotFound);
    };
    if best < min {
        return Err(MatchError::NotFound);
    }
    match scored.get(1) {
        Some(&(second, other)) if best - second < margin => {
            let mut starts = vec![start, other];
            starts.sort_unstable();
            Err(MatchError::Ambiguous { level: Level::Fuzzy, starts })
        }
        _ => Ok(BlockMatch { start, end: start + m, level: Level::Fuzzy }),
    }
}

/// The region of the file most like `needle`: 0-based `start..end`, or
/// `None` when nothing resembles it. Linear in the file.
pub fn closest_region(hay: &Haystack<'_>, needle: &[&str]) -> Option<Range<usize>> {
    let m = needle.len().max(1);
    let n = hay.len();
    if n == 0 {
        return None;
    }
    let clamp = |start: isize| {
        let start = start.clamp(0, n as isize - 1) as usize;
        start..(start + m).min(n)
    };
    if let Some(&(start, _)) = vote_starts(hay, needle, 0..n).first() {
        return Some(clamp(start));
    }
    // No line in common: compare the most distinctive needle line with each file line.
    let (j, probe) = needle.iter().enumerate().max_by_key(|(_, l)| l.trim().len())?;
    let probe = bigrams(&normalize(probe, Level::Unicode));
    if probe.is_empty() {
        return None;
    }
    let mut best = (0.0f32, 0usize);
    for (i, line) in hay.lines.iter().enumerate() {
        let score = dice(&probe, &bigrams(&normalize(line, Level::Unicode)));
        if score > best.0 {
            best = (score, i);
        }
    }
    (best.0 >= 0.5).then(|| clamp(best.1 as isize - j as isize))
}

/// Numbered lines of the file, `  12| text`, for hints.
pub fn numbered(hay: &Haystack<'_>, range: Range<usize>) -> String {
    const MAX: usize = 12;
    let mut out = String::new();
    let end = range.end.min(hay.len());
    for i in range.start..end.min(range.start + MAX) {
        out.push_str(&format!("{:>5}| {}\n", i + 1, hay.lines[i]));
    }
    if end > range.start + MAX {
        out.push_str(&format!("  ... ({} more lines)\n", end - range.start - MAX));
    }
    out
}

/// A "did you mean" hint for a block that was not found: the closest lines
/// with their numbers, and the block's lines that appear nowhere in the file.
/// Also returns the closest range as 1-based lines.
pub fn did_you_mean(hay: &Haystack<'_>, needle: &[&str]) -> (Option<String>, Option<LineRange>) {
    let mut hint = String::new();
    let region = closest_region(hay, needle);
    if let Some(region) = &region {
        hint.push_str(&format!(
            "the closest lines in the file are {}-{}:\n{}",
            region.start + 1,
            region.end,
            numbered(hay, region.clone())
        ));
    }
    let keys: std::collections::HashSet<u64> = hay.keys(Level::Unicode).iter().copied().collect();
    let missing: Vec<&str> = needle
        .iter()
        .filter(|l| !l.trim().is_empty() && !keys.contains(&line_key(l, Level::Unicode)))
        .take(3)
        .copied()
        .collect();
    if !missing.is_empty() {
        hint.push_str("these lines are not in the file at all:\n");
        for line in missing {
            hint.push_str(&format!("    {}\n", line.trim()));
        }
    }
    let lines = region.map(|r| LineRange::new(r.start as u32 + 1, r.end as u32));
    (if hint.is_empty() { None } else { Some(hint.trim_end().to_string()) }, lines)
}

// ---------------------------------------------------------------------------
// Re-indentation

/// How to shift the indentation of replacement lines so they sit where the
/// matched lines sit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reindent {
    /// Leave lines as written.
    Keep,
    /// Replace the leading-whitespace prefix `from` with `to`.
    Swap {
        /// The prefix the replacement was written with.
        from: String,
        /// The prefix the file uses there.
        to: String,
    },
    /// Shift by `delta` columns (a tab counts `tab` columns) and write the
    /// result with tabs (`use_tabs`) or spaces.
    Columns {
        /// Columns to add (negative: remove).
        delta: isize,
        /// Columns a tab stands for.
        tab: usize,
        /// Write indentation with tabs.
        use_tabs: bool,
    },
}

fn leading_ws(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn common_prefix<'s>(items: impl Iterator<Item = &'s str>) -> Option<&'s str> {
    let mut prefix: Option<&str> = None;
    for item in items {
        prefix = Some(match prefix {
            None => item,
            Some(p) => {
                let len = p.bytes().zip(item.bytes()).take_while(|(a, b)| a == b).count();
                &p[..len]
            }
        });
    }
    prefix
}

fn columns(ws: &str, tab: usize) -> usize {
    ws.chars().fold(0, |col, c| if c == '\t' { col + tab - col % tab } else { col + 1 })
}

impl Reindent {
    /// Infer the shift from pairs of (block line as written, file line it
    /// matched). Blank lines are ignored.
    pub fn infer<'s>(pairs: impl IntoIterator<Item = (&'s str, &'s str)>) -> Reindent {
        let pairs: Vec<(&str, &str)> = pairs
            .into_iter()
            .filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty())
            .map(|(a, b)| (leading_ws(a), leading_ws(b)))
            .collect();
        if pairs.iter().all(|(a, b)| a == b) {
            return Reindent::Keep;
        }
        let from = common_prefix(pairs.iter().map(|p| p.0)).unwrap_or("");
        let to = common_prefix(pairs.iter().map(|p| p.1)).unwrap_or("");
        if pairs.iter().all(|(a, b)| a[from.len()..] == b[to.len()..]) {
            return Reindent::Swap { from: from.to_string(), to: to.to_string() };
        }
        let use_tabs = pairs.iter().any(|(_, b)| b.contains('\t'));
        for tab in [4, 8, 2] {
            let delta = columns(pairs[0].1, tab) as isize - columns(pairs[0].0, tab) as isize;
            if pairs.iter().all(|(a, b)| columns(b, tab) as isize - columns(a, tab) as isize == delta) {
                return Reindent::Columns { delta, tab, use_tabs };
            }
        }
        let (a, b) = pairs[0];
        Reindent::Swap { from: a.to_string(), to: b.to_string() }
    }

    /// `line` re-indented.
    pub fn apply(&self, line: &str) -> String {
        if line.trim().is_empty() {
            return line.to_string();
        }
        let ws = leading_ws(line);
        let rest = &line[ws.len()..];
        match self {
            Reindent::Keep => line.to_string(),
            Reindent::Swap { from, to } => match ws.strip_prefix(from.as_str()) {
                Some(tail) => format!("{to}{tail}{rest}"),
                None => line.to_string(),
            },
            Reindent::Columns { delta, tab, use_tabs } => {
                let col = (columns(ws, *tab) as isize + delta).max(0) as usize;
                let indent = if *use_tabs {
                    format!("{}{}", "\t".repeat(col / tab), " ".repeat(col % tab))
                } else {
                    " ".repeat(col)
                };
                format!("{indent}{rest}")
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Replacing

/// The result of [`replace_block`].
#[derive(Debug, Clone, PartialEq)]
pub struct Replaced {
    /// The file's new content.
    pub content: String,
    /// The level the block matched at.
    pub level: Level,
    /// The lines replaced, in the file as it was (1-based).
    pub lines: LineRange,
    /// Each level tried, in order, with how many places it found.
    pub candidates: Vec<(Level, usize)>,
}

impl Replaced {
    /// How the block was placed, for the report.
    pub fn match_info(&self) -> MatchInfo {
        ladder_match(self.level, &self.candidates)
    }
}

/// A ladder match for the report: the level that placed a block and the
/// places each level tried found.
pub fn ladder_match(level: Level, candidates: &[(Level, usize)]) -> MatchInfo {
    MatchInfo {
        candidates: candidates
            .iter()
            .map(|(level, count)| LevelCount { level: level.as_str().into(), count: *count as u32 })
            .collect(),
        ..MatchInfo::at(level.as_str())
    }
}

/// One planned change of a line range of the file.
#[derive(Debug, Clone)]
struct Splice {
    start: usize,
    end: usize,
    /// Lines at the start of the range kept byte for byte.
    keep_prefix: usize,
    /// Lines at the end of the range kept byte for byte.
    keep_suffix: usize,
    middle: Vec<String>,
}

impl Splice {
    /// How many lines the range holds once replaced.
    fn new_len(&self) -> usize {
        self.keep_prefix + self.middle.len() + self.keep_suffix
    }
}

/// A new line as written into a file where its block matched at `level`.
/// Unless the match was exact, the model did not copy the file's
/// whitespace, so trailing whitespace on its new lines is a stray, not
/// meant, and is dropped. One rule for every format: the ladder and
/// udiff's hunks both write new lines through it.
pub fn written_line(line: &str, level: Level) -> &str {
    if level == Level::Exact { line } else { line.trim_end_matches([' ', '\t']) }
}

fn make_splice(
    start: usize,
    end: usize,
    first: &[&str],
    last: &[&str],
    replace: &[&str],
    reindent: &Reindent,
    level: Level,
) -> Splice {
    let region = end - start;
    // A line the replacement keeps (equal as written) keeps the file's bytes.
    let same = |a: &&&str, b: &&&str| written_line(a, level) == written_line(b, level);
    let keep_prefix = first.iter().zip(replace).take_while(|(a, b)| same(a, b)).count().min(region).min(replace.len());
    let keep_suffix = last
        .iter()
        .rev()
        .zip(replace.iter().rev())
        .take_while(|(a, b)| same(a, b))
        .count()
        .min(region - keep_prefix)
        .min(replace.len() - keep_prefix);
    let middle = replace[keep_prefix..replace.len() - keep_suffix]
        .iter()
        .map(|l| reindent.apply(written_line(l, level)))
        .collect();
    Splice { start, end, keep_prefix, keep_suffix, middle }
}

/// Apply non-overlapping `splices` (in order) to the file.
fn render(content: &str, splices: &[Splice]) -> String {
    let style = TextStyle::detect(content);
    let replaced = splices.iter().map(|s| (s.start + s.keep_prefix..s.end - s.keep_suffix, s.middle.as_slice()));
    crate::text::splice_lines(content, replaced, style.eol.as_str(), style.final_newline)
}

/// A replacement that leaves code out: a placeholder line (`// ... existing
/// code ...`) that neither the block being replaced nor the rest of the file
/// has (a `.pyi` stub's `...` is the file's own). Written into the file, it
/// would delete the lines it stands for.
pub fn elided_replacement(search: &[&str], replace: &[&str], file: &[&str]) -> Option<EditFailure> {
    let text = joined_lines(replace);
    let elision = elisions_not_in(&text, search.iter().chain(file).copied()).into_iter().next()?;
    Some(
        EditFailure::new(
            FailureKind::Forbidden,
            format!(
                "the replacement leaves code out (`{}`, its line {}); written as is, it would delete the lines it stands for",
                elision.text.trim(),
                elision.line
            ),
        )
        .with_hint(
            "write out every line the replacement keeps, or put the same `...` line in the text to replace so each piece is matched",
        ),
    )
}

/// Split block lines on `...` placeholder lines. This level is only reached
/// when the block did not match as written, so a bare `...` after a `:` line
/// counts as a placeholder too (were it a real Python stub body, the exact
/// level would have found it).
fn split_on_elisions<'s>(lines: &[&'s str]) -> Vec<Vec<&'s str>> {
    let mut pieces = vec![Vec::new()];
    for &line in lines {
        let trimmed = line.trim();
        if !trimmed.is_empty() && is_placeholder(trimmed, false) {
            pieces.push(Vec::new());
        } else {
            pieces.last_mut().expect("never empty").push(line);
        }
    }
    pieces
}

fn block_lines(text: &str) -> Vec<&str> {
    lines_with_endings(text).map(strip_ending).collect()
}

fn places(starts: &[usize], len: usize) -> String {
    let shown: Vec<String> = starts
        .iter()
        .take(AMBIGUITY_LIMIT)
        .map(|&s| if len > 1 { format!("{}-{}", s + 1, s + len) } else { format!("{}", s + 1) })
        .collect();
    let more = if starts.len() > AMBIGUITY_LIMIT { " and more" } else { "" };
    format!("{}{more}", shown.join(", "))
}

/// The failure for a block found in several places.
pub fn ambiguous_failure(level: Level, starts: &[usize], len: usize) -> EditFailure {
    let how = if level == Level::Exact { String::new() } else { format!(" (matching {})", level.describe()) };
    let count =
        if starts.len() > AMBIGUITY_LIMIT { format!("more than {AMBIGUITY_LIMIT}") } else { starts.len().to_string() };
    EditFailure::new(
        FailureKind::Ambiguous,
        format!("the text to replace occurs in {count} places{how}, at lines {}", places(starts, len)),
    )
    .with_hint("include more of the surrounding lines so the text matches exactly one place")
    .at(LineRange::new(starts[0] as u32 + 1, (starts[0] + len.max(1)) as u32))
}

/// Plan the elision level: each piece found once, in order.
fn plan_elision(
    hay: &Haystack<'_>,
    search: &[&str],
    replace: &[&str],
) -> Result<Option<(Vec<Splice>, LineRange)>, EditFailure> {
    let spieces = split_on_elisions(search);
    if spieces.len() < 2 {
        return Ok(None);
    }
    let rpieces = split_on_elisions(replace);
    if rpieces.len() != 1 && rpieces.len() != spieces.len() {
        return Err(EditFailure::new(
            FailureKind::Malformed,
            format!(
                "the text to replace has {} `...` lines but the replacement has {}",
                spieces.len() - 1,
                rpieces.len() - 1
            ),
        )
        .with_hint("use the same `...` lines in both, or write the lines out in full"));
    }
    let options = LadderOptions::default();
    let mut cursor = 0;
    let mut found: Vec<Option<BlockMatch>> = Vec::with_capacity(spieces.len());
    for piece in &spieces {
        if piece.is_empty() {
            found.push(None);
            continue;
        }
        match find_block(hay, piece, cursor..hay.len(), &options) {
            Ok(m) => {
                cursor = m.end;
                found.push(Some(m));
            }
            Err(MatchError::NotFound) => return Ok(None),
            Err(MatchError::Ambiguous { level, starts }) => {
                let mut failure = ambiguous_failure(level, &starts, piece.len());
                failure.message = format!("a piece between `...` lines is ambiguous: {}", failure.message);
                return Err(failure);
            }
        }
    }
    let matched: Vec<(usize, BlockMatch)> = found.iter().enumerate().filter_map(|(i, m)| m.map(|m| (i, m))).collect();
    let Some(&(first_i, first)) = matched.first() else {
        return Ok(None);
    };
    let &(last_i, last) = matched.last().expect("non-empty");
    let pairs =
        matched.iter().flat_map(|&(i, m)| spieces[i].iter().zip(&hay.lines[m.start..m.end]).map(|(a, b)| (*a, *b)));
    let reindent = Reindent::infer(pairs);
    let range = LineRange::new(first.start as u32 + 1, last.end as u32);
    if rpieces.len() == 1 {
        let splice =
            make_splice(first.start, last.end, &spieces[first_i], &spieces[last_i], replace, &reindent, Level::Elision);
        return Ok(Some((vec![splice], range)));
    }
    let mut splices = Vec::new();
    for (i, m) in found.iter().enumerate() {
        match m {
            Some(m) => splices.push(make_splice(
                m.start,
                m.end,
                &spieces[i],
                &spieces[i],
                &rpieces[i],
                &reindent,
                Level::Elision,
            )),
            None if rpieces[i].is_empty() => {}
            None => {
                return Err(EditFailure::new(
                    FailureKind::Malformed,
                    "the replacement adds lines next to a `...` line with nothing to anchor them",
                )
                .with_hint("put at least one real line of the file next to every `...` line"));
            }
        }
    }
    Ok(Some((splices, range)))
}

/// Replace the block `search` with `replace` in `content` using the ladder.
///
/// `search` must hold at least one line (an empty search means "create or
/// append", which is the format's business). Line endings, BOM and the final
/// newline of `content` are kept; lines of `replace` identical to the
/// matching lines of `search` at its start and end keep the file's bytes.
///
/// Failures: `not-found` (with the closest lines as a hint), `ambiguous`
/// (naming the line numbers), `already-applied` (the replacement is
/// already where the search text would have been), `malformed`.
pub fn replace_block(
    content: &str,
    search: &str,
    replace: &str,
    options: &LadderOptions,
) -> Result<Replaced, EditFailure> {
    let hay = Haystack::of(content);
    let plan = plan_block(&hay, &block_lines(search), &block_lines(replace), options)?;
    Ok(Replaced {
        content: render(content, &plan.splices),
        level: plan.level,
        lines: plan.lines,
        candidates: plan.candidates,
    })
}

/// Where and how one block changes the file, before anything is written.
struct Plan {
    splices: Vec<Splice>,
    lines: LineRange,
    level: Level,
    /// Found only once blank lines at the block's edges were dropped.
    trimmed: bool,
    /// Each level tried, with the places it found.
    candidates: Vec<(Level, usize)>,
}

fn plan_block(hay: &Haystack<'_>, s: &[&str], r: &[&str], options: &LadderOptions) -> Result<Plan, EditFailure> {
    if s.is_empty() {
        return Err(EditFailure::new(FailureKind::Malformed, "the text to replace is empty"));
    }
    if let Some(failure) = elided_replacement(s, r, hay.lines()) {
        return Err(failure);
    }
    let n = hay.len();
    let mut deferred: Option<EditFailure> = None;
    let mut plan: Option<(Vec<Splice>, LineRange, Level)> = None;
    let mut candidates: Vec<(Level, usize)> = Vec::new();
    for level in LINE_LEVELS {
        if level == Level::Unicode && options.elision {
            match plan_elision(hay, s, r) {
                Ok(Some((splices, range))) => {
                    candidates.push((Level::Elision, 1));
                    plan = Some((splices, range, Level::Elision));
                    break;
                }
                Ok(None) => candidates.push((Level::Elision, 0)),
                Err(failure) if failure.kind == FailureKind::Ambiguous => return Err(failure),
                // Maybe the `...` lines are real text that only folding finds.
                Err(failure) => deferred = Some(failure),
            }
        }
        match find_at(hay, s, 0..n, level) {
            None | Some(Err(MatchError::NotFound)) => candidates.push((level, 0)),
            Some(Err(MatchError::Ambiguous { level, starts })) => {
                return Err(ambiguous_failure(level, &starts, s.len()));
            }
            Some(Ok(m)) => {
                candidates.push((level, 1));
                plan = Some((single_splice(hay, s, r, m), LineRange::new(m.start as u32 + 1, m.end as u32), level));
                break;
            }
        }
    }
    if plan.is_none()
        && let Some(min) = options.fuzzy
    {
        match fuzzy_find(hay, s, 0..n, min, options.fuzzy_margin) {
            Ok(m) => {
                candidates.push((Level::Fuzzy, 1));
                plan = Some((single_splice(hay, s, r, m), LineRange::new(m.start as u32 + 1, m.end as u32), m.level))
            }
            Err(MatchError::Ambiguous { level, starts }) => {
                return Err(ambiguous_failure(level, &starts, s.len()));
            }
            Err(MatchError::NotFound) => candidates.push((Level::Fuzzy, 0)),
        }
    }
    let Some((splices, lines, level)) = plan else {
        // Models often add a blank line before or after the lines they copy.
        if let Some((search, replace)) = trim_blank_edges(s, r) {
            match plan_block(hay, &block_lines(&search), &block_lines(&replace), options) {
                Ok(done) => return Ok(Plan { trimmed: true, ..done }),
                Err(failure) if failure.kind == FailureKind::Ambiguous => return Err(failure),
                Err(_) => {}
            }
        }
        return Err(deferred.unwrap_or_else(|| not_found(hay, s, r)));
    };
    if let Some(failure) = already_applied_around(hay, s, r, lines) {
        return Err(failure);
    }
    Ok(Plan { splices, lines, level, trimmed: false, candidates })
}

/// Where and how one block of [`replace_blocks_at_once`] was placed: its
/// level, the lines it replaced (as the block saw the file), the report's view.
pub type Placement = (Level, LineRange, MatchInfo);

/// Replace `blocks` (search, replace) in `content`, each as if applied to
/// the result of the ones before it, in one pass over the file: what
/// [`replace_block`] in a loop gives, without rescanning the file per block.
///
/// `None` when one pass cannot be shown to give the same result; the caller
/// then applies the blocks one by one. One pass is taken only when every
/// block matches exactly one place of the original file at a line level
/// (not elision, not fuzzy), the places are apart (no block's
/// already-applied check can see an earlier block's change), and no block's
/// text contains a line that an earlier block writes (so no earlier block
/// can have made a new match). Anything else, including every failure, is
/// left to the one-by-one path and its messages.
pub fn replace_blocks_at_once(
    content: &str,
    blocks: &[(&str, &str)],
    options: &LadderOptions,
) -> Option<(String, Vec<Placement>)> {
    // Inserted lines take the file's usual ending; with mixed endings an
    // earlier block could change which that is.
    let bytes = content.as_bytes();
    if memchr::memchr(b'\r', bytes).is_some()
        && memchr::memmem::find_iter(bytes, b"\r\n").count() != memchr::memchr_iter(b'\n', bytes).count()
    {
        return None;
    }
    let hay = Haystack::of(content);
    let mut written: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut placed: Vec<(Plan, usize, usize)> = Vec::with_capacity(blocks.len());
    // The placed line ranges by start. They never overlap, so the one that
    // starts last before a range's end is the only one that can touch it.
    let mut ranges: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for (search, replace) in blocks {
        let (s, r) = (block_lines(search), block_lines(replace));
        let plan = plan_block(&hay, &s, &r, options).ok()?;
        if plan.trimmed || !LINE_LEVELS.contains(&plan.level) {
            return None;
        }
        // Looser levels only merge lines, so a line equal at any level is
        // equal at the loosest: one key per line covers them all.
        if s.iter().any(|l| written.contains(&line_key(l, Level::Unicode))) {
            return None;
        }
        let (start, end) = (plan.lines.start as usize - 1, plan.lines.end as usize);
        let reach = r.len().max(1);
        if ranges.range(..end + reach).next_back().is_some_and(|(_, &b)| start < b + reach) {
            return None;
        }
        written.extend(plan.splices.iter().flat_map(|sp| &sp.middle).map(|l| line_key(l, Level::Unicode)));
        ranges.insert(start, end);
        placed.push((plan, start, end));
    }
    // Line numbers as each block saw the file: shifted by the earlier blocks
    // above it. Summed in a Fenwick tree over the blocks' order in the file,
    // filled in reply order, so a reply of thousands of blocks stays n log n.
    let rank: std::collections::HashMap<usize, usize> = ranges.keys().enumerate().map(|(i, &a)| (a, i)).collect();
    let mut grown = vec![0isize; ranges.len() + 1];
    let mut outcomes = Vec::with_capacity(placed.len());
    for (plan, start, end) in &placed {
        let mut shift = 0;
        let mut i = rank[start];
        while i > 0 {
            shift += grown[i];
            i &= i - 1;
        }
        let at = |line: u32| (line as isize + shift) as u32;
        let matched = ladder_match(plan.level, &plan.candidates);
        outcomes.push((plan.level, LineRange::new(at(plan.lines.start), at(plan.lines.end)), matched));
        let delta = plan.splices.iter().map(Splice::new_len).sum::<usize>() as isize - (end - start) as isize;
        let mut i = rank[start] + 1;
        while i < grown.len() {
            grown[i] += delta;
            i += i & i.wrapping_neg();
        }
    }
    let mut splices: Vec<Splice> = placed.into_iter().flat_map(|(plan, _, _)| plan.splices).collect();
    splices.sort_by_key(|sp| sp.start);
    Some((render(content, &splices), outcomes))
}

/// The block without blank lines at its edges, and the replacement without
/// as many blank lines at the same edges; `None` when there are none.
fn trim_blank_edges(s: &[&str], r: &[&str]) -> Option<(String, String)> {
    let lead = s.iter().take_while(|l| l.trim().is_empty()).count();
    if lead == s.len() {
        return None;
    }
    let trail = s.iter().rev().take_while(|l| l.trim().is_empty()).count();
    if lead == 0 && trail == 0 {
        return None;
    }
    let r_lead = r.iter().take_while(|l| l.trim().is_empty()).count().min(lead);
    let r_trail = r.iter().rev().take_while(|l| l.trim().is_empty()).count().min(trail).min(r.len() - r_lead);
    Some((joined_lines(&s[lead..s.len() - trail]), joined_lines(&r[r_lead..r.len() - r_trail])))
}

/// `lines`, each ended with `\n`.
fn joined_lines(lines: &[&str]) -> String {
    let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

fn single_splice(hay: &Haystack<'_>, s: &[&str], r: &[&str], m: BlockMatch) -> Vec<Splice> {
    let reindent = match m.level {
        Level::Exact | Level::TrailingWhitespace => Reindent::Keep,
        _ => Reindent::infer(s.iter().copied().zip(hay.lines[m.start..m.end].iter().copied())),
    };
    vec![make_splice(m.start, m.end, s, s, r, &reindent, m.level)]
}

fn same_lines(a: &[&str], b: &[&str]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| normalize(x, Level::Unicode) == normalize(y, Level::Unicode))
}

/// The replacement already sits around the matched lines (it extends the
/// search text, and the extension is there): applying again would duplicate it.
fn already_applied_around(hay: &Haystack<'_>, s: &[&str], r: &[&str], found: LineRange) -> Option<EditFailure> {
    if r.len() <= s.len() || same_lines(s, r) {
        return None;
    }
    let (start, end) = (found.start as usize - 1, found.end as usize);
    let lo = start.saturating_sub(r.len());
    let hi = (end + r.len()).min(hay.len());
    for level in [Level::TrailingWhitespace, Level::LeadingWhitespace] {
        for at in hay.find_all(r, level, lo..hi, AMBIGUITY_LIMIT) {
            if at <= start && at + r.len() >= end {
                return Some(already_applied(at, r.len()));
            }
        }
    }
    None
}

fn already_applied(at: usize, len: usize) -> EditFailure {
    EditFailure::new(
        FailureKind::AlreadyApplied,
        format!("the replacement text is already in the file, at lines {}-{}", at + 1, at + len),
    )
    .with_hint("this edit seems to have been applied already; do not send it again")
    .at(LineRange::new(at as u32 + 1, (at + len) as u32))
}

fn not_found(hay: &Haystack<'_>, s: &[&str], r: &[&str]) -> EditFailure {
    // The replacement sitting once in the file explains the miss, unless it
    // is too slight to tell (a lone `}` or `pass` is everywhere).
    let substance: usize = r.iter().map(|l| l.trim().len()).sum();
    if substance >= 8 && !same_lines(s, r) {
        for level in LINE_LEVELS {
            let found = hay.find_all(r, level, 0..hay.len(), 2);
            if found.len() == 1 {
                return already_applied(found[0], r.len());
            }
            if !found.is_empty() {
                break;
            }
        }
    }
    let (hint, lines) = did_you_mean(hay, s);
    let mut failure = EditFailure::new(
        FailureKind::NotFound,
        "the text to replace is not in the file (tried exact, whitespace-insensitive, `...` and look-alike matching)",
    );
    failure.hint = Some(match hint {
        Some(h) => format!("{h}\ncopy the lines to replace exactly as they are in the file"),
        None => "copy the lines to replace exactly as they are in the file".to_string(),
    });
    failure.lines = lines;
    failure
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rep(content: &str, search: &str, replace: &str) -> Result<Replaced, EditFailure> {
        replace_block(content, search, replace, &LadderOptions::default())
    }

    #[test]
    fn exact_match_keeps_crlf_and_missing_final_newline() {
        let out = rep("a\r\nb\r\nc", "b\n", "B\nB2\n").unwrap();
        assert_eq!(out.content, "a\r\nB\r\nB2\r\nc");
        assert_eq!(out.level, Level::Exact);
        assert_eq!(out.lines, LineRange::new(2, 2));
        let out = rep("\u{feff}a\nb", "b\n", "c\n").unwrap();
        assert_eq!(out.content, "\u{feff}a\nc");
        let out = rep("a\nb", "b", "").unwrap();
        assert_eq!(out.content, "a");
    }

    #[test]
    fn trailing_whitespace_drift_keeps_context_bytes() {
        let out = rep("x = 1   \ny = 2\n", "x = 1\ny = 2\n", "x = 1\ny = 3\n").unwrap();
        assert_eq!(out.level, Level::TrailingWhitespace);
        assert_eq!(out.content, "x = 1   \ny = 3\n");
    }

    #[test]
    fn indentation_drift_reindents_the_replacement() {
        let file = "class A:\n    def f(self):\n        return 1\n";
        let out = rep(file, "def f(self):\n    return 1\n", "def f(self):\n    if x:\n        return 2\n").unwrap();
        assert_eq!(out.level, Level::LeadingWhitespace);
        assert_eq!(out.content, "class A:\n    def f(self):\n        if x:\n            return 2\n");
        let tabs = "fn a() {\n\tif x {\n\t\ty();\n\t}\n}\n";
        let out =
            rep(tabs, "    if x {\n        y();\n    }\n", "    if x {\n        y();\n        z();\n    }\n").unwrap();
        assert_eq!(out.content, "fn a() {\n\tif x {\n\t\ty();\n\t\tz();\n\t}\n}\n");
    }

    #[test]
    fn ambiguity_is_an_error_at_every_level() {
        let err = rep("a\nx\nb\nx\n", "x\n", "y\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::Ambiguous);
        assert!(err.message.contains("lines 2, 4"), "{}", err.message);
        let err = rep("  x\n    x\n", "x\n", "y\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::Ambiguous);
        let err = rep("a \u{2014} b\na - b \n", "a -- b\n", "c\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::NotFound);
    }

    #[test]
    fn elision_pieces_are_found_in_order() {
        let file = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n";
        let out = rep(file, "def f():\n    ...\n    return a\n", "def f():\n    ...\n    return a + c\n").unwrap();
        assert_eq!(out.level, Level::Elision);
        assert_eq!(out.content, "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a + c\n");
        let out = rep(file, "def f():\n    # ...\n    return a\n", "def g():\n    return 0\n").unwrap();
        assert_eq!(out.content, "def g():\n    return 0\n");
    }

    #[test]
    fn a_replacement_that_leaves_code_out_is_refused() {
        let err = rep("a\nb\nc\n", "a\nb\n", "a2\n# ... rest unchanged ...\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::Forbidden);
        // The same placeholder on both sides is the elision level, not a loss.
        let out = rep("a\nb\nc\n", "a\n# ...\nc\n", "A\n# ...\nc\n").unwrap();
        assert_eq!(out.content, "A\nb\nc\n");
        // A Python stub body is code.
        let out = rep("x\n", "x\n", "def f():\n    ...\n").unwrap();
        assert_eq!(out.content, "def f():\n    ...\n");
    }

    #[test]
    fn lookalikes_are_folded() {
        let file = "msg = \u{201c}it\u{2019}s \u{2014} ok\u{201d}\nx\u{a0}= 1\n";
        let out = rep(file, "msg = \"it's - ok\"\n", "msg = \"fine\"\n").unwrap();
        assert_eq!(out.level, Level::Unicode);
        assert_eq!(out.content, "msg = \"fine\"\nx\u{a0}= 1\n");
    }

    #[test]
    fn not_found_hints_the_closest_lines_and_stray_lines() {
        let file = "one\ntwo\nthree\nfour\n";
        let err = rep(file, "two\nthree and a half\n", "x\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::NotFound);
        let hint = err.hint.unwrap();
        assert!(hint.contains("2| two"), "{hint}");
        assert!(hint.contains("three and a half"), "{hint}");
    }

    #[test]
    fn blank_lines_around_the_block_are_forgiven() {
        let out = rep("a\nb\nc", "\nb\n\n", "\nB\n\n").unwrap();
        assert_eq!(out.content, "a\nB\nc");
    }

    #[test]
    fn already_applied_is_detected() {
        let err = rep("a\nfresh = 1\nc\n", "stale = 1\n", "fresh = 1\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::AlreadyApplied);
        let err = rep("a\nB\nc\n", "b\n", "B\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::NotFound);
        let err = rep("import os\nimport sys\n\nx\n", "import os\n", "import os\nimport sys\n").unwrap_err();
        assert_eq!(err.kind, FailureKind::AlreadyApplied);
    }

    #[test]
    fn fuzzy_needs_a_clear_margin() {
        let file = "alpha = compute(1, 2)\nbeta = other(3)\ngamma = 9\n";
        let options = LadderOptions { fuzzy: Some(0.8), ..LadderOptions::default() };
        let out = replace_block(file, "alpha = compute(1, 3)\nbeta = other(3)\n", "z\n", &options).unwrap();
        assert_eq!(out.level, Level::Fuzzy);
        assert_eq!(out.content, "z\ngamma = 9\n");
        assert!(rep(file, "alpha = compute(1, 3)\nbeta = other(3)\n", "z\n").is_err());
        let twice = "f(a, 1)\ng()\nf(a, 2)\ng()\n";
        let err = replace_block(twice, "f(a, 3)\ng()\n", "z\n", &options).unwrap_err();
        assert_eq!(err.kind, FailureKind::Ambiguous);
    }

    #[test]
    fn rolling_hash_finds_all_places() {
        let lines: Vec<&str> = "a b a b a".split(' ').collect();
        let hay = Haystack::new(lines);
        assert_eq!(hay.find_all(&["a", "b"], Level::Exact, 0..5, 10), vec![0, 2]);
        assert_eq!(hay.find_all(&["b", "a"], Level::Exact, 2..5, 10), vec![3]);
        assert_eq!(hay.find_all(&["a"], Level::Exact, 0..5, 2), vec![0, 2]);
    }

    #[test]
    fn blocks_at_once_report_lines_as_each_block_saw_the_file() {
        let content = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
        let blocks = [("b\n", "B1\nB2\nB3\n"), ("    h\n", "H\n"), ("k\n", "")];
        let (out, outcomes) = replace_blocks_at_once(content, &blocks, &LadderOptions::default()).expect("one pass");
        assert_eq!(out, "a\nB1\nB2\nB3\nc\nd\ne\nf\ng\nH\ni\nj\nl\n");
        let lines: Vec<(u32, u32)> = outcomes.iter().map(|(_, l, _)| (l.start, l.end)).collect();
        assert_eq!(lines, [(2, 2), (10, 10), (13, 13)], "line 11 is line 13 once block 1 added two lines");
        assert_eq!(outcomes[1].0, Level::LeadingWhitespace);
        // A block whose text an earlier block writes is left to the one-by-one path.
        let chained = [("b\n", "x\n"), ("x\n", "y\n")];
        assert_eq!(replace_blocks_at_once(content, &chained, &LadderOptions::default()), None);
    }

    proptest! {
        #[test]
        fn blocks_at_once_equal_blocks_one_by_one(
            lines in proptest::collection::vec("(  )?[a-f]{1,2}", 4..40),
            picks in proptest::collection::vec((0usize..40, 1usize..4, proptest::collection::vec("(  )?[a-h]{1,2}", 0..4), any::<bool>()), 1..6),
            crlf: bool,
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let content: String = lines.iter().map(|l| format!("{l}{eol}")).collect();
            let mut blocks: Vec<(String, String)> = Vec::new();
            for (at, len, replace, drift) in picks {
                let at = at % lines.len();
                let end = (at + len).min(lines.len());
                let search: String = lines[at..end]
                    .iter()
                    .map(|l| if drift { format!("  {l}\n") } else { format!("{l}\n") })
                    .collect();
                blocks.push((search, replace.iter().map(|l| format!("{l}\n")).collect()));
            }
            let pairs: Vec<(&str, &str)> = blocks.iter().map(|(s, r)| (s.as_str(), r.as_str())).collect();
            let options = LadderOptions::default();
            if let Some((at_once, outcomes)) = replace_blocks_at_once(&content, &pairs, &options) {
                let mut current = content.clone();
                for ((search, replace), (level, lines, _)) in pairs.iter().zip(&outcomes) {
                    let done = replace_block(&current, search, replace, &options);
                    prop_assert!(done.is_ok(), "one by one failed where one pass applied: {:?}", done);
                    let done = done.unwrap();
                    prop_assert_eq!((done.level, done.lines), (*level, *lines));
                    current = done.content;
                }
                prop_assert_eq!(at_once, current);
            }
        }

        #[test]
        fn find_all_agrees_with_a_plain_scan(
            lines in proptest::collection::vec("[ab]{0,2}[ \t]{0,1}", 0..60),
            needle in proptest::collection::vec("[ab]{0,2}", 1..4),
            from in 0usize..60, to in 0usize..70, limit in 1usize..6,
        ) {
            // Few distinct lines: both the anchored lookup and the rolling scan run.
            let hay = Haystack::new(lines.iter().map(String::as_str).collect());
            let needle: Vec<&str> = needle.iter().map(String::as_str).collect();
            for level in LINE_LEVELS {
                let want: Vec<usize> = (from..to.min(lines.len()))
                    .filter(|&s| s + needle.len() <= to.min(lines.len()))
                    .filter(|&s| (0..needle.len()).all(|j| normalize(&lines[s + j], level) == normalize(needle[j], level)))
                    .take(limit)
                    .collect();
                prop_assert_eq!(hay.find_all(&needle, level, from..to, limit), want, "{:?}", level);
            }
        }

        #[test]
        fn unique_block_replaces_exactly(
            lines in proptest::collection::vec("[a-d ]{0,4}", 1..40),
            start in 0usize..40, len in 1usize..5, crlf: bool, final_nl: bool,
        ) {
            // Without a final newline, a last empty line is not a line at all.
            prop_assume!(final_nl || !lines[lines.len() - 1].is_empty());
            let start = start % lines.len();
            let end = (start + len).min(lines.len());
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut content = lines.join(eol);
            if final_nl { content.push_str(eol); }
            let hay = Haystack::of(&content);
            let needle: Vec<&str> = lines[start..end].iter().map(|s| s.as_str()).collect();
            prop_assume!(hay.find_all(&needle, Level::Exact, 0..lines.len(), 2).len() == 1);
            let search = needle.join("\n") + "\n";
            let result = rep(&content, &search, "NEW\n");
            if let Ok(out) = result {
                let mut expected: Vec<&str> = lines[..start].iter().map(|s| s.as_str()).collect();
                expected.push("NEW");
                expected.extend(lines[end..].iter().map(|s| s.as_str()));
                let mut want = expected.join(eol);
                if final_nl { want.push_str(eol); }
                prop_assert_eq!(out.content, want);
                prop_assert_eq!(out.level, Level::Exact);
            } else {
                // Only a replacement already present may refuse.
                prop_assert_eq!(result.unwrap_err().kind, FailureKind::AlreadyApplied);
            }
        }

        #[test]
        fn never_panics(content in "[a-c \t.\r\n\u{201c}]{0,60}", search in "[a-c \t.\n]{1,20}", replace in "[a-c \t.\n]{0,20}") {
            let _ = replace_block(&content, &search, &replace, &LadderOptions { fuzzy: Some(0.5), ..Default::default() });
        }
    }
}
