//! Placing hunks in a file and splicing them in.
//!
//! Every hunk is located in the file as it was before the edit (as unified
//! diffs mean), with the SDK's ladder levels, and must match exactly one
//! place. The header's line number only picks among equal matches when just
//! one of them lies within [`HINT_WINDOW`] lines of it. A hunk that does not
//! match whole is split at its change runs, each run keeping as much of its
//! surrounding context as still matches one place; every context line the
//! model wrote must still be found near where the pieces land, or the hunk
//! fails (that is how hallucinated context is refused).

use std::borrow::Cow;
use std::ops::Range;

use agent_apply_sdk::hunk::{HunkLine, LineSplice, hunk_splices, new_side, old_side};
use agent_apply_sdk::matching::{
    BlockMatch, Haystack, LINE_LEVELS, Level, Matched, did_you_mean, ladder_match, normalize, places,
};
use agent_apply_sdk::prelude::*;

use crate::Hunk;

/// How far (in lines) from the header's stated line a match may be for the
/// number to break a tie between equal matches.
pub const HINT_WINDOW: usize = 15;
/// How many matches a level collects before giving up on counting.
const MATCH_LIMIT: usize = 4096;
/// How many context lines on each side of a change run the split tries.
const MAX_SIDE_CONTEXT: usize = 8;
/// How far from the placed pieces a context line the pieces dropped may sit.
const DROPPED_CONTEXT_REACH: usize = 8;

/// A stored hunk line (its marker, then its text; `~` marks a context line
/// the model wrote without its leading space).
#[inline]
fn hunk_line(line: &str) -> HunkLine<'_> {
    // The marker is one ASCII byte: the text after it needs no char
    // boundary check (which took most of this function's time).
    let text = || line.get(1..).unwrap_or_default();
    match line.as_bytes().first() {
        Some(b'-') => HunkLine::Remove(text()),
        Some(b'+') => HunkLine::Add(text()),
        _ => HunkLine::Context(text()),
    }
}

fn hunk_lines(hunk: &Hunk) -> Vec<HunkLine<'_>> {
    hunk.lines.iter().map(|l| hunk_line(l)).collect()
}

fn is_context(line: &HunkLine<'_>) -> bool {
    matches!(line, HunkLine::Context(_))
}

/// A splice and the hunk it comes from (hunks of one file must not overlap).
#[derive(Debug, Clone)]
struct Splice<'a> {
    at: LineSplice<'a>,
    hunk: usize,
}

/// A match of a block of lines, with the places each level tried found.
#[derive(Debug, Clone)]
struct Found {
    start: usize,
    level: Level,
    by_hint: bool,
    candidates: Vec<(Level, usize)>,
}

enum Miss {
    NotFound,
    Ambiguous(Level, Vec<usize>),
}

/// Find `needle` in `within`; among several matches at one level, the one
/// within the hint window wins if it is alone there (lenient), or the one
/// nearest the hint (strict, as `git apply` does).
///
/// `pinned`: the hunk's header counts agree with its body (the numbers look
/// machine-made), so a match exactly at the stated line wins outright.
fn locate(
    hay: &Haystack<'_>,
    needle: &[&str],
    within: Range<usize>,
    hint: Option<usize>,
    strict: bool,
    pinned: bool,
) -> Result<Found, Miss> {
    let levels: &[Level] = if strict { &LINE_LEVELS[..1] } else { &LINE_LEVELS };
    let mut candidates = Vec::new();
    for &level in levels {
        let starts = hay.find_all(needle, level, within.clone(), MATCH_LIMIT);
        candidates.push((level, starts.len()));
        let found = |start: usize, by_hint: bool| Ok(Found { start, level, by_hint, candidates: candidates.clone() });
        match starts.len() {
            0 => continue,
            1 => return found(starts[0], false),
            _ => {
                if let Some(h) = hint {
                    let distance = |s: usize| s.abs_diff(h);
                    if pinned && starts.contains(&h) {
                        return found(h, true);
                    }
                    if strict {
                        return found(starts.iter().copied().min_by_key(|&s| distance(s)).expect("non-empty"), true);
                    }
                    let near: Vec<usize> = starts.iter().copied().filter(|&s| distance(s) <= HINT_WINDOW).collect();
                    if near.len() == 1 {
                        return found(near[0], true);
                    }
                }
                return Err(Miss::Ambiguous(level, starts));
            }
        }
    }
    Err(Miss::NotFound)
}

/// What placing one hunk produced.
struct Placed<'a> {
    splices: Vec<Splice<'a>>,
    /// The hunk's old side reaches the end of the file.
    touches_eof: bool,
    note: Option<String>,
    /// How it was placed: a ladder level with its candidates, or `pieces`
    /// when split, relocated when it landed away from its header's line.
    matched: Matched,
}

pub(crate) struct Outcome {
    pub content: String,
    pub lines: Option<LineRange>,
    pub notes: Vec<String>,
    /// How the hunks were placed: the loosest level, and the first relocation.
    pub matched: MatchInfo,
}

/// A hunk as messages name it: ``hunk 3 of src/x.rs (reply line 40, `fn main`)``.
/// Written only into a message: most hunks place and need none.
#[derive(Clone, Copy)]
struct HunkLabel<'a> {
    hunk: &'a Hunk,
    path: &'a str,
}

impl std::fmt::Display for HunkLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "hunk {} of {} (reply line {}", self.hunk.number, self.path, self.hunk.reply_line)?;
        if !self.hunk.header.trim().is_empty() {
            write!(f, ", `{}`", short(&self.hunk.header, 60))?;
        }
        f.write_str(")")
    }
}

fn short(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        text.to_string()
    } else {
        format!("{}...", text.chars().take(max).collect::<String>())
    }
}

fn hunk_opening(hunk: &Hunk) -> String {
    let mut out = String::from("the hunk begins:\n");
    for line in hunk.lines.iter().take(4) {
        let shown = if let Some(rest) = line.strip_prefix('~') { format!(" {rest}") } else { line.to_string() };
        out.push_str(&format!("    {}\n", short(&shown, 100)));
    }
    out
}

/// The splices of `lines` (a hunk or a piece of one) matched at `at`, and
/// the line after the matched old side.
fn splices_at<'a>(lines: &[HunkLine<'a>], hay: &Haystack<'_>, at: &Found, hunk: usize) -> (Vec<Splice<'a>>, usize) {
    let end = at.start + lines.iter().filter(|l| l.old_text().is_some()).count();
    let block = BlockMatch { start: at.start, end, level: at.level };
    (hunk_splices(hay, lines, &block).into_iter().map(|at| Splice { at, hunk }).collect(), end)
}

fn level_note(level: Level) -> Option<&'static str> {
    (level != Level::Exact).then(|| level.describe())
}

/// Place one hunk in the file.
fn place<'h>(hay: &Haystack<'_>, hunk: &'h Hunk, path: &str, strict: bool) -> Result<Placed<'h>, EditFailure> {
    let label = HunkLabel { hunk, path };
    let lines = hunk_lines(hunk);
    let (old, new) = (old_side(&lines), new_side(&lines));
    if let Some(failure) = elided_hunk(hay, hunk, &old, &new) {
        return Err(failure);
    }
    if strict {
        check_strict(hunk, &label, old.len(), new.len())?;
    }
    if lines.iter().all(is_context) {
        let note = Some(format!("hunk {} changes nothing", hunk.number));
        return Ok(Placed {
            splices: Vec::new(),
            touches_eof: false,
            note,
            matched: Matched::Report(MatchInfo::at("exact")),
        });
    }
    let n = hay.len();
    if old.is_empty() {
        if n == 0 {
            let at = LineSplice { range: 0..0, lines: new.iter().map(|&l| Cow::Borrowed(l)).collect() };
            let splices = vec![Splice { at, hunk: hunk.number }];
            return Ok(Placed {
                splices,
                touches_eof: true,
                note: None,
                matched: Matched::Report(MatchInfo::at("exact")),
            });
        }
        return Err(failure(
            &label,
            FailureKind::Malformed,
            "it only adds lines and has no unchanged or removed line to show where they go",
        )
        .with_hint("include two or three unchanged lines around the addition, each starting with a space"));
    }
    let hint = hunk.old_start.map(|s| s.saturating_sub(1) as usize);
    let pinned = hunk.old_count.unwrap_or(1) as usize == old.len() && hunk.new_count.unwrap_or(1) as usize == new.len();
    match locate(hay, &old, 0..n, hint, strict, pinned) {
        Ok(found) => {
            let (splices, end) = splices_at(&lines, hay, &found, hunk.number);
            let mut notes: Vec<&str> = level_note(found.level).into_iter().collect();
            if found.by_hint {
                notes.push("chosen by its line number among equal matches");
            }
            let note = (!notes.is_empty()).then(|| format!("hunk {} matched {}", hunk.number, notes.join(", ")));
            let relocated = hunk.old_start.filter(|&s| hint.is_some_and(|h| h != found.start) && s > 0);
            let matched = match relocated {
                None if found.level == Level::Exact && found.candidates == [(Level::Exact, 1)] => {
                    Matched::Block(BlockMatch { start: found.start, end: found.start + old.len(), level: found.level })
                }
                _ => {
                    let matched = ladder_match(found.level, &found.candidates);
                    Matched::Report(match relocated {
                        Some(line) => matched.relocated_from(line),
                        None => matched,
                    })
                }
            };
            return Ok(Placed { splices, touches_eof: end == n, note, matched });
        }
        Err(Miss::Ambiguous(level, starts)) => return Err(ambiguous(&label, hunk, level, &starts, old.len())),
        Err(Miss::NotFound) => {}
    }
    // Already applied: the new side is there and the old one is not.
    if new != old
        && !new.iter().all(|l| l.trim().is_empty())
        && let Ok(found) = locate(hay, &new, 0..n, hint, strict, false)
    {
        let (start, end) = (found.start + 1, found.start + new.len());
        return Err(failure(
            &label,
            FailureKind::AlreadyApplied,
            &format!("it is already applied: its new lines are at lines {start}-{end} and its old lines are nowhere"),
        )
        .with_hint("this hunk seems to have been applied already; drop it")
        .at(LineRange::new(start as u32, end as u32)));
    }
    if strict {
        return Err(not_found(hay, &label, hunk, &old, "its lines do not match the file exactly (strict mode)"));
    }
    split(hay, hunk, &lines, &label, &old)
}

fn failure(label: &HunkLabel<'_>, kind: FailureKind, message: &str) -> EditFailure {
    EditFailure::new(kind, format!("{label}: {message}"))
}

/// Strict mode: the header has line numbers, every line a marker, and the
/// counts agree with the body.
fn check_strict(hunk: &Hunk, label: &HunkLabel<'_>, old: usize, new: usize) -> Result<(), EditFailure> {
    if hunk.old_start.is_none() {
        return Err(failure(
            label,
            FailureKind::Malformed,
            "strict mode needs `@@ -OLD,COUNT +NEW,COUNT @@` line numbers",
        )
        .with_hint("write the hunk header with line numbers, or apply without `strict`"));
    }
    if let Some(bad) = hunk.lines.iter().position(|l| l.len() > 1 && l.starts_with('~')) {
        return Err(failure(
            label,
            FailureKind::Malformed,
            &format!("line {} of the hunk has no ` `, `-` or `+` marker (strict mode)", bad + 1),
        )
        .with_hint("start every unchanged line with a space"));
    }
    let counts = (hunk.old_count.unwrap_or(1) as usize, hunk.new_count.unwrap_or(1) as usize);
    if counts != (old, new) {
        return Err(failure(
            label,
            FailureKind::Malformed,
            &format!(
                "the header counts {} old and {} new lines, but the hunk has {old} and {new} (strict mode)",
                counts.0, counts.1
            ),
        )
        .with_hint("fix the counts in the `@@` header, or apply without `strict`"));
    }
    Ok(())
}

fn ambiguous(label: &HunkLabel<'_>, hunk: &Hunk, level: Level, starts: &[usize], len: usize) -> EditFailure {
    let how = if level == Level::Exact { String::new() } else { format!(" (matching {})", level.describe()) };
    let count = if starts.len() >= MATCH_LIMIT { format!("more than {MATCH_LIMIT}") } else { starts.len().to_string() };
    let numbers = match hunk.old_start {
        Some(line) => format!("; its header's line {line} is not within {HINT_WINDOW} lines of exactly one of them"),
        None => String::new(),
    };
    EditFailure::new(
        FailureKind::Ambiguous,
        format!("{label}: its old lines occur in {count} places{how}, at lines {}{numbers}", places(starts, len)),
    )
    .with_hint(format!(
        "{}include more unchanged lines around the change so the hunk matches exactly one place",
        hunk_opening(hunk)
    ))
    .at(LineRange::new(starts[0] as u32 + 1, (starts[0] + len.max(1)) as u32))
}

fn not_found(hay: &Haystack<'_>, label: &HunkLabel<'_>, hunk: &Hunk, needle: &[&str], why: &str) -> EditFailure {
    let (closest, lines) = did_you_mean(hay, needle);
    let mut hint = hunk_opening(hunk);
    match closest {
        Some(closest) => hint.push_str(&closest),
        None => hint.push_str("nothing in the file resembles it"),
    }
    hint.push_str("\ncopy the unchanged lines exactly from the file, each starting with a space");
    let failure = EditFailure::new(FailureKind::NotFound, format!("{label}: {why}")).with_hint(hint);
    match lines {
        Some(lines) => failure.at(lines),
        None => failure,
    }
}

/// A piece of a split hunk: hunk lines `lines`, their old side found at `found`.
struct Piece {
    lines: Range<usize>,
    found: Found,
    old_len: usize,
}

/// Why no piece of a change run could be placed.
enum RunMiss {
    NotFound,
    Ambiguous(Level, Vec<usize>, usize),
}

/// Place change run `run` of `lines` at or after file line `from`, with as
/// much of its surrounding context (up to the neighbouring runs) as still
/// matches one place: the most context first, balanced on both sides.
fn place_run(
    hay: &Haystack<'_>,
    lines: &[HunkLine<'_>],
    run: Range<usize>,
    around: Range<usize>,
    from: usize,
    hint: impl Fn(usize) -> Option<usize>,
) -> Result<Piece, RunMiss> {
    let before = run.start - around.start.max(run.start.saturating_sub(MAX_SIDE_CONTEXT));
    let after = around.end.min(run.end + MAX_SIDE_CONTEXT) - run.end;
    let mut combos: Vec<(usize, usize)> = (0..=before).flat_map(|b| (0..=after).map(move |a| (b, a))).collect();
    combos.sort_by(|x, y| (y.0 + y.1).cmp(&(x.0 + x.1)).then(y.0.min(y.1).cmp(&x.0.min(x.1))));
    let mut ambiguous_at: Vec<(usize, usize, RunMiss)> = Vec::new();
    for (b, a) in combos {
        // Less context than an ambiguous combination is ambiguous too.
        if ambiguous_at.iter().any(|&(ab, aa, _)| b <= ab && a <= aa) {
            continue;
        }
        let piece = run.start - b..run.end + a;
        let needle = old_side(&lines[piece.clone()]);
        if needle.iter().all(|l| l.trim().is_empty()) {
            continue;
        }
        match locate(hay, &needle, from..hay.len(), hint(piece.start), false, false) {
            Ok(found) => return Ok(Piece { lines: piece, found, old_len: needle.len() }),
            Err(Miss::Ambiguous(level, starts)) => {
                ambiguous_at.push((b, a, RunMiss::Ambiguous(level, starts, needle.len())))
            }
            Err(Miss::NotFound) => {}
        }
    }
    Err(ambiguous_at.into_iter().next().map_or(RunMiss::NotFound, |(.., miss)| miss))
}

/// A hunk that did not match whole, placed change run by change run.
fn split<'h>(
    hay: &Haystack<'_>,
    hunk: &Hunk,
    lines: &[HunkLine<'h>],
    label: &HunkLabel<'_>,
    old: &[&str],
) -> Result<Placed<'h>, EditFailure> {
    let n = hay.len();
    // Change runs: maximal stretches of removed and added lines.
    let mut runs: Vec<Range<usize>> = Vec::new();
    for (i, _) in lines.iter().enumerate().filter(|(_, l)| !is_context(l)) {
        match runs.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    // Old-side index of each hunk line (for line-number hints).
    let old_index: Vec<usize> = lines
        .iter()
        .scan(0, |k, l| {
            let at = *k;
            *k += usize::from(l.old_text().is_some());
            Some(at)
        })
        .collect();
    let base = hunk.old_start.map(|s| s.saturating_sub(1) as usize);
    let (mut splices, mut from, mut touches_eof) = (Vec::new(), 0usize, false);
    let mut covered = vec![false; lines.len()];
    let mut spans: Vec<Range<usize>> = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let around = if r == 0 { 0 } else { runs[r - 1].end }..runs.get(r + 1).map_or(lines.len(), |next| next.start);
        let hint = |start: usize| base.map(|s| s + old_index[start]);
        let piece = place_run(hay, lines, run.clone(), around, from, hint).map_err(|miss| {
            let first_line = hunk.reply_line + run.start as u32 + u32::from(!hunk.header.is_empty());
            run_failure(hay, hunk, label, old, miss, first_line)
        })?;
        let (mut piece_splices, end) = splices_at(&lines[piece.lines.clone()], hay, &piece.found, hunk.number);
        touches_eof |= end == n;
        from = piece_splices.last().map_or(piece.found.start + piece.old_len, |s| s.at.range.end.max(s.at.range.start));
        covered[piece.lines].iter_mut().for_each(|c| *c = true);
        spans.push(piece.found.start..piece.found.start + piece.old_len);
        splices.append(&mut piece_splices);
    }
    check_dropped_context(hay, hunk, lines, &covered, &spans, label, old)?;
    let note = Some(format!("hunk {} was placed in {} pieces", hunk.number, runs.len()));
    let matched = MatchInfo::at("pieces");
    let matched = match hunk.old_start {
        Some(line) => matched.relocated_from(line),
        None => matched,
    };
    Ok(Placed { splices, touches_eof, note, matched: Matched::Report(matched) })
}

fn run_failure(
    hay: &Haystack<'_>,
    hunk: &Hunk,
    label: &HunkLabel<'_>,
    old: &[&str],
    miss: RunMiss,
    first_line: u32,
) -> EditFailure {
    match miss {
        RunMiss::Ambiguous(level, starts, len) => {
            let mut failure = ambiguous(label, hunk, level, &starts, len);
            failure.message = format!(
                "{label}: it does not match whole, and its change at reply line {first_line} matches several places, at lines {}",
                places(&starts, len)
            );
            failure
        }
        RunMiss::NotFound => not_found(
            hay,
            label,
            hunk,
            old,
            &format!(
                "its lines are not in the file (not even its change at reply line {first_line} with less context)"
            ),
        ),
    }
}

/// Context the pieces left out must still be in the file near them, or the
/// model described lines that do not exist.
fn check_dropped_context(
    hay: &Haystack<'_>,
    hunk: &Hunk,
    lines: &[HunkLine<'_>],
    covered: &[bool],
    spans: &[Range<usize>],
    label: &HunkLabel<'_>,
    old: &[&str],
) -> Result<(), EditFailure> {
    let n = hay.len();
    let reach = spans.first().map_or(0, |s| s.start.saturating_sub(DROPPED_CONTEXT_REACH))
        ..spans.last().map_or(0, |s| (s.end + DROPPED_CONTEXT_REACH).min(n));
    for (i, line) in lines.iter().enumerate() {
        let HunkLine::Context(text) = line else { continue };
        if covered[i] || text.trim().is_empty() {
            continue;
        }
        let want = normalize(text, Level::Unicode);
        if !hay.lines()[reach.clone()].iter().any(|f| normalize(f, Level::Unicode) == want) {
            let reply_line = hunk.reply_line + i as u32 + u32::from(!hunk.header.is_empty());
            return Err(not_found(
                hay,
                label,
                hunk,
                old,
                &format!(
                    "its unchanged line `{}` (reply line {reply_line}) is not in the file near where the hunk would go",
                    short(text, 60)
                ),
            ));
        }
    }
    Ok(())
}

/// Apply `hunks` to `content`, all placed against `content` as it is.
pub(crate) fn patch(content: &str, hunks: &[Hunk], path: &str, strict: bool) -> Result<Outcome, EditFailure> {
    let hay = Haystack::of(content);
    let mut splices: Vec<Splice> = Vec::new();
    let mut notes = Vec::new();
    let mut final_newline: Option<bool> = None;
    let mut matched: Option<MatchInfo> = None;
    for hunk in hunks {
        let placed = place(&hay, hunk, path, strict)?;
        if placed.touches_eof {
            if hunk.new_no_eol {
                final_newline = Some(false);
            } else if hunk.old_no_eol {
                final_newline = Some(true);
            }
        }
        notes.extend(placed.note);
        matched = Some(placed.matched.merge_into(matched));
        splices.extend(placed.splices);
    }
    splices.sort_by_key(|s| (s.at.range.start, s.at.range.end, s.hunk));
    if let Some(pair) = splices.windows(2).find(|p| p[1].at.range.start < p[0].at.range.end && p[0].hunk != p[1].hunk) {
        let (start, end) = (pair[1].at.range.start + 1, pair[0].at.range.end.max(pair[1].at.range.start + 1));
        return Err(EditFailure::new(
            FailureKind::Overlap,
            format!("hunks {} and {} of {path} change the same lines ({start}-{end})", pair[0].hunk, pair[1].hunk),
        )
        .with_hint("merge the two hunks into one, or make each change different lines")
        .at(LineRange::new(start as u32, end as u32)));
    }
    let start = splices.iter().map(|s| s.at.range.start).min();
    let end = splices.iter().map(|s| s.at.range.end).max();
    let style = TextStyle::detect(content);
    let ranges = splices.iter().map(|s| (s.at.range.clone(), s.at.lines.as_slice()));
    Ok(Outcome {
        content: hay.splice_lines(content, ranges, style.eol.as_str(), final_newline.unwrap_or(style.final_newline)),
        lines: start.zip(end).map(|(s, e)| LineRange::new(s as u32 + 1, e.max(s + 1) as u32)),
        notes,
        matched: matched.unwrap_or_else(|| MatchInfo::at("exact")),
    })
}

/// A hunk whose added lines leave code out (`// ... existing code ...` that
/// neither its old side nor the file has): the SDK's rule for every format.
fn elided_hunk(hay: &Haystack<'_>, hunk: &Hunk, old: &[&str], new: &[&str]) -> Option<EditFailure> {
    let failure = agent_apply_sdk::matching::elided_replacement(old, new, hay.lines().iter().copied())?;
    Some(EditFailure { message: format!("hunk {}: {}", hunk.number, failure.message), ..failure })
}

/// The new-side text of a created file.
pub(crate) fn created_content(hunks: &[Hunk]) -> String {
    let mut text = String::new();
    for line in hunks.iter().flat_map(hunk_lines).filter_map(HunkLine::new_text) {
        text.push_str(line);
        text.push('\n');
    }
    if hunks.last().is_some_and(|h| h.new_no_eol) {
        text.pop();
    }
    text
}

/// Whether the old side of `hunks` describes `content` (for deletes): found
/// at all (lenient), or equal to the whole file (strict).
pub(crate) fn old_side_matches(content: &str, hunks: &[Hunk], strict: bool) -> Result<(), String> {
    let hay = Haystack::of(content);
    let old: Vec<&str> = hunks.iter().flat_map(hunk_lines).filter_map(HunkLine::old_text).collect();
    if old.is_empty() {
        return Ok(());
    }
    if strict {
        return if hay.lines() == old.as_slice() {
            Ok(())
        } else {
            Err("the removed lines are not the file's content exactly".into())
        };
    }
    match locate(&hay, &old, 0..hay.len(), Some(0), false, false) {
        Ok(_) | Err(Miss::Ambiguous(..)) => Ok(()),
        Err(Miss::NotFound) => Err("the removed lines the diff shows are not in the file".into()),
    }
}
