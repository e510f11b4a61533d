//! Diff-style hunks (context, removed and added lines) placed with the
//! matching ladder: the old side (context and removed lines) is found with
//! [`find_block`](crate::matching::find_block), then [`hunk_splices`] turns
//! the match into line splices for [`splice_lines`](crate::text::splice_lines).
//!
//! Context lines keep the file's bytes (a match that ignored trailing
//! whitespace or look-alikes must not rewrite the lines it only compared),
//! removed lines go, and added lines are re-indented by the shift the match
//! needed (a model that lost a class's indentation writes its new lines
//! dedented too).

use std::borrow::Cow;
use std::ops::Range;

use crate::matching::{BlockMatch, Haystack, Level, Reindent, written_line};

/// One line of a hunk, without its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HunkLine<'a> {
    /// A line that stays (` ` in a diff).
    Context(&'a str),
    /// A line that goes (`-`).
    Remove(&'a str),
    /// A line that comes (`+`).
    Add(&'a str),
}

impl<'a> HunkLine<'a> {
    /// The line as the file has it before the hunk: context and removed lines.
    pub fn old_text(self) -> Option<&'a str> {
        match self {
            HunkLine::Context(text) | HunkLine::Remove(text) => Some(text),
            HunkLine::Add(_) => None,
        }
    }

    /// The line as the file has it after the hunk: context and added lines.
    pub fn new_text(self) -> Option<&'a str> {
        match self {
            HunkLine::Context(text) | HunkLine::Add(text) => Some(text),
            HunkLine::Remove(_) => None,
        }
    }
}

/// The old side of a hunk: what must be found in the file.
pub fn old_side<'a>(lines: &[HunkLine<'a>]) -> Vec<&'a str> {
    // Sized once: collected from a filter, the vector grew by doubling,
    // three times for a hunk of a dozen lines, every hunk of a reply.
    let mut old = Vec::with_capacity(lines.len());
    old.extend(lines.iter().filter_map(|l| l.old_text()));
    old
}

/// The new side of a hunk: what the file holds once it is applied.
pub fn new_side<'a>(lines: &[HunkLine<'a>]) -> Vec<&'a str> {
    let mut new = Vec::with_capacity(lines.len());
    new.extend(lines.iter().filter_map(|l| l.new_text()));
    new
}

/// File lines `range` (0-based, end exclusive) replaced by `lines`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineSplice<'a> {
    /// The file lines replaced (empty for a pure insertion).
    pub range: Range<usize>,
    /// The lines that take their place, without endings: the hunk's own
    /// text unless re-indenting changed it (a reply's thousands of hunks
    /// copy no line of an exact match).
    pub lines: Vec<Cow<'a, str>>,
}

/// The splices that apply `lines` where their old side matched (`found`,
/// from [`find_block`](crate::matching::find_block) on [`old_side`]): one
/// per run of removed and added lines, in file order. Added lines are
/// re-indented when the match ignored indentation or look-alikes, and lose
/// stray trailing whitespace when the match was not exact
/// ([`written_line`]).
pub fn hunk_splices<'a>(hay: &Haystack<'_>, lines: &[HunkLine<'a>], found: &BlockMatch) -> Vec<LineSplice<'a>> {
    let reindent = match found.level {
        Level::Exact | Level::TrailingWhitespace => Reindent::Keep,
        _ => Reindent::infer(old_side(lines).into_iter().zip(hay.lines()[found.start..found.end].iter().copied())),
    };
    let mut splices = Vec::new();
    let mut current: Option<LineSplice<'a>> = None;
    let mut at = found.start;
    // A splice starts at the first changed line of a run, sized for the
    // run's added lines.
    let start = |at: usize, run: &[HunkLine<'_>]| {
        let added =
            run.iter().take_while(|l| !matches!(l, HunkLine::Context(_))).filter(|l| matches!(l, HunkLine::Add(_)));
        LineSplice { range: at..at, lines: Vec::with_capacity(added.count()) }
    };
    for (index, line) in lines.iter().enumerate() {
        match line {
            HunkLine::Context(_) => {
                splices.extend(current.take());
                at += 1;
            }
            HunkLine::Remove(_) => {
                current.get_or_insert_with(|| start(at, &lines[index..])).range.end = at + 1;
                at += 1;
            }
            HunkLine::Add(text) => {
                current
                    .get_or_insert_with(|| start(at, &lines[index..]))
                    .lines
                    .push(reindent.reindented(written_line(text, found.level)));
            }
        }
    }
    splices.extend(current);
    splices
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching::{LadderOptions, find_block};
    use crate::text::splice_lines;

    fn apply(content: &str, lines: &[HunkLine<'_>]) -> String {
        let hay = Haystack::of(content);
        let found = find_block(&hay, &old_side(lines), 0..hay.len(), &LadderOptions::default()).unwrap();
        let splices = hunk_splices(&hay, lines, &found);
        splice_lines(content, splices.iter().map(|s| (s.range.clone(), s.lines.as_slice())), "\n", true)
    }

    #[test]
    fn context_keeps_the_file_bytes_and_runs_become_splices() {
        use HunkLine::*;
        let file = "a  \nb\nc\nd\n";
        let lines = [Context("a"), Remove("b"), Add("B"), Context("c"), Add("c2"), Context("d")];
        assert_eq!(apply(file, &lines), "a  \nB\nc\nc2\nd\n");
    }

    #[test]
    fn added_lines_follow_the_indentation_the_match_needed() {
        use HunkLine::*;
        let file = "class A:\n    def f(self):\n        return 1\n";
        let lines = [Context("def f(self):"), Remove("    return 1"), Add("    if x:"), Add("        return 2")];
        assert_eq!(apply(file, &lines), "class A:\n    def f(self):\n        if x:\n            return 2\n");
    }
}
