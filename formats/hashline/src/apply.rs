//! Applying anchored edits: every anchor is checked (and, when it drifted a
//! little, relocated) against the file as it is before any change; edits
//! are de-duplicated, checked for overlaps, and spliced in one pass.

use std::collections::HashMap;

use agent_apply_sdk::matching::{LadderOptions, replace_block};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{lines_with_endings, split_bom, strip_ending};
use agent_apply_sdk::view::{merge_ranges, render_ranges};

use crate::hash::{hex, line_hash, matches};
use crate::{Anchor, HashEdit, Operation, Settings};

/// The file an edit group works on, read once.
struct Snapshot<'c> {
    content: &'c str,
    /// Lines without their endings (after the BOM).
    lines: Vec<&'c str>,
    /// Each line's ending, `""` for a last line without one.
    endings: Vec<&'c str>,
    hashes: Vec<u32>,
}

impl<'c> Snapshot<'c> {
    fn new(content: &'c str) -> Self {
        let (_, body) = split_bom(content);
        let raw: Vec<&str> = lines_with_endings(body).collect();
        let lines: Vec<&str> = raw.iter().map(|l| strip_ending(l)).collect();
        let endings = raw.iter().zip(&lines).map(|(r, l)| &r[l.len()..]).collect();
        let hashes = lines.iter().map(|l| line_hash(l)).collect();
        Snapshot { content, lines, endings, hashes }
    }

    fn len(&self) -> u32 {
        self.lines.len() as u32
    }
}

/// An anchor that no longer names its line, and the lines to show instead.
#[derive(Debug, Clone)]
struct Stale {
    anchor: Anchor,
    reason: String,
    window: LineRange,
    kind: FailureKind,
}

/// Where an anchor resolved to.
enum Resolved {
    /// 1-based line; `moved` when the hash was found at another line nearby.
    At {
        line: u32,
        moved: bool,
    },
    Stale(Stale),
    Bad(EditFailure),
}

fn resolve(snap: &Snapshot<'_>, anchor: &Anchor, settings: &Settings, allow_zero: bool) -> Resolved {
    let n = snap.len();
    let w = settings.window;
    if anchor.line == 0 {
        if allow_zero {
            return Resolved::At { line: 0, moved: false };
        }
        return Resolved::Bad(EditFailure::new(
            FailureKind::OutOfRange,
            format!(
                "anchor {anchor} names line 0, but lines start at 1 (only insert_after may use 0, the file's start)"
            ),
        ));
    }
    if anchor.hash.len() < settings.hash_length {
        return Resolved::Bad(
            EditFailure::new(
                FailureKind::Malformed,
                format!(
                    "anchor {anchor} has {} hex digit(s), but views of this repository show {} (option hash-length)",
                    anchor.hash.len(),
                    settings.hash_length
                ),
            )
            .with_hint("copy the anchor exactly as the view shows it"),
        );
    }
    let here = anchor.line <= n && matches(snap.hashes[anchor.line as usize - 1], &anchor.hash);
    if here {
        return Resolved::At { line: anchor.line, moved: false };
    }
    let lo = anchor.line.saturating_sub(w).max(1);
    let hi = anchor.line.saturating_add(w).min(n);
    let found: Vec<u32> = (lo..=hi).filter(|&l| matches(snap.hashes[l as usize - 1], &anchor.hash)).collect();
    if found.len() == 1 {
        return Resolved::At { line: found[0], moved: true };
    }
    let window = if lo <= hi { LineRange::new(lo, hi) } else { LineRange::new(n.saturating_sub(w).max(1), n) };
    let len = anchor.hash.len();
    let (reason, kind) = if anchor.line > n {
        let what = if found.is_empty() { "no line near its end".to_string() } else { ambiguous_lines(&found) };
        (format!("the file has only {n} lines, and {what} has hash {}", anchor.hash), FailureKind::OutOfRange)
    } else {
        let now = hex(snap.hashes[anchor.line as usize - 1], len);
        if found.is_empty() {
            (
                format!(
                    "line {} now has hash {now}, and no line within {w} of it has hash {}",
                    anchor.line, anchor.hash
                ),
                FailureKind::Stale,
            )
        } else {
            (
                format!(
                    "line {} now has hash {now}, and {} within {w} of it have hash {}, so it cannot be moved safely",
                    anchor.line,
                    ambiguous_lines(&found),
                    anchor.hash
                ),
                FailureKind::Stale,
            )
        }
    };
    Resolved::Stale(Stale { anchor: anchor.clone(), reason, window, kind })
}

fn ambiguous_lines(found: &[u32]) -> String {
    let list: Vec<String> = found.iter().map(u32::to_string).collect();
    format!("{} lines ({})", found.len(), list.join(", "))
}

/// A planned change: replace 0-based lines `start..end` of the original
/// with `new` (an insertion when `start == end`).
#[derive(Debug, Clone)]
struct Plan {
    index: usize,
    start: usize,
    end: usize,
    new: Vec<String>,
    notes: Vec<String>,
    what: String,
    /// How it was placed, for the report.
    matched: MatchInfo,
}

impl Plan {
    fn lines(&self) -> LineRange {
        LineRange::new(self.start as u32 + 1, self.end as u32)
    }

    fn overlaps(&self, other: &Plan) -> bool {
        match (self.start == self.end, other.start == other.end) {
            (true, true) => false,
            (true, false) => other.start < self.start && self.start < other.end,
            (false, true) => self.start < other.start && other.start < self.end,
            (false, false) => self.start < other.end && other.start < self.end,
        }
    }
}

enum Planned {
    Ok(Plan),
    Stale(Vec<Stale>),
    Failed(EditFailure),
}

/// An anchored edit's placement: relocated when its hash was found at
/// another line than it named.
fn anchor_match(anchor: &Anchor, moved: bool) -> MatchInfo {
    let at = MatchInfo::at("anchor");
    if moved { at.relocated_from(anchor.line) } else { at }
}

fn moved_note(anchor: &Anchor, line: u32) -> String {
    let (dir, by) = if line > anchor.line { ("down", line - anchor.line) } else { ("up", anchor.line - line) };
    format!("anchor {anchor} relocated from line {} to line {line} ({by} {dir}, where its hash is now)", anchor.line)
}

fn plan(snap: &Snapshot<'_>, index: usize, edit: &HashEdit, settings: &Settings) -> Planned {
    let at = |anchor: &Anchor, zero: bool| resolve(snap, anchor, settings, zero);
    match &edit.op {
        Operation::SetLine { anchor, new_text } => match at(anchor, false) {
            Resolved::At { line, moved } => Planned::Ok(Plan {
                index,
                start: line as usize - 1,
                end: line as usize,
                new: new_text.clone(),
                notes: if moved { vec![moved_note(anchor, line)] } else { Vec::new() },
                what: if new_text.is_empty() { format!("deleted line {line}") } else { format!("set line {line}") },
                matched: anchor_match(anchor, moved),
            }),
            Resolved::Stale(s) => Planned::Stale(vec![s]),
            Resolved::Bad(f) => Planned::Failed(f),
        },
        Operation::InsertAfter { anchor, text } => match at(anchor, true) {
            Resolved::At { line, moved } => Planned::Ok(Plan {
                index,
                start: line as usize,
                end: line as usize,
                new: text.clone(),
                notes: if moved { vec![moved_note(anchor, line)] } else { Vec::new() },
                matched: anchor_match(anchor, moved),
                what: if line == 0 {
                    format!("inserted {} line(s) at the start", text.len())
                } else {
                    format!("inserted {} line(s) after line {line}", text.len())
                },
            }),
            Resolved::Stale(s) => Planned::Stale(vec![s]),
            Resolved::Bad(f) => Planned::Failed(f),
        },
        Operation::ReplaceLines { start, end, new_text } => {
            if start.line > end.line {
                return Planned::Failed(EditFailure::new(
                    FailureKind::Malformed,
                    format!("start_anchor {start} comes after end_anchor {end}"),
                ));
            }
            let (a, b) = (at(start, false), at(end, false));
            let (sa, sb) = match (a, b) {
                (Resolved::Bad(f), _) | (_, Resolved::Bad(f)) => return Planned::Failed(f),
                (Resolved::Stale(x), Resolved::Stale(y)) => return Planned::Stale(vec![x, y]),
                (Resolved::Stale(x), _) | (_, Resolved::Stale(x)) => return Planned::Stale(vec![x]),
                (Resolved::At { line: x, moved: mx }, Resolved::At { line: y, moved: my }) => ((x, mx), (y, my)),
            };
            // Each anchor follows its hash (unique in its window) on its own;
            // only anchors that would cross are refused.
            if sa.0 > sb.0 {
                let reason = format!(
                    "its anchors were relocated past each other ({start} to line {}, {end} to line {})",
                    sa.0, sb.0
                );
                let w = settings.window;
                let n = snap.len();
                let window = |l: u32| LineRange::new(l.saturating_sub(w).max(1), l.saturating_add(w).min(n.max(1)));
                return Planned::Stale(vec![
                    Stale {
                        anchor: start.clone(),
                        reason: reason.clone(),
                        window: window(start.line.min(n)),
                        kind: FailureKind::Stale,
                    },
                    Stale { anchor: end.clone(), reason, window: window(end.line.min(n)), kind: FailureKind::Stale },
                ]);
            }
            let mut notes = Vec::new();
            if sa.1 {
                notes.push(moved_note(start, sa.0));
            }
            if sb.1 {
                notes.push(moved_note(end, sb.0));
            }
            Planned::Ok(Plan {
                index,
                start: sa.0 as usize - 1,
                end: sb.0 as usize,
                new: new_text.clone(),
                notes,
                matched: if sa.1 { anchor_match(start, true) } else { anchor_match(end, sb.1) },
                what: if new_text.is_empty() {
                    format!("deleted lines {}-{}", sa.0, sb.0)
                } else {
                    format!("replaced lines {}-{}", sa.0, sb.0)
                },
            })
        }
        Operation::Replace { old_text, new_text } => {
            match replace_block(snap.content, old_text, new_text, &settings.ladder) {
                Ok(replaced) => {
                    let after = Snapshot::new(&replaced.content);
                    let (s, e) = (replaced.lines.start as usize, replaced.lines.end as usize);
                    let grown = after.lines.len() as i64 - snap.lines.len() as i64;
                    let new_end = (e as i64 + grown).max(s as i64 - 1) as usize;
                    let new = after.lines[s - 1..new_end].iter().map(|l| l.to_string()).collect();
                    let mut notes = Vec::new();
                    if replaced.level != agent_apply_sdk::matching::Level::Exact {
                        notes.push(format!("old_text matched {}", replaced.level.describe()));
                    }
                    Planned::Ok(Plan {
                        index,
                        start: s - 1,
                        end: e,
                        new,
                        notes,
                        matched: replaced.match_info(),
                        what: format!("replaced lines {s}-{e} (found by old_text)"),
                    })
                }
                Err(failure) => Planned::Failed(failure),
            }
        }
    }
}

/// An edit's index in the reply and what became of it.
pub type EditResult = (usize, Result<Applied, EditFailure>);

/// Apply `edits` (all of one path, with their indices in the reply) to
/// `content`: the outcomes by index, and the new content if anything changed.
pub fn apply_to_file(
    path: &str,
    content: &str,
    edits: &[(usize, &HashEdit)],
    settings: &Settings,
) -> (Vec<EditResult>, Option<String>, Vec<(usize, MatchInfo)>) {
    let snap = Snapshot::new(content);
    let mut results: HashMap<usize, Result<Applied, EditFailure>> = HashMap::new();
    let mut matches: Vec<(usize, MatchInfo)> = Vec::new();
    let mut plans: Vec<Plan> = Vec::new();
    let mut stale: Vec<(usize, Vec<Stale>)> = Vec::new();
    let by_index: HashMap<usize, &HashEdit> = edits.iter().map(|&(i, e)| (i, e)).collect();
    let label = |i: usize| by_index.get(&i).map(|e| e.label.clone()).unwrap_or_default();
    for &(index, edit) in edits {
        match plan(&snap, index, edit, settings) {
            Planned::Ok(p) => match elided(&snap, &p) {
                Some(f) => {
                    results.insert(
                        index,
                        Err(EditFailure { message: format!("{} on {path}: {}", edit.label, f.message), ..f }),
                    );
                }
                None => plans.push(p),
            },
            Planned::Stale(s) => stale.push((index, s)),
            Planned::Failed(f) => {
                let message = format!("{} on {path}: {}", edit.label, f.message);
                results.insert(index, Err(EditFailure { message, ..f }));
            }
        }
    }

    // Stale anchors: one merged set of ranges and one fresh view for the file.
    if !stale.is_empty() {
        let windows: Vec<LineRange> = stale.iter().flat_map(|(_, s)| s.iter().map(|s| s.window)).collect();
        let merged = merge_ranges(&windows, snap.len());
        let marked: std::collections::HashSet<u32> =
            stale.iter().flat_map(|(_, s)| s.iter().map(|s| s.anchor.line)).collect();
        let len = settings.hash_length;
        let view = render_ranges(content, &merged, |n, line| {
            let tag = crate::hash::view_line(n, line, len);
            if marked.contains(&n) { format!(">>> {tag}") } else { tag }
        });
        let ranges = ranges_text(&merged);
        let anchors: Vec<String> = stale
            .iter()
            .flat_map(|(i, s)| {
                s.iter().map(move |s| {
                    format!("{} ({})", s.anchor, label(*i).split(' ').take(2).collect::<Vec<_>>().join(" "))
                })
            })
            .collect();
        let first = stale[0].0;
        for (index, items) in &stale {
            let reasons: Vec<String> =
                items.iter().map(|s| format!("anchor {} is stale: {}", s.anchor, s.reason)).collect();
            let reasons = dedup_join(&reasons);
            let kind =
                items.iter().map(|s| s.kind).find(|k| *k == FailureKind::OutOfRange).unwrap_or(FailureKind::Stale);
            let own = merged
                .iter()
                .find(|r| items.iter().any(|s| r.start <= s.window.start && s.window.start <= r.end))
                .copied();
            let failure = if *index == first {
                EditFailure::new(
                    kind,
                    format!(
                        "{} on {path}: {reasons}. Fresh lines {ranges} of {path} are in the hint: take the anchors from there and send the edits again (no need to re-read the file)",
                        label(*index)
                    ),
                )
                .with_hint(format!("Stale anchors in {path}: {}. Affected lines: {ranges}.\n{view}", anchors.join(", ")))
            } else {
                EditFailure::new(
                    kind,
                    format!(
                        "{} on {path}: {reasons}. Fresh lines {ranges} of {path} are in the hint of {}",
                        label(*index),
                        label(first)
                    ),
                )
            };
            results.insert(*index, Err(EditFailure { lines: own, ..failure }));
        }
    }

    // Identical edits apply once.
    let mut seen: HashMap<(usize, usize, Vec<String>), usize> = HashMap::new();
    let mut unique = Vec::new();
    for p in plans {
        match seen.get(&(p.start, p.end, p.new.clone())) {
            Some(&first) => {
                results.insert(
                    p.index,
                    Ok(Applied {
                        message: format!("{} on {path}: the same as {}, applied once", label(p.index), label(first)),
                        lines: Some(p.lines()),
                        applied_path: None,
                    }),
                );
            }
            None => {
                seen.insert((p.start, p.end, p.new.clone()), p.index);
                unique.push(p);
            }
        }
    }

    // Overlaps: two edits touching the same line both fail.
    unique.sort_by_key(|p| (p.start, p.start != p.end, p.index));
    let mut overlapping: HashMap<usize, usize> = HashMap::new();
    let mut cover: Option<usize> = None;
    for i in 0..unique.len() {
        if let Some(c) = cover
            && unique[i].overlaps(&unique[c])
        {
            overlapping.entry(unique[i].index).or_insert(unique[c].index);
            overlapping.entry(unique[c].index).or_insert(unique[i].index);
        }
        if unique[i].start != unique[i].end && cover.is_none_or(|c| unique[c].end < unique[i].end) {
            cover = Some(i);
        }
    }
    let describe =
        |p: &Plan| if p.start == p.end { format!("inserts after line {}", p.start) } else { range_text(p.lines()) };
    let mut keep = Vec::new();
    for p in unique {
        if let Some(&other) = overlapping.get(&p.index) {
            results.insert(
                p.index,
                Err(EditFailure::new(
                    FailureKind::Overlap,
                    format!(
                        "{} on {path} ({}) overlaps {}: two edits may not touch the same line",
                        label(p.index),
                        describe(&p),
                        label(other)
                    ),
                )
                .with_hint("merge them into one replace_lines edit over the whole span")
                .at(p.lines())),
            );
        } else {
            keep.push(p);
        }
    }

    // No-ops are reported, not applied.
    let mut changes = Vec::new();
    for p in keep {
        let old: Vec<&str> = snap.lines[p.start..p.end].to_vec();
        let same = old.len() == p.new.len() && old.iter().zip(&p.new).all(|(a, b)| a == b);
        let mut message = format!("{} on {path}: {}", label(p.index), p.what);
        if same {
            message = format!("{} on {path}: no change ({} already reads so)", label(p.index), range_or_gap(&p));
        }
        for note in &p.notes {
            message.push_str("; ");
            message.push_str(note);
        }
        if by_index.get(&p.index).is_some_and(|e| e.stripped_prefixes) {
            message.push_str("; copied `N:hh|` prefixes were removed from its text");
        }
        matches.push((p.index, p.matched.clone()));
        results.insert(p.index, Ok(Applied { message, lines: Some(p.lines()), applied_path: None }));
        if !same {
            changes.push(p);
        }
    }

    let new_content = (!changes.is_empty()).then(|| splice(&snap, content, changes));
    let mut out: Vec<EditResult> = results.into_iter().collect();
    out.sort_by_key(|(i, _)| *i);
    (out, new_content, matches)
}

/// New lines that leave code out (a placeholder the file does not have):
/// the SDK's rule for every format.
fn elided(snap: &Snapshot<'_>, p: &Plan) -> Option<EditFailure> {
    let new: Vec<&str> = p.new.iter().map(String::as_str).collect();
    agent_apply_sdk::matching::elided_replacement(&snap.lines[p.start..p.end], &new, &snap.lines)
}

fn range_or_gap(p: &Plan) -> String {
    if p.start == p.end { "nothing to insert".into() } else { range_text(p.lines()) }
}

fn range_text(r: LineRange) -> String {
    if r.start == r.end { format!("line {}", r.start) } else { format!("lines {}-{}", r.start, r.end) }
}

fn dedup_join(items: &[String]) -> String {
    let mut seen: Vec<&String> = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
}

/// `4-20, 32-48` (a single line as `7`).
pub fn ranges_text(ranges: &[LineRange]) -> String {
    let parts: Vec<String> = ranges
        .iter()
        .map(|r| if r.start == r.end { r.start.to_string() } else { format!("{}-{}", r.start, r.end) })
        .collect();
    parts.join(", ")
}

/// The new content: original lines kept byte for byte (with their own
/// endings), planned lines written in the file's style.
fn splice(snap: &Snapshot<'_>, content: &str, mut plans: Vec<Plan>) -> String {
    let style = TextStyle::detect(content);
    plans.sort_by_key(|p| (p.start, p.start != p.end, p.index));
    let mut out: Vec<(&str, Option<&str>)> = Vec::with_capacity(snap.lines.len() + 8);
    let mut next = 0;
    for p in &plans {
        for i in next..p.start {
            out.push((snap.lines[i], Some(snap.endings[i])));
        }
        next = next.max(p.start);
        for line in &p.new {
            out.push((line.as_str(), None));
        }
        next = next.max(p.end);
    }
    for i in next..snap.lines.len() {
        out.push((snap.lines[i], Some(snap.endings[i])));
    }
    let mut text = String::with_capacity(content.len() + 64);
    if style.bom {
        text.push(agent_apply_sdk::text::BOM);
    }
    let count = out.len();
    for (i, (line, ending)) in out.into_iter().enumerate() {
        text.push_str(line);
        let last = i + 1 == count;
        if last && !style.final_newline {
            continue;
        }
        match ending {
            Some(e) if !e.is_empty() => text.push_str(e),
            _ => text.push_str(style.eol.as_str()),
        }
    }
    text
}

/// Ladder options for `replace`.
pub fn ladder() -> LadderOptions {
    LadderOptions::default()
}

/// Every edit of the file fails `stale` when an object's file tag names
/// another version than `content`: its anchors were read elsewhere, even
/// where their hashes happen to match.
pub fn stale_tag(
    path: &str,
    content: &str,
    group: &[(usize, &HashEdit)],
    settings: &Settings,
) -> Option<Vec<(usize, EditFailure)>> {
    let tag =
        group.iter().find_map(|(_, e)| e.tag.as_deref().filter(|t| !agent_apply_sdk::view::tag_matches(t, content)))?;
    let now = agent_apply_sdk::view::version_tag(content);
    let lines: Vec<u32> = group.iter().flat_map(|(_, e)| anchors_of(&e.op)).map(|a| a.line).collect();
    let ranges: Vec<LineRange> =
        lines.iter().map(|&l| LineRange::new(l.saturating_sub(settings.window).max(1), l + settings.window)).collect();
    let mut view = agent_apply_sdk::view::view_header(path, content);
    view.push_str(&render_ranges(content, &ranges, |n, line| crate::hash::view_line(n, line, settings.hash_length)));
    let failures = group
        .iter()
        .map(|(i, e)| {
            let failure = EditFailure::new(
                FailureKind::Stale,
                format!(
                    "{} on {path} is stale: its anchors come from version @{tag}, but the file is now @{now}",
                    e.label
                ),
            )
            .with_hint(format!(
                "{path} changed since you read it. Its lines there now:\n{view}Take the anchors from these lines and \
                 send the edits again with \"tag\": \"@{now}\"."
            ));
            (*i, failure)
        })
        .collect();
    Some(failures)
}

fn anchors_of(op: &Operation) -> Vec<&Anchor> {
    match op {
        Operation::SetLine { anchor, .. } | Operation::InsertAfter { anchor, .. } => vec![anchor],
        Operation::ReplaceLines { start, end, .. } => vec![start, end],
        Operation::Replace { .. } => Vec::new(),
    }
}
