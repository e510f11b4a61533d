//! Splicing replacements into the file text, keeping its line endings.

use std::borrow::Cow;

use crate::text::TextStyle;

use super::*;

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

/// How an edit of several blocks or hunks was placed, one block at a time:
/// the first block that was not exact sets the level (and its candidates),
/// since that is the one a harness should audit; the first relocation is
/// kept. udiff's hunks, V4A hunks and MultiEdit's edits all report this way.
pub fn merge_matches(so_far: Option<MatchInfo>, next: MatchInfo) -> MatchInfo {
    let Some(mut so_far) = so_far else { return next };
    let stated = next.stated_line.filter(|_| next.relocated && !so_far.relocated);
    if so_far.level == Level::Exact.as_str() && next.level != Level::Exact.as_str() {
        so_far = MatchInfo { relocated: so_far.relocated, stated_line: so_far.stated_line, ..next };
    }
    match stated {
        Some(line) => so_far.relocated_from(line),
        None => so_far,
    }
}

/// How one block of an edit was placed: by the ladder, as found (its
/// report is made only if it is the one kept, see
/// [`Matched::merge_into`]), or a report made otherwise.
#[derive(Debug, Clone)]
pub enum Matched {
    /// Found by [`find_block`]'s ladder.
    Block(BlockMatch),
    /// Placed another way, or with more to tell (a relocation).
    Report(MatchInfo),
}

impl Matched {
    /// [`merge_matches`] of `so_far` and this placement. Most blocks of an
    /// edit place exactly, after a first block that did: their reports,
    /// a few allocations each, are not made only to be dropped.
    pub fn merge_into(self, so_far: Option<MatchInfo>) -> MatchInfo {
        match (self, so_far) {
            (Matched::Block(found), Some(so_far))
                if found.level == Level::Exact || so_far.level != Level::Exact.as_str() =>
            {
                so_far
            }
            (Matched::Block(found), so_far) => merge_matches(so_far, found.match_info()),
            (Matched::Report(report), so_far) => merge_matches(so_far, report),
        }
    }
}

impl BlockMatch {
    /// How [`find_block`] placed this match, for the report. The ladder
    /// stops at the first level with any place, and a match is unique
    /// there, so every level before this one found nothing and this one
    /// found one place (fuzzy comes after all the line levels).
    pub fn match_info(&self) -> MatchInfo {
        let before = LINE_LEVELS.iter().take_while(|&&level| level != self.level).map(|&level| (level, 0));
        let candidates: Vec<(Level, usize)> = before.chain(std::iter::once((self.level, 1))).collect();
        ladder_match(self.level, &candidates)
    }
}

/// One planned change of a line range of the file.
#[derive(Debug, Clone)]
pub(super) struct Splice<'a> {
    pub(super) start: usize,
    end: usize,
    /// Lines at the start of the range kept byte for byte.
    keep_prefix: usize,
    /// Lines at the end of the range kept byte for byte.
    keep_suffix: usize,
    /// The new lines, borrowed from the replacement unless re-indented.
    pub(super) middle: Vec<Cow<'a, str>>,
}

impl Splice<'_> {
    /// This splice with its new lines its own, for a plan that outlives
    /// the text it was made from.
    pub(super) fn into_owned(self) -> Splice<'static> {
        let middle = self.middle.into_iter().map(|line| Cow::Owned(line.into_owned())).collect();
        Splice { middle, ..self }
    }

    /// How many lines the range holds once replaced.
    pub(super) fn new_len(&self) -> usize {
        self.keep_prefix + self.middle.len() + self.keep_suffix
    }

    /// The lines (of a file of `len` lines) that meet once this splice
    /// deletes lines and writes none: the range and a line either side.
    /// A block that matches across the seam holds two of them.
    pub(super) fn seam(&self, len: usize) -> Option<std::ops::Range<usize>> {
        self.middle.is_empty().then(|| self.start.saturating_sub(1)..(self.end + 1).min(len))
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

pub(super) fn make_splice<'a>(
    start: usize,
    end: usize,
    first: &[&str],
    last: &[&str],
    replace: &[&'a str],
    reindent: &Reindent,
    level: Level,
) -> Splice<'a> {
    let region = end - start;
    // A line the replacement keeps (equal as written) keeps the file's bytes.
    let same = |a: &&&str, b: &&&str| crate::text::same_text(written_line(a, level), written_line(b, level));
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
        .map(|l| reindent.reindented(written_line(l, level)))
        .collect();
    Splice { start, end, keep_prefix, keep_suffix, middle }
}

/// Apply non-overlapping `splices` (in order) to the file, whose haystack
/// `hay` is (it knows where the file's lines start; it is freed before the
/// new content is made).
pub(super) fn render(hay: Haystack<'_>, content: &str, splices: &[Splice<'_>]) -> String {
    let style = TextStyle::detect(content);
    let replaced = splices.iter().map(|s| (s.start + s.keep_prefix..s.end - s.keep_suffix, s.middle.as_slice()));
    hay.splice_lines(content, replaced, style.eol.as_str(), style.final_newline)
}
