//! Applying the edits of one file: the checks of the crate docs, in their
//! order, then one forward pass over the original lines.

use std::collections::HashSet;

use agent_apply_sdk::message;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{lines_without_endings, splice_lines, split_bom, trim, trim_end, trim_start};

use crate::{RangeEdit, numbered_view, version_tag};

/// An edit of the file with its index among the reply's edits.
pub(crate) type Indexed<'e> = (usize, &'e RangeEdit);

/// Each edit's replacement split into lines once, for the checks and the
/// splice, by edit index: sorted, and looked up by binary search (a hash
/// map of them, built and hashed into per check, was a tenth of applying a
/// reply of 20,000 edits).
struct NewLines<'e>(Vec<(usize, Vec<&'e str>)>);

impl<'e> NewLines<'e> {
    fn of(ops: &[Indexed<'e>]) -> Self {
        let mut lines: Vec<(usize, Vec<&str>)> = ops.iter().map(|&(i, op)| (i, op.lines())).collect();
        lines.sort_unstable_by_key(|&(i, _)| i);
        NewLines(lines)
    }

    /// The lines of edit `index`, one of the edits it was made of.
    fn get(&self, index: usize) -> &[&'e str] {
        let at = self.0.binary_search_by_key(&index, |&(i, _)| i).expect("an edit of this file");
        &self.0[at].1
    }
}

/// What became of the edit with that index.
type Outcome = (usize, Result<Applied, EditFailure>);

/// Format options, read once per `apply`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    edit_file: Option<String>,
    base_hash: Option<String>,
    guard: bool,
}

impl Settings {
    pub(crate) fn read(options: Options<'_>) -> Result<Self, EditFailure> {
        let guard = options.flag("stale-guard", true).map_err(|m| EditFailure::new(FailureKind::Malformed, m))?;
        let base_hash = options
            .get("base-hash")
            .map(|v| v.trim().trim_start_matches('@').to_ascii_lowercase())
            .filter(|v| !v.is_empty());
        let edit_file = options.get("file").map(|f| agent_apply_sdk::paths::normalize(f.trim()));
        Ok(Settings { edit_file, base_hash, guard })
    }

    /// The tag an edit of `path` was written against.
    fn tag_for(&self, path: &str, edit: &RangeEdit) -> Option<String> {
        edit.tag.clone().or_else(|| match &self.edit_file {
            Some(file) if file != path => None,
            _ => self.base_hash.clone(),
        })
    }
}

/// The file the edits change, as they were written against it.
struct EditedFile<'a> {
    path: &'a str,
    content: &'a str,
    /// The content after its BOM.
    body: &'a str,
    /// The body's lines, without their endings.
    lines: Vec<&'a str>,
}

impl<'a> EditedFile<'a> {
    fn new(path: &'a str, content: &'a str) -> Self {
        let (_, body) = split_bom(content);
        let lines = lines_without_endings(body);
        EditedFile { path, content, body, lines }
    }

    fn line_count(&self) -> u32 {
        self.lines.len() as u32
    }

    /// Line `number` (1-based), if the file has it.
    fn line(&self, number: i64) -> Option<&'a str> {
        (number >= 1 && number as usize <= self.lines.len()).then(|| self.lines[number as usize - 1])
    }

    /// The numbered view of lines `from..=to`, clamped to the file: what a
    /// failure shows so the model can resend without reading the file again.
    fn view(&self, from: u32, to: u32) -> String {
        numbered_view(self.path, self.content, &[LineRange::new(from.max(1), to.min(self.line_count()))])
    }
}

/// Apply the edits of one file. Returns the new content (when any edit
/// applied) and an outcome per edit index.
pub(crate) fn apply_file(
    path: &str,
    content: &str,
    ops: &[Indexed<'_>],
    settings: &Settings,
) -> (Option<String>, Vec<Outcome>) {
    let file = EditedFile::new(path, content);
    // Each edit's replacement split into lines once, for the checks and the splice.
    let new_lines = NewLines::of(ops);

    // 1. Version tags.
    let stale_tag = ops
        .iter()
        .find_map(|(_, op)| settings.tag_for(path, op).filter(|tag| !agent_apply_sdk::view::tag_matches(tag, content)));
    if let Some(tag) = stale_tag {
        return (None, stale_tag_failures(&file, ops, &tag));
    }

    // 2. View prefixes copied into the replacement; 3. ranges.
    let mut failed: Vec<(usize, EditFailure)> = Vec::new();
    let mut standing: Vec<Indexed<'_>> = Vec::new();
    for &(i, op) in ops {
        match copied_prefixes_failure(path, op, new_lines.get(i)).or_else(|| out_of_range_failure(&file, op)) {
            Some(failure) => failed.push((i, failure)),
            None => standing.push((i, op)),
        }
    }

    // 4. Overlaps among the edits still standing.
    let overlapping = overlap_failures(path, &standing);
    let overlapped: HashSet<usize> = overlapping.iter().map(|(i, _)| *i).collect();
    failed.extend(overlapping);
    standing.retain(|(i, _)| !overlapped.contains(i));

    // 5. The stale-number guard.
    if settings.guard
        && let Some(stale) = stale_number_failures(&file, settings, &standing, &new_lines)
    {
        failed.extend(stale);
        standing.clear();
    }

    // A replacement that leaves code out (a placeholder the file does not
    // have) is refused: the SDK's rule for every format.
    standing.retain(|&(i, op)| {
        let Some(failure) = elided_failure(&file, op, new_lines.get(i)) else { return true };
        failed.push((i, failure));
        false
    });

    // 6. Apply.
    let mut outcomes: Vec<Outcome> = failed.into_iter().map(|(i, failure)| (i, Err(failure))).collect();
    if standing.is_empty() {
        return (None, outcomes);
    }
    let (new_content, applied) = splice(&file, standing, &new_lines);
    outcomes.extend(applied);
    (Some(new_content), outcomes)
}

/// Every edit of a file fails when one carries a tag the content does not
/// have: the numbers of all of them belong to another version.
fn stale_tag_failures(file: &EditedFile<'_>, ops: &[Indexed<'_>], tag: &str) -> Vec<Outcome> {
    let path = file.path;
    let current_tag = version_tag(file.content);
    ops.iter()
        .map(|&(i, op)| {
            let lo = op.start.saturating_sub(3);
            let hi = op.end.max(op.start).saturating_add(3);
            let failure = EditFailure::new(
                FailureKind::Stale,
                format!(
                    "{} on {path} is stale: it was written against version @{tag}, but the file is now \
                     @{current_tag}",
                    op.label()
                ),
            )
            .with_hint(format!(
                "{path} changed since you read it. Its lines there now:\n{}Resend the edit with fresh line \
                 numbers and @{current_tag}.",
                file.view(lo, hi)
            ));
            (i, Err(failure))
        })
        .collect()
}

fn copied_prefixes_failure(path: &str, op: &RangeEdit, lines: &[&str]) -> Option<EditFailure> {
    copied_prefixes(lines).then(|| {
        EditFailure::new(
            FailureKind::Malformed,
            format!("{} on {path}: the replacement lines still carry the view's `N: ` numbers", op.label()),
        )
        .with_hint("send the new lines as they should appear in the file, without the line numbers")
    })
}

fn out_of_range_failure(file: &EditedFile<'_>, op: &RangeEdit) -> Option<EditFailure> {
    let (path, n) = (file.path, file.line_count());
    if !(op.start == 0 || op.end > n || op.end + 1 < op.start || op.start > n + 1) {
        return None;
    }
    let wanted = if op.is_insertion() {
        format!("inserts before line {}", op.start)
    } else {
        format!("replaces lines {}", op.range_text())
    };
    Some(
        EditFailure::new(
            FailureKind::OutOfRange,
            format!("{} is out of range: it {wanted}, but {path} has only {}", op.label(), LineCount(n as usize)),
        )
        .with_hint(format!(
            "ranges go from 1 to {n}; to add lines at the end, insert with {}-{n}. The file ends:\n{}",
            n + 1,
            file.view(n.saturating_sub(2), n)
        ))
        .at(LineRange::new(op.start, op.end)),
    )
}

/// A failure for each edit that overlaps another (naming the first such).
/// Only edits whose spans touch a neighbour's (in line order) can overlap
/// anything; the others are not searched, so thousands of edits of one file
/// stay cheap.
fn overlap_failures(path: &str, standing: &[Indexed<'_>]) -> Vec<(usize, EditFailure)> {
    let near = touching_neighbours(standing);
    let mut overlapping = Vec::new();
    for &(i, a) in standing.iter().filter(|(i, _)| near.contains(i)) {
        if let Some(&(_, b)) = standing.iter().find(|&&(j, b)| j != i && overlaps(a, b)) {
            overlapping.push((
                i,
                EditFailure::new(FailureKind::Overlap, format!("{} overlaps {} on {path}", a.label(), b.label()))
                    .with_hint(
                        "every range refers to the file as you read it, so two edits may not touch the same line; \
                     merge them into one edit",
                    )
                    .at(LineRange::new(a.start, a.end)),
            ));
        }
    }
    overlapping
}

/// The edits whose span (`start..=end`, an insertion's is its line) meets
/// another's: a superset of those that [`overlaps`] another. In line order,
/// a span that meets any other meets its predecessor's furthest end or its
/// successor's start.
pub(crate) fn touching_neighbours(ops: &[Indexed<'_>]) -> HashSet<usize> {
    let mut sorted: Vec<(u32, u32, usize)> = ops.iter().map(|&(i, op)| (op.start, op.end.max(op.start), i)).collect();
    sorted.sort_unstable();
    let mut near = HashSet::new();
    let mut furthest: Option<u32> = None;
    for (k, &(start, end, i)) in sorted.iter().enumerate() {
        let meets_before = furthest.is_some_and(|f| start <= f);
        let meets_after = sorted.get(k + 1).is_some_and(|&(next, _, _)| next <= end);
        if meets_before || meets_after {
            near.insert(i);
        }
        furthest = Some(furthest.map_or(end, |f| f.max(end)));
    }
    near
}

/// Whether two edits of one file touch a common line (or one inserts inside
/// the other's range).
pub(crate) fn overlaps(a: &RangeEdit, b: &RangeEdit) -> bool {
    match (a.is_insertion(), b.is_insertion()) {
        (true, true) => false,
        (true, false) => b.start < a.start && a.start <= b.end,
        (false, true) => a.start < b.start && b.start <= a.end,
        (false, false) => a.start.max(b.start) <= a.end.min(b.end),
    }
}

/// When the first untagged edit with evidence of wrong numbers is found, a
/// failure for every standing edit: the culprit's evidence, and for the
/// others that the file's numbers cannot be trusted.
fn stale_number_failures(
    file: &EditedFile<'_>,
    settings: &Settings,
    standing: &[Indexed<'_>],
    new_lines: &NewLines<'_>,
) -> Option<Vec<(usize, EditFailure)>> {
    let path = file.path;
    let (culprit, culprit_op, evidence) = standing.iter().find_map(|&(i, op)| {
        if settings.tag_for(path, op).is_some() {
            return None;
        }
        suspicious(file, op, new_lines.get(i)).map(|failure| (i, op, failure))
    })?;
    let failures = standing.iter().map(|&(i, op)| {
        let failure = if i == culprit {
            evidence.clone()
        } else {
            EditFailure::new(
                FailureKind::Stale,
                format!(
                    "{} on {path} was not applied: {} suggests the line numbers for {path} are off",
                    op.label(),
                    culprit_op.label()
                ),
            )
            .with_hint(format!("read {path} again and resend every edit of it with fresh line numbers"))
        };
        (i, failure)
    });
    Some(failures.collect())
}

/// The SDK's refusal of a replacement that stands a placeholder for code
/// the file has, worded as this edit's failure.
fn elided_failure(file: &EditedFile<'_>, op: &RangeEdit, new: &[&str]) -> Option<EditFailure> {
    let old = file.lines.get((op.start - 1) as usize..op.end as usize).unwrap_or_default();
    let failure = agent_apply_sdk::matching::elided_replacement(old, new, file.lines.iter().copied())?;
    Some(EditFailure { message: format!("{} on {}: {}", op.label(), file.path, failure.message), ..failure })
}

/// Write the edits that passed every check, in one forward pass over the
/// original lines (the same as applying the sorted edits from the bottom
/// up). The last edit in reply order reports the file's new length; the
/// others report their old and new lines.
fn splice(file: &EditedFile<'_>, mut standing: Vec<Indexed<'_>>, new_lines: &NewLines<'_>) -> (String, Vec<Outcome>) {
    standing.sort_by_key(|(i, op)| (op.start, op.end, *i));
    let eol = TextStyle::detect(file.content).eol.as_str();
    let final_newline = file.body.is_empty() || file.body.ends_with('\n');
    let mut shift: i64 = 0;
    let mut messages = Vec::new();
    for &(i, op) in &standing {
        let new_start = (op.start as i64 + shift) as u32;
        let added = new_lines.get(i).len();
        messages.push((i, applied_message(file.path, op, added, new_start), LineRange::new(op.start, op.end)));
        shift += added as i64 - (op.end + 1 - op.start) as i64;
    }
    let replaced = standing.iter().map(|(i, op)| ((op.start - 1) as usize..op.end as usize, new_lines.get(*i)));
    let new_content = splice_lines(file.content, replaced, eol, final_newline);
    let total = (file.lines.len() as i64 + shift) as usize;
    let last_index = standing.iter().map(|(i, _)| *i).max().expect("standing is not empty");
    let path = file.path;
    let outcomes = messages.into_iter().map(|(i, message, lines)| {
        let message = if i == last_index {
            message!("File '", path, "' has been updated. It now has ", total, " lines.")
        } else {
            message
        };
        (i, Ok(Applied { message, lines: Some(lines), applied_path: None }))
    });
    (new_content, outcomes.collect())
}

/// What an applied edit did, its `added` lines in place of its range, with
/// the lines its text now has (`new_start` on) after the edits above it.
/// Written piece by piece (`message!`): a reply of 20,000 edits makes
/// 20,000 of these.
fn applied_message(path: &str, op: &RangeEdit, added: usize, new_start: u32) -> String {
    let removed = (op.end + 1 - op.start) as usize;
    let (now, span) = match added {
        0 => ("", None),
        _ => (", now ", Some(LineSpan(new_start, new_start + added as u32 - 1))),
    };
    if op.is_insertion() {
        message!("inserted ", LineCount(added), " before line ", op.start, " of ", path, now, span)
    } else if added == 0 {
        message!("deleted lines ", op.start, "-", op.end, " of ", path)
    } else {
        message!(
            "replaced lines ",
            op.start,
            "-",
            op.end,
            " of ",
            path,
            " (",
            LineCount(removed),
            ") with ",
            LineCount(added),
            now,
            span
        )
    }
}

/// Every non-blank replacement line starts with `N: `, numbers in sequence.
/// Stops at the first line that is not so: most replacements are code,
/// and their first line tells.
fn copied_prefixes(lines: &[&str]) -> bool {
    let number = |l: &str| {
        // A number (perhaps signed) starts the line, or it has no prefix:
        // most lines are ruled out before a search for `: `.
        if !trim_start(l).starts_with(|c: char| c.is_ascii_digit() || c == '+') {
            return None;
        }
        l.split_once(": ")
            .and_then(|(n, _)| n.trim_start().parse::<u64>().ok())
            .or_else(|| l.trim_end().strip_suffix(':').and_then(|n| n.trim_start().parse().ok()))
    };
    let (mut last, mut count) = (None, 0);
    for line in lines.iter().filter(|l| !agent_apply_sdk::text::trim(l).is_empty()) {
        match number(line) {
            Some(n) if last.is_none_or(|before| before < n) => (last, count) = (Some(n), count + 1),
            _ => return false,
        }
    }
    count >= 2
}

/// Evidence that an edit's numbers are off (see the crate docs).
fn suspicious(file: &EditedFile<'_>, op: &RangeEdit, lines: &[&str]) -> Option<EditFailure> {
    if lines.is_empty() {
        return None;
    }
    shifted_context(file, op, lines).or_else(|| repeated_neighbours(file, op, lines))
}

/// The replacement's first and last lines sit at `START+d` and `END+d` for
/// exactly one small shift `d`, not at `START` and `END`.
fn shifted_context(file: &EditedFile<'_>, op: &RangeEdit, r: &[&str]) -> Option<EditFailure> {
    const WINDOW: i64 = 8;
    let k = r.len();
    if op.is_insertion() || k < 2 || !(distinctive(r[0]) || distinctive(r[k - 1])) {
        return None;
    }
    let (s, e) = (op.start as i64, op.end as i64);
    // Trimmed once, not at each of the shifts tried.
    let (first, last) = (trim_end(r[0]), trim_end(r[k - 1]));
    let fits = |d: i64| file.line(s + d).is_some_and(|l| is(l, first)) && file.line(e + d).is_some_and(|l| is(l, last));
    if fits(0) {
        return None;
    }
    let shifts: Vec<i64> = (-WINDOW..=WINDOW).filter(|&d| d != 0 && fits(d)).collect();
    let [d] = shifts[..] else { return None };
    let path = file.path;
    let (ns, ne) = (s + d, e + d);
    Some(
        EditFailure::new(
            FailureKind::Stale,
            format!(
                "{} on {path} looks stale: its first and last lines are lines {ns} and {ne} of the file, \
                 not {s} and {e}",
                op.label()
            ),
        )
        .with_hint(format!(
            "the file seems to have shifted by {d:+} lines since you read it; nothing was written. If you \
             meant lines {ns}-{ne}, resend the edit as `{path}:{ns}-{ne}`. The lines there now:\n{}",
            file.view((s.min(ns) - 2).max(1) as u32, (e.max(ne) + 2) as u32)
        ))
        .at(LineRange::new(op.start, op.end)),
    )
}

/// The replacement begins with the 1-3 lines just above the range, or ends
/// with the 1-3 lines just below it (the longest run first).
fn repeated_neighbours(file: &EditedFile<'_>, op: &RangeEdit, r: &[&str]) -> Option<EditFailure> {
    let k = r.len();
    let (s, e) = (op.start as i64, op.end as i64);
    // A replacement whose first (last) line is already the range's own first
    // (last) line sits where it says; its likeness to a neighbour then only
    // means the file has alike lines there.
    let keeps = |line: i64, kept: &str| !op.is_insertion() && file.line(line).is_some_and(|l| same(l, kept));
    for m in (1..=3usize).rev().filter(|&m| m <= k) {
        let first = s - m as i64;
        if repeats(file, first, &r[..m]) && !keeps(s, r[0]) {
            return Some(repeated(file, op, Neighbours::Above, first, s - 1));
        }
        let last = e + m as i64;
        if repeats(file, e + 1, &r[k - m..]) && !keeps(e, r[k - 1]) {
            return Some(repeated(file, op, Neighbours::Below, e + 1, last));
        }
    }
    None
}

/// Whether the file's lines from `first` on are `lines`, one of them
/// distinctive.
fn repeats(file: &EditedFile<'_>, first: i64, lines: &[&str]) -> bool {
    let mut distinct = false;
    for (line, expected) in (first..).zip(lines) {
        match file.line(line) {
            Some(in_file) if same(in_file, expected) => distinct |= distinctive(in_file),
            _ => return false,
        }
    }
    distinct
}

/// Which lines around the range a replacement repeats.
enum Neighbours {
    Above,
    Below,
}

/// The failure for a replacement that repeats lines `from..=to`, just
/// above or below its range.
fn repeated(file: &EditedFile<'_>, op: &RangeEdit, side: Neighbours, from: i64, to: i64) -> EditFailure {
    // The range widened to take in the repeated lines.
    let (verb, side, widened_start, widened_end) = match side {
        Neighbours::Above => ("begins", "above", from, op.end as i64),
        Neighbours::Below => ("ends", "below", op.start as i64, to),
    };
    let path = file.path;
    let which = LineSpan(from as u32, to as u32);
    EditFailure::new(
        FailureKind::Stale,
        format!(
            "{} on {path} {verb} with {which}, just {side} the range: applying it would duplicate {}",
            op.label(),
            if from == to { "that line" } else { "those lines" }
        ),
    )
    .with_hint(format!(
        "the line numbers are probably off; nothing was written. If you meant to replace {which} too, resend the \
         edit as `{path}:{widened_start}-{widened_end}`. The lines there now:\n{}",
        file.view((op.start as i64 - 4).max(1) as u32, (op.end as i64 + 4) as u32)
    ))
    .at(LineRange::new(op.start, op.end))
}

fn same(a: &str, b: &str) -> bool {
    trim_end(a) == trim_end(b)
}

/// [`same`], with `trimmed` trimmed already: most lines differ in their
/// first bytes, and are not trimmed to find that out.
fn is(line: &str, trimmed: &str) -> bool {
    line.strip_prefix(trimmed).is_some_and(|rest| trim_end(rest).is_empty())
}

/// A line that means something on its own: not blank, not a lone brace or
/// keyword such as `}` or `end`.
pub(crate) fn distinctive(line: &str) -> bool {
    // Counted until both bounds are met, not over the whole line: the
    // checks ask this of every replacement.
    let (mut chars, mut alphanumeric) = (0, 0);
    trim(line).chars().any(|c| {
        chars += 1;
        alphanumeric += usize::from(c.is_alphanumeric());
        chars >= 6 && alphanumeric >= 3
    })
}

#[cfg(test)]
mod checks_tests {
    use super::*;

    /// The line's `N: ` prefix as read before the first-character check.
    fn number_of(l: &str) -> Option<u64> {
        l.split_once(": ")
            .and_then(|(n, _)| n.trim_start().parse::<u64>().ok())
            .or_else(|| l.trim_end().strip_suffix(':').and_then(|n| n.trim_start().parse().ok()))
    }

    proptest::proptest! {
        /// Ruling lines out by their first character finds the same
        /// numbered lines as reading every line's prefix.
        #[test]
        fn copied_prefixes_are_found_as_by_reading_every_prefix(
            lines in proptest::collection::vec("[ \t]{0,2}[+a]?[0-9]{0,2}(: |:)?[a ]{0,2}", 0..5),
        ) {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let mut last = None;
            let mut count = 0;
            let mut numbered = true;
            for line in lines.iter().filter(|l| !trim(l).is_empty()) {
                match number_of(line) {
                    Some(n) if last.is_none_or(|before| before < n) => (last, count) = (Some(n), count + 1),
                    _ => {
                        numbered = false;
                        break;
                    }
                }
            }
            proptest::prop_assert_eq!(copied_prefixes(&lines), numbered && count >= 2);
        }

        /// A line is the trimmed line when it is that line with blanks after.
        #[test]
        fn a_line_is_a_trimmed_one_as_same_says(line in "[a \t\u{a0}]{0,6}", other in "[a \t\u{a0}]{0,6}") {
            proptest::prop_assert_eq!(is(&line, trim_end(&other)), same(&line, &other));
        }
    }
}
