//! Planning one edit: its anchors checked against the file as it was (and
//! followed when their hash drifted a little), and the lines it replaces.

use std::borrow::Cow;
use std::cell::OnceCell;

use agent_apply_sdk::matching::replace_block;
use agent_apply_sdk::message;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{lines_with_endings, split_bom, strip_ending};

use crate::hash::{hex, line_hash, matches};
use crate::{Anchor, HashEdit, NewLines, NewText, Operation, Settings};

/// The file an edit group works on, read once.
pub(super) struct Snapshot<'c> {
    pub(super) content: &'c str,
    /// Lines without their endings (after the BOM).
    pub(super) lines: Vec<&'c str>,
    /// Each line's ending, `""` for a last line without one.
    pub(super) endings: Vec<&'c str>,
    /// Each line's hash, computed when an anchor asks for it: a reply's
    /// anchors name a few lines of a file of thousands.
    hashes: Vec<OnceCell<u32>>,
}

impl<'c> Snapshot<'c> {
    pub(super) fn new(content: &'c str) -> Self {
        let (_, body) = split_bom(content);
        let raw: Vec<&str> = lines_with_endings(body).collect();
        let lines: Vec<&str> = raw.iter().map(|l| strip_ending(l)).collect();
        let endings = raw.iter().zip(&lines).map(|(r, l)| &r[l.len()..]).collect();
        let hashes = lines.iter().map(|_| OnceCell::new()).collect();
        Snapshot { content, lines, endings, hashes }
    }

    /// The hash of 1-based line `line`.
    fn hash(&self, line: u32) -> u32 {
        let index = line as usize - 1;
        *self.hashes[index].get_or_init(|| line_hash(self.lines[index]))
    }

    pub(super) fn len(&self) -> u32 {
        self.lines.len() as u32
    }
}

/// An anchor that no longer names its line, and the lines to show instead.
#[derive(Debug, Clone)]
pub(super) struct Stale {
    pub(super) anchor: Anchor,
    pub(super) reason: String,
    pub(super) window: LineRange,
    pub(super) kind: FailureKind,
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
    // Line 0 is the start of the file, where insert_after may insert.
    if anchor.line == 0 && allow_zero {
        return Resolved::At { line: 0, moved: false };
    }
    if let Some(failure) = unusable(anchor, settings) {
        return Resolved::Bad(failure);
    }
    let n = snap.len();
    let w = settings.window;
    let here = anchor.line <= n && matches(snap.hash(anchor.line), &anchor.hash);
    if here {
        return Resolved::At { line: anchor.line, moved: false };
    }
    let lo = anchor.line.saturating_sub(w).max(1);
    let hi = anchor.line.saturating_add(w).min(n);
    let found: Vec<u32> = (lo..=hi).filter(|&l| matches(snap.hash(l), &anchor.hash)).collect();
    if found.len() == 1 {
        return Resolved::At { line: found[0], moved: true };
    }
    let window = if lo <= hi { LineRange::new(lo, hi) } else { LineRange::new(n.saturating_sub(w).max(1), n) };
    let (reason, kind) = not_followed(snap, anchor, w, &found);
    Resolved::Stale(Stale { anchor: anchor.clone(), reason, window, kind })
}

/// An anchor that can name no line of any file: line 0 (outside
/// insert_after), or fewer hex digits than views show.
fn unusable(anchor: &Anchor, settings: &Settings) -> Option<EditFailure> {
    if anchor.line == 0 {
        return Some(EditFailure::new(
            FailureKind::OutOfRange,
            format!(
                "anchor {anchor} names line 0, but lines start at 1 (only insert_after may use 0, the file's start)"
            ),
        ));
    }
    if anchor.hash.len() < settings.hash_length {
        return Some(
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
    None
}

/// Why an anchor could not be followed: the lines within `window` of it
/// that have its hash (`found`) are none or several.
fn not_followed(snap: &Snapshot<'_>, anchor: &Anchor, window: u32, found: &[u32]) -> (String, FailureKind) {
    let n = snap.len();
    if anchor.line > n {
        let what = if found.is_empty() { "no line near its end".to_string() } else { ambiguous_lines(found) };
        return (format!("the file has only {n} lines, and {what} has hash {}", anchor.hash), FailureKind::OutOfRange);
    }
    let now = hex(snap.hash(anchor.line), anchor.hash.len());
    let reason = if found.is_empty() {
        format!("line {} now has hash {now}, and no line within {window} of it has hash {}", anchor.line, anchor.hash)
    } else {
        format!(
            "line {} now has hash {now}, and {} within {window} of it have hash {}, so it cannot be moved safely",
            anchor.line,
            ambiguous_lines(found),
            anchor.hash
        )
    };
    (reason, FailureKind::Stale)
}

fn ambiguous_lines(found: &[u32]) -> String {
    let list: Vec<String> = found.iter().map(u32::to_string).collect();
    format!("{} lines ({})", found.len(), list.join(", "))
}

/// A planned change: replace 0-based lines `start..end` of the original
/// with `new` (an insertion when `start == end`).
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub(super) index: usize,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) new: NewLines,
    pub(super) notes: Vec<String>,
    pub(super) what: String,
    /// How it was placed, for the report.
    pub(super) matched: MatchInfo,
}

impl Plan {
    pub(super) fn lines(&self) -> LineRange {
        LineRange::new(self.start as u32 + 1, self.end as u32)
    }

    pub(super) fn overlaps(&self, other: &Plan) -> bool {
        match (self.start == self.end, other.start == other.end) {
            (true, true) => false,
            (true, false) => other.start < self.start && self.start < other.end,
            (false, true) => self.start < other.start && other.start < self.end,
            (false, false) => self.start < other.end && other.start < self.end,
        }
    }
}

pub(super) enum Planned {
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

/// Plan edit `index` against the file as it was.
pub(super) fn plan(snap: &Snapshot<'_>, index: usize, edit: &HashEdit, settings: &Settings) -> Planned {
    let lines = |text: &NewText| {
        let unreadable = |e| EditFailure::new(FailureKind::Malformed, format!("its text cannot be read: {e}"));
        text.lines().map(Cow::into_owned).map_err(unreadable)
    };
    match &edit.op {
        Operation::SetLine { anchor, new_text } => {
            let new = match lines(new_text) {
                Ok(new) => new,
                Err(failure) => return Planned::Failed(failure),
            };
            at_anchor(index, anchor, resolve(snap, anchor, settings, false), new, |line| {
                let what = message!(if new_text.is_empty() { "deleted line " } else { "set line " }, line);
                (line as usize - 1, line as usize, what)
            })
        }
        Operation::InsertAfter { anchor, text } => {
            let new = match lines(text) {
                Ok(new) => new,
                Err(failure) => return Planned::Failed(failure),
            };
            at_anchor(index, anchor, resolve(snap, anchor, settings, true), new, |line| {
                let what = if line == 0 {
                    message!("inserted ", LineCount(text.len()), " at the start")
                } else {
                    message!("inserted ", LineCount(text.len()), " after line ", line)
                };
                (line as usize, line as usize, what)
            })
        }
        Operation::ReplaceLines { start, end, new_text } => match lines(new_text) {
            Ok(new) => replace_lines(snap, settings, index, start, end, new),
            Err(failure) => Planned::Failed(failure),
        },
        Operation::Replace { old_text, new_text } => replace_text(snap, settings, index, old_text, new_text),
    }
}

/// The plan of an edit at one anchor, once resolved: `place` gives, for
/// the line it resolved to, the 0-based lines `start..end` it replaces and
/// what it did.
fn at_anchor(
    index: usize,
    anchor: &Anchor,
    resolved: Resolved,
    new: NewLines,
    place: impl FnOnce(u32) -> (usize, usize, String),
) -> Planned {
    match resolved {
        Resolved::At { line, moved } => {
            let (start, end, what) = place(line);
            Planned::Ok(Plan {
                index,
                start,
                end,
                new,
                notes: if moved { vec![moved_note(anchor, line)] } else { Vec::new() },
                what,
                matched: anchor_match(anchor, moved),
            })
        }
        Resolved::Stale(s) => Planned::Stale(vec![s]),
        Resolved::Bad(f) => Planned::Failed(f),
    }
}

/// `replace_lines` from the `start` anchor's line to the `end` anchor's.
fn replace_lines(
    snap: &Snapshot<'_>,
    settings: &Settings,
    index: usize,
    start: &Anchor,
    end: &Anchor,
    new_text: NewLines,
) -> Planned {
    if start.line > end.line {
        return Planned::Failed(EditFailure::new(
            FailureKind::Malformed,
            format!("start_anchor {start} comes after end_anchor {end}"),
        ));
    }
    let (a, b) = (resolve(snap, start, settings, false), resolve(snap, end, settings, false));
    let (sa, sb) = match (a, b) {
        (Resolved::Bad(f), _) | (_, Resolved::Bad(f)) => return Planned::Failed(f),
        (Resolved::Stale(x), Resolved::Stale(y)) => return Planned::Stale(vec![x, y]),
        (Resolved::Stale(x), _) | (_, Resolved::Stale(x)) => return Planned::Stale(vec![x]),
        (Resolved::At { line: x, moved: mx }, Resolved::At { line: y, moved: my }) => ((x, mx), (y, my)),
    };
    // Each anchor follows its hash (unique in its window) on its own;
    // only anchors that would cross are refused.
    if sa.0 > sb.0 {
        return crossed(snap, settings, start, end, (sa.0, sb.0));
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
        notes,
        matched: if sa.1 { anchor_match(start, true) } else { anchor_match(end, sb.1) },
        what: message!(if new_text.is_empty() { "deleted lines " } else { "replaced lines " }, sa.0, "-", sb.0),
        new: new_text,
    })
}

/// Both anchors of a `replace_lines` fail stale when following their hashes
/// moved them past each other (to the lines `moved_to`).
fn crossed(snap: &Snapshot<'_>, settings: &Settings, start: &Anchor, end: &Anchor, moved_to: (u32, u32)) -> Planned {
    let reason = format!(
        "its anchors were relocated past each other ({start} to line {}, {end} to line {})",
        moved_to.0, moved_to.1
    );
    let w = settings.window;
    let n = snap.len();
    let window = |l: u32| LineRange::new(l.saturating_sub(w).max(1), l.saturating_add(w).min(n.max(1)));
    Planned::Stale(vec![
        Stale {
            anchor: start.clone(),
            reason: reason.clone(),
            window: window(start.line.min(n)),
            kind: FailureKind::Stale,
        },
        Stale { anchor: end.clone(), reason, window: window(end.line.min(n)), kind: FailureKind::Stale },
    ])
}

/// `replace`: the old text found with the matching ladder, planned as the
/// lines it covers and the lines they become.
fn replace_text(snap: &Snapshot<'_>, settings: &Settings, index: usize, old_text: &str, new_text: &str) -> Planned {
    let replaced = match replace_block(snap.content, old_text, new_text, &settings.ladder) {
        Ok(replaced) => replaced,
        Err(failure) => return Planned::Failed(failure),
    };
    let after = Snapshot::new(&replaced.content);
    let (s, e) = (replaced.lines.start as usize, replaced.lines.end as usize);
    let grown = after.lines.len() as i64 - snap.lines.len() as i64;
    let new_end = (e as i64 + grown).max(s as i64 - 1) as usize;
    let new = after.lines[s - 1..new_end].iter().copied().collect();
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
