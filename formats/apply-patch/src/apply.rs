//! Placing an update's hunks in a file.
//!
//! Each hunk's old side (context and removed lines) is found with the SDK's
//! ladder, uniquely, after the previous hunk of the file (V4A hunks come in
//! file order) and after its scope lines. A scope line (`@@ class Foo`) must
//! itself be found once, in order; it narrows the search to its block (the
//! lines up to the next line indented no deeper than it, inclusive) and, when
//! the hunk is not there, to everything below it. An ambiguous scope line
//! does not narrow; the hunk must then be unique on its own. Nothing is ever
//! placed at the first of several matches.

use std::borrow::Cow;
use std::ops::Range;

use agent_apply_sdk::hunk::{HunkLine, LineSplice, hunk_splices, new_side, old_side};
use agent_apply_sdk::matching::{
    AMBIGUITY_LIMIT, BlockMatch, Haystack, LadderOptions, Level, MatchError, Matched, ambiguous_failure, did_you_mean,
    find_block, normalize,
};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::trim;

use crate::Hunk;

/// A file's new content and what to tell about it.
pub(crate) struct Patched {
    pub content: String,
    pub lines: Option<LineRange>,
    pub notes: Vec<String>,
    /// How the hunks were placed, for the report.
    pub matched: MatchInfo,
}

/// Apply `hunks` (in order) to `content`, all placed against it as it is.
pub(crate) fn patch_file(content: &str, hunks: &[Hunk], path: &str) -> Result<Patched, EditFailure> {
    let hay = Haystack::of(content);
    let mut cursor = 0;
    let mut splices: Vec<LineSplice> = Vec::new();
    let mut notes = Vec::new();
    let mut matched: Option<MatchInfo> = None;
    for hunk in hunks {
        let placed = place(&hay, hunk, path, cursor)?;
        cursor = placed.end;
        notes.extend(placed.note);
        matched = Some(placed.matched.merge_into(matched));
        splices.extend(placed.splices);
    }
    let style = TextStyle::detect(content);
    let ranges = splices.iter().map(|s| (s.range.clone(), s.lines.as_slice()));
    let content = hay.splice_lines(content, ranges, style.eol.as_str(), style.final_newline);
    let lines = match (splices.first(), splices.last()) {
        (Some(first), Some(last)) => {
            Some(LineRange::new(first.range.start as u32 + 1, last.range.end.max(first.range.start + 1) as u32))
        }
        _ => None,
    };
    // A move without hunks places nothing: as udiff reports a bare rename.
    Ok(Patched { content, lines, notes, matched: matched.unwrap_or_else(|| MatchInfo::at(Level::Exact.as_str())) })
}

/// A stored hunk line (its marker, then its text) as the SDK takes it.
fn tagged(line: &str) -> HunkLine<'_> {
    let mut chars = line.chars();
    let marker = chars.next();
    match marker {
        Some('-') => HunkLine::Remove(chars.as_str()),
        Some('+') => HunkLine::Add(chars.as_str()),
        _ => HunkLine::Context(chars.as_str()),
    }
}

/// Where a hunk may go once its scope lines are found.
struct Scope {
    /// The search starts here (after the previous hunk and the scope lines).
    lower: usize,
    /// The innermost scope's block ends here (exclusive).
    upper: usize,
    /// The innermost scope line, when every scope line was found once.
    anchor: Option<usize>,
    /// Why a scope line did not narrow the search (it was ambiguous).
    loose: Option<EditFailure>,
}

struct Placed<'h> {
    splices: Vec<LineSplice<'h>>,
    end: usize,
    note: Option<String>,
    /// The ladder's match, or how a hunk that changes nothing or only adds
    /// lines was placed (`scope-line`, `end-of-file`).
    matched: Matched,
}

/// A hunk as messages name it: `hunk 3 of src/x.py (reply line 40)`.
/// Written only into a message: most hunks place and need none.
struct HunkLabel<'a> {
    hunk: &'a Hunk,
    path: &'a str,
}

impl std::fmt::Display for HunkLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "hunk {} of {} ({})", self.hunk.number, self.path, self.hunk.at)
    }
}

fn place<'h>(hay: &Haystack<'_>, hunk: &'h Hunk, path: &str, cursor: usize) -> Result<Placed<'h>, EditFailure> {
    let label = HunkLabel { hunk, path };
    let lines: Vec<HunkLine<'_>> = hunk.lines.iter().map(|l| tagged(l)).collect();
    if lines.iter().all(|l| matches!(l, HunkLine::Context(_))) {
        let note = format!("hunk {} changes nothing", hunk.number);
        let matched = Matched::Report(MatchInfo::at(Level::Exact.as_str()));
        return Ok(Placed { splices: Vec::new(), end: cursor, note: Some(note), matched });
    }
    let scope = resolve_scopes(hay, hunk, &label, cursor)?;
    if lines.iter().all(|l| l.old_text().is_none()) {
        return insert(hay, hunk, &lines, &scope, &label, cursor);
    }
    match search(hay, &lines, &scope, hunk.end_of_file) {
        Ok((found, used)) => {
            let splices = hunk_splices(hay, &lines[used], &found);
            let note = (found.level != Level::Exact).then(|| {
                let reindented = if found.level >= Level::LeadingWhitespace { ", added lines re-indented" } else { "" };
                format!("hunk {} matched {}{reindented}", hunk.number, found.level.describe())
            });
            Ok(Placed { splices, end: found.end, note, matched: Matched::Block(found) })
        }
        Err(MatchError::Ambiguous { level, starts }) => {
            let mut failure = ambiguous_failure(level, &starts, old_side(&lines).len());
            let loose = scope.loose.as_ref().map_or(String::new(), |f| format!("; {}", f.message));
            failure.message = format!(
                "{label}: {}{loose}",
                failure.message.replacen("the text to replace occurs", "its unchanged and removed lines occur", 1)
            );
            failure.hint = Some(
                "add an `@@` scope line naming the class or function the change is in (`@@ def name(`), or more \
                 unchanged lines, so the hunk matches exactly one place"
                    .into(),
            );
            Err(failure)
        }
        Err(MatchError::NotFound) => Err(missing(hay, &lines, &scope, &label, cursor)),
    }
}

/// The hunk's old side found within its scope; when it is not, once more
/// without blank unchanged lines at its edges (a blank line the model put
/// around a hunk that the file does not have there). With the match, the
/// range of `lines` that matched.
fn search(
    hay: &Haystack<'_>,
    lines: &[HunkLine<'_>],
    scope: &Scope,
    end_of_file: bool,
) -> Result<(BlockMatch, Range<usize>), MatchError> {
    let blank = |l: &HunkLine<'_>| matches!(l, HunkLine::Context(t) if trim(t).is_empty());
    let lead = lines.iter().take_while(|l| blank(l)).count();
    let trail = lines[lead..].iter().rev().take_while(|l| blank(l)).count();
    let trimmed = (lead + trail > 0).then_some(lead..lines.len() - trail);
    for variant in std::iter::once(0..lines.len()).chain(trimmed) {
        match find_within(hay, &old_side(&lines[variant.clone()]), scope, end_of_file) {
            Ok(found) => return Ok((found, variant)),
            Err(MatchError::NotFound) => continue,
            Err(ambiguous) => return Err(ambiguous),
        }
    }
    Err(MatchError::NotFound)
}

fn find_within(hay: &Haystack<'_>, old: &[&str], scope: &Scope, end_of_file: bool) -> Result<BlockMatch, MatchError> {
    let options = LadderOptions::default();
    let n = hay.len();
    if old.is_empty() || old.len() > n {
        return Err(MatchError::NotFound);
    }
    // `*** End of File`: the lines sit at the very end, or (as codex also
    // allows) wherever they are unique.
    if end_of_file
        && n - old.len() >= scope.lower
        && let Ok(found) = find_block(hay, old, n - old.len()..n, &options)
    {
        return Ok(found);
    }
    // The innermost scope's block, then everything below its scope line.
    let below = (scope.upper < n).then_some(scope.lower..n);
    for window in std::iter::once(scope.lower..scope.upper).chain(below) {
        match find_block(hay, old, window, &options) {
            Err(MatchError::NotFound) => continue,
            other => return other,
        }
    }
    Err(MatchError::NotFound)
}

/// Find the hunk's scope lines, each once, in order.
fn resolve_scopes(hay: &Haystack<'_>, hunk: &Hunk, label: &HunkLabel<'_>, cursor: usize) -> Result<Scope, EditFailure> {
    let n = hay.len();
    let mut scope = Scope { lower: cursor, upper: n, anchor: None, loose: None };
    for (k, line) in hunk.scopes.iter().enumerate() {
        let mut result = find_scope(hay, line, scope.lower..scope.upper);
        if result == Err(MatchError::NotFound) && scope.upper < n {
            result = find_scope(hay, line, scope.lower..n);
        }
        // The first scope line may sit above the previous hunk: hunks of one
        // class often all repeat `@@ class Foo`.
        if result == Err(MatchError::NotFound) && k == 0 && cursor > 0 {
            result = find_scope(hay, line, 0..n);
        }
        match result {
            Ok(at) => {
                scope.anchor = Some(at);
                scope.lower = (at + 1).max(cursor);
                scope.upper = block_end(hay, at).max(scope.lower);
            }
            Err(MatchError::Ambiguous { level, starts }) => {
                let mut failure = ambiguous_failure(level, &starts, 1);
                failure.message = format!(
                    "its scope line `@@ {}` occurs in several places (lines {})",
                    line.trim(),
                    starts.iter().map(|s| (s + 1).to_string()).collect::<Vec<_>>().join(", ")
                );
                scope.anchor = None;
                scope.lower = scope.lower.max(starts[0] + 1);
                scope.loose = Some(failure);
            }
            Err(MatchError::NotFound) => {
                let (closest, lines) = did_you_mean(hay, &[line.as_str()]);
                let mut failure = EditFailure::new(
                    FailureKind::NotFound,
                    format!("{label}: its scope line `@@ {}` is not in the file{}", line.trim(), below(scope.lower)),
                )
                .with_hint(format!(
                    "{}\nafter `@@`, copy a line of the file exactly (the `def`/`class`/`fn` line the change is in), \
                     or write a bare `@@`",
                    closest.unwrap_or_default()
                ));
                failure.lines = lines;
                return Err(failure);
            }
        }
    }
    Ok(scope)
}

/// A scope line: a whole line of the file at the ladder's levels, or else
/// the start of one (`@@ def total` for `def total(items):`), once.
fn find_scope(hay: &Haystack<'_>, line: &str, within: Range<usize>) -> Result<usize, MatchError> {
    match find_block(hay, &[line], within.clone(), &LadderOptions::default()) {
        Ok(found) => return Ok(found.start),
        Err(MatchError::NotFound) => {}
        Err(ambiguous) => return Err(ambiguous),
    }
    let want = normalize(line, Level::Unicode);
    if want.len() < 3 {
        return Err(MatchError::NotFound);
    }
    let within = within.start.min(hay.len())..within.end.min(hay.len());
    let starts: Vec<usize> = within
        .filter(|&i| normalize(hay.lines()[i], Level::Unicode).starts_with(want.as_ref()))
        .take(AMBIGUITY_LIMIT + 1)
        .collect();
    match starts.len() {
        0 => Err(MatchError::NotFound),
        1 => Ok(starts[0]),
        _ => Err(MatchError::Ambiguous { level: Level::Unicode, starts }),
    }
}

/// " below line N" when a search started after line N (1-based), else nothing.
fn below(lower: usize) -> String {
    if lower > 0 { format!(" below line {lower}") } else { String::new() }
}

fn indent_width(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).map(|c| if c == '\t' { 4 } else { 1 }).sum()
}

/// The end (exclusive) of the block a scope line opens: through the next
/// non-blank line indented no deeper (a closing `}`, or the next `def`).
fn block_end(hay: &Haystack<'_>, at: usize) -> usize {
    let width = indent_width(hay.lines()[at]);
    let lines = hay.lines();
    (at + 1..lines.len())
        .find(|&i| !trim(lines[i]).is_empty() && indent_width(lines[i]) <= width)
        .map_or(lines.len(), |i| i + 1)
}

/// A hunk of added lines only: right after its scope line, or at the end
/// of the file when it has none (or ends with `*** End of File`).
fn insert<'h>(
    hay: &Haystack<'_>,
    hunk: &Hunk,
    lines: &[HunkLine<'h>],
    scope: &Scope,
    label: &HunkLabel<'_>,
    cursor: usize,
) -> Result<Placed<'h>, EditFailure> {
    if let Some(loose) = &scope.loose {
        let mut failure = loose.clone();
        failure.message = format!("{label}: it only adds lines, and {}", loose.message);
        return Err(failure.with_hint("make the `@@` line name a line that occurs once, or give unchanged lines"));
    }
    let (at, how) = match scope.anchor {
        Some(anchor) if !hunk.end_of_file => (anchor + 1, "scope-line"),
        _ => (hay.len(), "end-of-file"),
    };
    if at < cursor {
        return Err(EditFailure::new(
            FailureKind::Overlap,
            format!("{label}: it adds lines after line {at}, above the previous hunk of this file"),
        )
        .with_hint("put the hunks of a file in the order of the lines they change"));
    }
    let new = new_side(lines).into_iter().map(Cow::Borrowed).collect();
    let splices = vec![LineSplice { range: at..at, lines: new }];
    Ok(Placed { splices, end: at, note: None, matched: Matched::Report(MatchInfo::at(how)) })
}

/// Why a hunk's old side was not found, with the closest real lines.
fn missing(
    hay: &Haystack<'_>,
    lines: &[HunkLine<'_>],
    scope: &Scope,
    label: &HunkLabel<'_>,
    cursor: usize,
) -> EditFailure {
    let options = LadderOptions::default();
    let old = old_side(lines);
    if cursor > 0
        && let Ok(found) = find_block(hay, &old, 0..cursor, &options)
    {
        return EditFailure::new(
            FailureKind::NotFound,
            format!(
                "{label}: its lines are at lines {}-{}, above the previous hunk of this file; V4A hunks go in file order",
                found.start + 1,
                found.end
            ),
        )
        .with_hint("put the hunks of a file in the order of the lines they change")
        .at(LineRange::new(found.start as u32 + 1, found.end as u32));
    }
    let new = new_side(lines);
    let substance: usize = new.iter().map(|l| trim(l).len()).sum();
    if substance >= 8
        && let Ok(found) = find_block(hay, &new, scope.lower..hay.len(), &options)
    {
        return EditFailure::new(
            FailureKind::AlreadyApplied,
            format!(
                "{label}: it is already applied: its new lines are at lines {}-{} and its old lines are not there",
                found.start + 1,
                found.end
            ),
        )
        .with_hint("this hunk seems to have been applied already; drop it")
        .at(LineRange::new(found.start as u32 + 1, found.end as u32));
    }
    let (closest, range) = did_you_mean(hay, &old);
    let below = below(scope.lower);
    let mut failure = EditFailure::new(
        FailureKind::NotFound,
        format!(
            "{label}: its unchanged and removed lines are not in the file{below} (tried exact, whitespace-insensitive \
             and look-alike matching)"
        ),
    )
    .with_hint(format!(
        "{}\ncopy the unchanged (` `) and removed (`-`) lines exactly from the file",
        closest.unwrap_or_else(|| "nothing in the file resembles them".into())
    ));
    failure.lines = range;
    failure
}
