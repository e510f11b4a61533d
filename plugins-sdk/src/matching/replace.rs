//! Replacing blocks: the ladder run per block or for many blocks at once,
//! elisions, already-applied edits, and the failures a model can act on.

use crate::elision::{elisions_in_lines_not_in, is_placeholder};
use crate::format::EditFailure;
use crate::text::{joined_lines, lines_with_endings, lines_without_endings, strip_ending};

use super::*;

/// A replacement that leaves code out: a placeholder line (`// ... existing
/// code ...`) that neither the block being replaced nor the rest of the file
/// has (a `.pyi` stub's `...` is the file's own). Written into the file, it
/// would delete the lines it stands for. The file's lines are read only
/// when the replacement has a placeholder: a format applying thousands of
/// edits need not split its file into lines for each.
pub fn elided_replacement<'a>(
    search: &[&'a str],
    replace: &[&str],
    file: impl IntoIterator<Item = &'a str>,
) -> Option<EditFailure> {
    let elision =
        elisions_in_lines_not_in(replace.iter().copied(), search.iter().copied().chain(file)).into_iter().next()?;
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
pub(super) fn split_on_elisions<'s>(lines: &[&'s str]) -> Vec<Vec<&'s str>> {
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

/// Where a block matched, for messages: `3-5, 12-14` (1-based), at most
/// [`AMBIGUITY_LIMIT`] of them.
pub fn places(starts: &[usize], len: usize) -> String {
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
pub(super) fn plan_elision<'a>(
    hay: &Haystack<'_>,
    search: &[&str],
    replace: &[&'a str],
) -> Result<Option<(Vec<Splice<'a>>, LineRange)>, EditFailure> {
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
    let plan = plan_block(&hay, &lines_without_endings(search), &lines_without_endings(replace), options)?;
    Ok(Replaced {
        content: render(hay, content, &plan.splices),
        level: plan.level,
        lines: plan.lines,
        candidates: plan.candidates,
    })
}

/// Where and how one block changes the file, before anything is written.
pub(super) struct Plan<'a> {
    splices: Vec<Splice<'a>>,
    lines: LineRange,
    level: Level,
    /// Found only once blank lines at the block's edges were dropped.
    trimmed: bool,
    /// Each level tried, with the places it found.
    candidates: Vec<(Level, usize)>,
}

pub(super) fn plan_block<'a>(
    hay: &Haystack<'_>,
    s: &[&str],
    r: &[&'a str],
    options: &LadderOptions,
) -> Result<Plan<'a>, EditFailure> {
    if s.is_empty() {
        return Err(EditFailure::new(FailureKind::Malformed, "the text to replace is empty"));
    }
    if let Some(failure) = elided_replacement(s, r, hay.lines().iter().copied()) {
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
            match plan_block(hay, &lines_without_endings(&search), &lines_without_endings(&replace), options) {
                Ok(done) => {
                    let splices = done.splices.into_iter().map(Splice::into_owned).collect();
                    return Ok(Plan { trimmed: true, splices, ..done });
                }
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
/// text contains a line that an earlier block writes or joins to another
/// by deleting the lines between (so no earlier block can have made a new
/// match). Anything else, including every failure, is
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
    // Looser levels only merge lines, so a line equal at any level is
    // equal at the loosest: one key per line covers them all. Each key of a
    // block's text maps to the last block whose text has it; a block then
    // writes a line a later block could match when that is after it (a
    // lookup per written line, where a set of every written line grew).
    let mut last_reader: KeyMap<usize> = KeyMap::default();
    for (index, (search, _)) in blocks.iter().enumerate() {
        for line in lines_with_endings(search).map(strip_ending) {
            last_reader.insert(line_key(line, Level::Unicode), index);
        }
    }
    let read_later =
        |index: usize, line: &str| last_reader.get(&line_key(line, Level::Unicode)).is_some_and(|&j| j > index);
    let mut placed: Vec<(Plan, usize, usize)> = Vec::with_capacity(blocks.len());
    // The placed line ranges by start. They never overlap, so the one that
    // starts last before a range's end is the only one that can touch it.
    let mut ranges: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for (index, (search, replace)) in blocks.iter().enumerate() {
        let (s, r) = (lines_without_endings(search), lines_without_endings(replace));
        let plan = plan_block(&hay, &s, &r, options).ok()?;
        if plan.trimmed || !LINE_LEVELS.contains(&plan.level) {
            return None;
        }
        let (start, end) = (plan.lines.start as usize - 1, plan.lines.end as usize);
        let reach = r.len().max(1);
        if ranges.range(..end + reach).next_back().is_some_and(|(_, &b)| start < b + reach) {
            return None;
        }
        if plan.splices.iter().flat_map(|sp| &sp.middle).any(|l| read_later(index, l)) {
            return None;
        }
        // A deletion writes no line, but joins the lines around it into
        // text a later block may match: those count as written too.
        let seams = plan.splices.iter().filter_map(|sp| sp.seam(hay.len()));
        if seams.flat_map(|range| &hay.lines()[range]).any(|l| read_later(index, l)) {
            return None;
        }
        ranges.insert(start, end);
        placed.push((plan, start, end));
    }
    // Line numbers as each block saw the file: shifted by the earlier blocks
    // above it, filled in reply order.
    let starts: Vec<usize> = ranges.into_keys().collect();
    let rank = |start: &usize| starts.binary_search(start).expect("every placed block has its range");
    let mut shifts = crate::shifts::Shifts::new(starts.len());
    let mut outcomes = Vec::with_capacity(placed.len());
    for (plan, start, end) in &placed {
        let shift = shifts.before(rank(start));
        let at = |line: u32| (line as isize + shift) as u32;
        let matched = ladder_match(plan.level, &plan.candidates);
        outcomes.push((plan.level, LineRange::new(at(plan.lines.start), at(plan.lines.end)), matched));
        let delta = plan.splices.iter().map(Splice::new_len).sum::<usize>() as isize - (end - start) as isize;
        shifts.grow(rank(start), delta);
    }
    let mut splices: Vec<Splice> = placed.into_iter().flat_map(|(plan, _, _)| plan.splices).collect();
    splices.sort_by_key(|sp| sp.start);
    Some((render(hay, content, &splices), outcomes))
}

/// The block without blank lines at its edges, and the replacement without
/// as many blank lines at the same edges; `None` when there are none.
pub(super) fn trim_blank_edges(s: &[&str], r: &[&str]) -> Option<(String, String)> {
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

pub(super) fn single_splice<'a>(hay: &Haystack<'_>, s: &[&str], r: &[&'a str], m: BlockMatch) -> Vec<Splice<'a>> {
    let reindent = match m.level {
        Level::Exact | Level::TrailingWhitespace => Reindent::Keep,
        _ => Reindent::infer(s.iter().copied().zip(hay.lines[m.start..m.end].iter().copied())),
    };
    vec![make_splice(m.start, m.end, s, s, r, &reindent, m.level)]
}

pub(super) fn same_lines(a: &[&str], b: &[&str]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| normalize(x, Level::Unicode) == normalize(y, Level::Unicode))
}

/// The replacement already sits around the matched lines (it extends the
/// search text, and the extension is there): applying again would duplicate it.
pub(super) fn already_applied_around(
    hay: &Haystack<'_>,
    s: &[&str],
    r: &[&str],
    found: LineRange,
) -> Option<EditFailure> {
    if r.len() <= s.len() || same_lines(s, r) {
        return None;
    }
    let (start, end) = (found.start as usize - 1, found.end as usize);
    // A place that covers the match starts at most `r.len()` lines above
    // its end, and its first line is `r`'s at the looser level: most blocks
    // are settled by comparing those few lines, with nothing allocated.
    let first = crate::text::trim(r[0]);
    let starts = hay.lines.get(end.saturating_sub(r.len())..=start)?;
    if !starts.iter().any(|line| crate::text::trim(line) == first) {
        return None;
    }
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

pub(super) fn already_applied(at: usize, len: usize) -> EditFailure {
    EditFailure::new(
        FailureKind::AlreadyApplied,
        format!("the replacement text is already in the file, at lines {}-{}", at + 1, at + len),
    )
    .with_hint("this edit seems to have been applied already; do not send it again")
    .at(LineRange::new(at as u32 + 1, (at + len) as u32))
}

pub(super) fn not_found(hay: &Haystack<'_>, s: &[&str], r: &[&str]) -> EditFailure {
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
