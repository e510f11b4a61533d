//! Similarity, closest lines and fuzzy placement: what a failure shows
//! as "did you mean", and the optional fuzzy level.

use std::collections::HashMap;
use std::ops::Range;

use super::*;

pub(super) fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().collect();
    let mut grams: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    grams.sort_unstable();
    grams
}

pub(super) fn dice(a: &[(char, char)], b: &[(char, char)]) -> f32 {
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
    if longest <= 200 {
        1.0 - strsim::generic_levenshtein(&ca, &cb) as f32 / longest as f32
    } else {
        dice(&bigrams(&a), &bigrams(&b))
    }
}

/// Lines shared by the needle and the file, as votes for where the needle
/// would start. Lines that occur very often in the file do not vote.
pub(super) fn vote_starts(hay: &Haystack<'_>, needle: &[&str], within: Range<usize>) -> Vec<(isize, u32)> {
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

pub(super) fn window_score(hay: &Haystack<'_>, needle: &[&str], start: usize) -> f32 {
    let total: f32 = needle.iter().enumerate().map(|(j, l)| line_similarity(l, hay.lines[start + j])).sum();
    total / needle.len().max(1) as f32
}

pub(super) fn fuzzy_find(
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
