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

use std::ops::Range;

use agent_apply_sdk::matching::{Haystack, Level, Reindent, did_you_mean, normalize, written_line};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::splice_lines;

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

const LEVELS: [Level; 4] = [Level::Exact, Level::TrailingWhitespace, Level::LeadingWhitespace, Level::Unicode];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    Context,
    Del,
    Add,
}

/// A hunk line: its tag, its text, and whether it had a marker.
pub(crate) fn split_line(line: &str) -> (Tag, &str, bool) {
    match line.as_bytes().first() {
        Some(b'-') => (Tag::Del, &line[1..], true),
        Some(b'+') => (Tag::Add, &line[1..], true),
        Some(b'~') => (Tag::Context, &line[1..], false),
        Some(_) => (Tag::Context, &line[1..], true),
        None => (Tag::Context, "", false),
    }
}

/// One change to the file: lines `start..end` (0-based) become `lines`.
#[derive(Debug, Clone)]
struct Splice {
    start: usize,
    end: usize,
    lines: Vec<String>,
    hunk: usize,
}

/// A match of a block of lines.
#[derive(Debug, Clone, Copy)]
struct Found {
    start: usize,
    level: Level,
    by_hint: bool,
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
    let levels: &[Level] = if strict { &LEVELS[..1] } else { &LEVELS };
    for &level in levels {
        let starts = hay.find_all(needle, level, within.clone(), MATCH_LIMIT);
        match starts.len() {
            0 => continue,
            1 => return Ok(Found { start: starts[0], level, by_hint: false }),
            _ => {
                if let Some(h) = hint {
                    let distance = |s: usize| s.abs_diff(h);
                    if pinned && starts.contains(&h) {
                        return Ok(Found { start: h, level, by_hint: true });
                    }
                    if strict {
                        let best = starts.iter().copied().min_by_key(|&s| distance(s)).expect("non-empty");
                        return Ok(Found { start: best, level, by_hint: true });
                    }
                    let near: Vec<usize> = starts.iter().copied().filter(|&s| distance(s) <= HINT_WINDOW).collect();
                    if near.len() == 1 {
                        return Ok(Found { start: near[0], level, by_hint: true });
                    }
                }
                return Err(Miss::Ambiguous(level, starts));
            }
        }
    }
    Err(Miss::NotFound)
}

/// What placing one hunk produced.
struct Placed {
    splices: Vec<Splice>,
    /// The hunk's old side reaches the end of the file.
    touches_eof: bool,
    note: Option<String>,
    /// How it was placed (a ladder level, or `pieces` when split), and the
    /// line its header named when it landed elsewhere.
    level: &'static str,
    moved_from: Option<u32>,
}

pub(crate) struct Outcome {
    pub content: String,
    pub lines: Option<LineRange>,
    pub notes: Vec<String>,
    /// How the hunks were placed: the loosest level, and the first relocation.
    pub matched: MatchInfo,
}

fn label(hunk: &Hunk, path: &str) -> String {
    let header = if hunk.header.trim().is_empty() { String::new() } else { format!(", `{}`", short(&hunk.header, 60)) };
    format!("hunk {} of {path} (reply line {}{header})", hunk.number, hunk.reply_line)
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
        let shown = if let Some(rest) = line.strip_prefix('~') { format!(" {rest}") } else { line.clone() };
        out.push_str(&format!("    {}\n", short(&shown, 100)));
    }
    out
}

fn places(starts: &[usize], len: usize) -> String {
    let shown: Vec<String> = starts
        .iter()
        .take(10)
        .map(|&s| if len > 1 { format!("{}-{}", s + 1, s + len) } else { format!("{}", s + 1) })
        .collect();
    format!("{}{}", shown.join(", "), if starts.len() > 10 { " and more" } else { "" })
}

/// The splices of `lines` (a hunk or a piece of one) matched at `at`.
fn splices_at(hay: &Haystack<'_>, lines: &[(Tag, &str)], at: Found, hunk: usize) -> (Vec<Splice>, usize) {
    let old: Vec<&str> = lines.iter().filter(|l| l.0 != Tag::Add).map(|l| l.1).collect();
    let reindent = if at.level >= Level::LeadingWhitespace {
        Indent::infer(old.iter().copied().zip(hay.lines()[at.start..at.start + old.len()].iter().copied()).collect())
    } else {
        Indent::Shift(Reindent::Keep)
    };
    let mut out = Vec::new();
    let mut current: Option<Splice> = None;
    let mut fi = at.start;
    for &(tag, text) in lines {
        match tag {
            Tag::Context => {
                out.extend(current.take());
                fi += 1;
            }
            Tag::Del => {
                let s = current.get_or_insert(Splice { start: fi, end: fi, lines: Vec::new(), hunk });
                fi += 1;
                s.end = fi;
            }
            Tag::Add => {
                let s = current.get_or_insert(Splice { start: fi, end: fi, lines: Vec::new(), hunk });
                s.lines.push(reindent.apply(written_line(text, at.level)));
            }
        }
    }
    out.extend(current);
    (out, fi)
}

fn leading_ws(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn columns(ws: &str) -> usize {
    ws.chars().fold(0, |col, c| if c == '\t' { col + 4 - col % 4 } else { col + 1 })
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// How added lines are re-indented to sit where the matched lines sit: the
/// SDK's shift, or a scale when the model wrote 2-space indents for a
/// 4-space file (or the reverse). (A candidate for the SDK's `Reindent`.)
enum Indent {
    Shift(Reindent),
    Scale { num: usize, den: usize, use_tabs: bool },
}

impl Indent {
    fn infer(pairs: Vec<(&str, &str)>) -> Indent {
        let pairs: Vec<(&str, &str)> =
            pairs.into_iter().filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty()).collect();
        let shift = Reindent::infer(pairs.iter().copied());
        if pairs.iter().all(|(a, b)| leading_ws(&shift.apply(a)) == leading_ws(b)) {
            return Indent::Shift(shift);
        }
        let cols: Vec<(usize, usize)> =
            pairs.iter().map(|(a, b)| (columns(leading_ws(a)), columns(leading_ws(b)))).collect();
        if let Some(&(a, b)) = cols.iter().find(|(a, _)| *a > 0) {
            let g = gcd(a, b).max(1);
            let (num, den) = (b / g, a / g);
            if num > 0 && cols.iter().all(|&(a, b)| a * num == b * den) {
                let use_tabs = pairs.iter().any(|(_, b)| b.starts_with('\t'));
                return Indent::Scale { num, den, use_tabs };
            }
        }
        Indent::Shift(shift)
    }

    fn apply(&self, line: &str) -> String {
        match self {
            Indent::Shift(shift) => shift.apply(line),
            Indent::Scale { num, den, use_tabs } => {
                if line.trim().is_empty() {
                    return line.to_string();
                }
                let ws = leading_ws(line);
                let col = columns(ws) * num / den;
                let indent = if *use_tabs {
                    format!("{}{}", "\t".repeat(col / 4), " ".repeat(col % 4))
                } else {
                    " ".repeat(col)
                };
                format!("{indent}{}", &line[ws.len()..])
            }
        }
    }
}

fn level_note(level: Level) -> Option<&'static str> {
    (level != Level::Exact).then(|| level.describe())
}

/// Place one hunk in the file.
fn place(hay: &Haystack<'_>, hunk: &Hunk, path: &str, strict: bool) -> Result<Placed, EditFailure> {
    let label = label(hunk, path);
    let fail = |kind: FailureKind, message: String| EditFailure::new(kind, format!("{label}: {message}"));
    let lines: Vec<(Tag, &str)> = hunk.lines.iter().map(|l| split_line(l)).map(|(t, s, _)| (t, s)).collect();
    let old: Vec<&str> = lines.iter().filter(|l| l.0 != Tag::Add).map(|l| l.1).collect();
    let new: Vec<&str> = lines.iter().filter(|l| l.0 != Tag::Del).map(|l| l.1).collect();
    if strict {
        if hunk.old_start.is_none() {
            return Err(fail(
                FailureKind::Malformed,
                "strict mode needs `@@ -OLD,COUNT +NEW,COUNT @@` line numbers".into(),
            )
            .with_hint("write the hunk header with line numbers, or apply without `strict`"));
        }
        if let Some(bad) = hunk.lines.iter().position(|l| l.len() > 1 && l.starts_with('~')) {
            return Err(fail(
                FailureKind::Malformed,
                format!("line {} of the hunk has no ` `, `-` or `+` marker (strict mode)", bad + 1),
            )
            .with_hint("start every unchanged line with a space"));
        }
        let counts = (hunk.old_count.unwrap_or(1) as usize, hunk.new_count.unwrap_or(1) as usize);
        if counts != (old.len(), new.len()) {
            return Err(fail(
                FailureKind::Malformed,
                format!(
                    "the header counts {} old and {} new lines, but the hunk has {} and {} (strict mode)",
                    counts.0,
                    counts.1,
                    old.len(),
                    new.len()
                ),
            )
            .with_hint("fix the counts in the `@@` header, or apply without `strict`"));
        }
    }
    if !lines.iter().any(|l| l.0 != Tag::Context) {
        return Ok(Placed {
            splices: Vec::new(),
            touches_eof: false,
            note: Some(format!("hunk {} changes nothing", hunk.number)),
            level: "exact",
            moved_from: None,
        });
    }
    let n = hay.len();
    if old.is_empty() {
        if n == 0 {
            let lines = new.iter().map(|l| l.to_string()).collect();
            return Ok(Placed {
                splices: vec![Splice { start: 0, end: 0, lines, hunk: hunk.number }],
                touches_eof: true,
                note: None,
                level: "exact",
                moved_from: None,
            });
        }
        return Err(fail(
            FailureKind::Malformed,
            "it only adds lines and has no unchanged or removed line to show where they go".into(),
        )
        .with_hint("include two or three unchanged lines around the addition, each starting with a space"));
    }
    let hint = hunk.old_start.map(|s| s.saturating_sub(1) as usize);
    let pinned = hunk.old_count.unwrap_or(1) as usize == old.len() && hunk.new_count.unwrap_or(1) as usize == new.len();
    match locate(hay, &old, 0..n, hint, strict, pinned) {
        Ok(found) => {
            let (splices, end) = splices_at(hay, &lines, found, hunk.number);
            let mut notes = Vec::new();
            if let Some(how) = level_note(found.level) {
                notes.push(how.to_string());
            }
            if found.by_hint {
                notes.push("chosen by its line number among equal matches".to_string());
            }
            let note = (!notes.is_empty()).then(|| format!("hunk {} matched {}", hunk.number, notes.join(", ")));
            let moved_from = hunk.old_start.filter(|&s| hint.is_some_and(|h| h != found.start) && s > 0);
            return Ok(Placed { splices, touches_eof: end == n, note, level: found.level.as_str(), moved_from });
        }
        Err(Miss::Ambiguous(level, starts)) => {
            return Err(ambiguous(&label, hunk, level, &starts, old.len()));
        }
        Err(Miss::NotFound) => {}
    }
    // Already applied: the new side is there and the old one is not.
    if new != old && !new.is_empty() && !new.iter().all(|l| l.trim().is_empty()) {
        if let Ok(found) = locate(hay, &new, 0..n, hint, strict, false) {
            return Err(fail(
                FailureKind::AlreadyApplied,
                format!(
                    "it is already applied: its new lines are at lines {}-{} and its old lines are nowhere",
                    found.start + 1,
                    found.start + new.len()
                ),
            )
            .with_hint("this hunk seems to have been applied already; drop it")
            .at(LineRange::new(found.start as u32 + 1, (found.start + new.len()) as u32)));
        }
    }
    if strict {
        return Err(not_found(hay, &label, hunk, &old, "its lines do not match the file exactly (strict mode)"));
    }
    split(hay, hunk, &lines, &label, &old)
}

fn ambiguous(label: &str, hunk: &Hunk, level: Level, starts: &[usize], len: usize) -> EditFailure {
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

fn not_found(hay: &Haystack<'_>, label: &str, hunk: &Hunk, needle: &[&str], why: &str) -> EditFailure {
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

/// A hunk that did not match whole, placed run by run.
fn split(
    hay: &Haystack<'_>,
    hunk: &Hunk,
    lines: &[(Tag, &str)],
    label: &str,
    old: &[&str],
) -> Result<Placed, EditFailure> {
    let n = hay.len();
    // Change runs: maximal stretches of `-`/`+` lines.
    let mut runs: Vec<Range<usize>> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.0 == Tag::Context {
            continue;
        }
        match runs.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    // Old-side index of each hunk line (for line-number hints).
    let mut old_index = Vec::with_capacity(lines.len());
    let mut k = 0;
    for l in lines {
        old_index.push(k);
        if l.0 != Tag::Add {
            k += 1;
        }
    }
    let base = hunk.old_start.map(|s| s.saturating_sub(1) as usize);
    let mut splices = Vec::new();
    let mut from = 0usize;
    let mut covered = vec![false; lines.len()];
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut touches_eof = false;
    for (r, run) in runs.iter().enumerate() {
        let lower = if r == 0 { 0 } else { runs[r - 1].end };
        let upper = runs.get(r + 1).map_or(lines.len(), |next| next.start);
        let before = run.start - lower.max(run.start.saturating_sub(MAX_SIDE_CONTEXT));
        let after = upper.min(run.end + MAX_SIDE_CONTEXT) - run.end;
        let mut combos: Vec<(usize, usize)> = (0..=before).flat_map(|b| (0..=after).map(move |a| (b, a))).collect();
        combos.sort_by(|x, y| (y.0 + y.1).cmp(&(x.0 + x.1)).then(y.0.min(y.1).cmp(&x.0.min(x.1))));
        let mut ambiguous_at: Vec<(usize, usize, Level, Vec<usize>, usize)> = Vec::new();
        let mut placed = None;
        for (b, a) in combos {
            if ambiguous_at.iter().any(|&(ab, aa, ..)| b <= ab && a <= aa) {
                continue;
            }
            let piece = run.start - b..run.end + a;
            let piece_lines = &lines[piece.clone()];
            let needle: Vec<&str> = piece_lines.iter().filter(|l| l.0 != Tag::Add).map(|l| l.1).collect();
            if needle.is_empty() || needle.iter().all(|l| l.trim().is_empty()) {
                continue;
            }
            let hint = base.map(|s| s + old_index[piece.start]);
            match locate(hay, &needle, from..n, hint, false, false) {
                Ok(found) => {
                    placed = Some((piece, found, needle.len()));
                    break;
                }
                Err(Miss::Ambiguous(level, starts)) => ambiguous_at.push((b, a, level, starts, needle.len())),
                Err(Miss::NotFound) => {}
            }
        }
        let Some((piece, found, len)) = placed else {
            let first_line = hunk.reply_line + run.start as u32 + u32::from(!hunk.header.is_empty());
            if let Some((_, _, level, starts, len)) = ambiguous_at.into_iter().next() {
                let mut failure = ambiguous(label, hunk, level, &starts, len);
                failure.message = format!(
                    "{label}: it does not match whole, and its change at reply line {first_line} matches several places, at lines {}",
                    places(&starts, len)
                );
                return Err(failure);
            }
            return Err(not_found(
                hay,
                label,
                hunk,
                old,
                &format!(
                    "its lines are not in the file (not even its change at reply line {first_line} with less context)"
                ),
            ));
        };
        let (mut piece_splices, end) = splices_at(hay, &lines[piece.clone()], found, hunk.number);
        touches_eof |= end == n;
        from = piece_splices.last().map_or(found.start + len, |s| s.end.max(s.start));
        for i in piece.clone() {
            covered[i] = true;
        }
        spans.push(found.start..found.start + len);
        splices.append(&mut piece_splices);
    }
    // Context the pieces left out must still be in the file near them, or
    // the model described lines that do not exist.
    let reach = spans.first().map_or(0, |s| s.start.saturating_sub(DROPPED_CONTEXT_REACH))
        ..spans.last().map_or(0, |s| (s.end + DROPPED_CONTEXT_REACH).min(n));
    for (i, l) in lines.iter().enumerate() {
        if covered[i] || l.0 != Tag::Context || l.1.trim().is_empty() {
            continue;
        }
        let want = normalize(l.1, Level::Unicode);
        let near = hay.lines()[reach.clone()].iter().any(|f| normalize(f, Level::Unicode) == want);
        if !near {
            let reply_line = hunk.reply_line + i as u32 + u32::from(!hunk.header.is_empty());
            return Err(not_found(
                hay,
                label,
                hunk,
                old,
                &format!(
                    "its unchanged line `{}` (reply line {reply_line}) is not in the file near where the hunk would go",
                    short(l.1, 60)
                ),
            ));
        }
    }
    let note = Some(format!("hunk {} was placed in {} pieces", hunk.number, runs.len()));
    Ok(Placed { splices, touches_eof, note, level: "pieces", moved_from: hunk.old_start })
}

/// Apply `hunks` to `content`, all placed against `content` as it is.
pub(crate) fn patch(content: &str, hunks: &[Hunk], path: &str, strict: bool) -> Result<Outcome, EditFailure> {
    let hay = Haystack::of(content);
    let n = hay.len();
    let mut splices: Vec<Splice> = Vec::new();
    let mut notes = Vec::new();
    let mut final_newline: Option<bool> = None;
    let mut matched = MatchInfo::at("exact");
    for hunk in hunks {
        if let Some(failure) = elided_hunk(&hay, hunk) {
            return Err(failure);
        }
        let placed = place(&hay, hunk, path, strict)?;
        if placed.touches_eof {
            if hunk.new_no_eol {
                final_newline = Some(false);
            } else if hunk.old_no_eol {
                final_newline = Some(true);
            }
        }
        notes.extend(placed.note);
        if matched.level == "exact" {
            matched.level = placed.level.into();
        }
        if let (false, Some(line)) = (matched.relocated, placed.moved_from) {
            matched = matched.relocated_from(line);
        }
        splices.extend(placed.splices);
    }
    splices.sort_by_key(|s| (s.start, s.end, s.hunk));
    for pair in splices.windows(2) {
        if pair[1].start < pair[0].end && pair[0].hunk != pair[1].hunk {
            return Err(EditFailure::new(
                FailureKind::Overlap,
                format!(
                    "hunks {} and {} of {path} change the same lines ({}-{})",
                    pair[0].hunk,
                    pair[1].hunk,
                    pair[1].start + 1,
                    pair[0].end.max(pair[1].start + 1)
                ),
            )
            .with_hint("merge the two hunks into one, or make each change different lines")
            .at(LineRange::new(pair[1].start as u32 + 1, pair[0].end.max(pair[1].start + 1) as u32)));
        }
    }
    let lines = splices.iter().map(|s| (s.start, s.end)).fold(None::<(usize, usize)>, |acc, (s, e)| match acc {
        None => Some((s, e)),
        Some((a, b)) => Some((a.min(s), b.max(e))),
    });
    let _ = n;
    Ok(Outcome {
        content: render(content, &splices, final_newline),
        lines: lines.map(|(s, e)| LineRange::new(s as u32 + 1, e.max(s + 1) as u32)),
        notes,
        matched,
    })
}

/// A hunk whose added lines leave code out (`// ... existing code ...` that
/// neither its old side nor the file has): the SDK's rule for every format.
fn elided_hunk(hay: &Haystack<'_>, hunk: &Hunk) -> Option<EditFailure> {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for line in &hunk.lines {
        match split_line(line) {
            (Tag::Add, text, _) => new.push(text),
            (Tag::Del, text, _) => old.push(text),
            (Tag::Context, text, _) => {
                old.push(text);
                new.push(text);
            }
        }
    }
    let failure = agent_apply_sdk::matching::elided_replacement(&old, &new, hay.lines())?;
    Some(EditFailure { message: format!("hunk {}: {}", hunk.number, failure.message), ..failure })
}

fn render(content: &str, splices: &[Splice], final_newline: Option<bool>) -> String {
    let style = TextStyle::detect(content);
    // Splices of one hunk may touch: each starts where the previous ended.
    let mut next = 0;
    let replaced = splices.iter().map(|s| {
        let range = s.start.max(next)..s.end.max(next);
        next = range.end;
        (range, s.lines.as_slice())
    });
    splice_lines(content, replaced, style.eol.as_str(), final_newline.unwrap_or(style.final_newline))
}

/// The new-side text of a created file.
pub(crate) fn created_content(hunks: &[Hunk]) -> String {
    let mut text = String::new();
    for hunk in hunks {
        for line in &hunk.lines {
            let (tag, body, _) = split_line(line);
            if tag != Tag::Del {
                text.push_str(body);
                text.push('\n');
            }
        }
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
    let old: Vec<&str> = hunks
        .iter()
        .flat_map(|h| h.lines.iter().map(|l| split_line(l)))
        .filter(|l| l.0 != Tag::Add)
        .map(|l| l.1)
        .collect();
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
        Ok(_) => Ok(()),
        Err(Miss::Ambiguous(..)) => Ok(()),
        Err(Miss::NotFound) => Err("the removed lines the diff shows are not in the file".into()),
    }
}
