//! Applying anchored edits: every anchor is checked (and, when it drifted a
//! little, relocated) against the file as it is before any change; edits
//! are de-duplicated, checked for overlaps, and spliced in one pass.

// Keyed by edit index and line number: FxHash, not SipHash (a reply of
// 20,000 edits hashed these keys a few hundred thousand times).
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use agent_apply_sdk::matching::LadderOptions;
use agent_apply_sdk::message;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::offset_in;
use agent_apply_sdk::view::{merge_ranges, render_ranges};

use crate::{Anchor, HashEdit, Operation, Settings};

mod plan;

use plan::{Plan, Planned, Snapshot, Stale, plan};

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
    let mut file = FileEdits {
        path,
        snap: Snapshot::new(content),
        settings,
        by_index: edits.iter().map(|&(i, e)| (i, e)).collect(),
        // Sized once, as the plans are: a file of a thousand edits grew each
        // by doubling, copied over in the plugin's memory.
        results: HashMap::with_capacity_and_hasher(edits.len(), Default::default()),
    };
    let (plans, stale) = file.plan_all(edits);
    if !stale.is_empty() {
        file.fail_stale(&stale);
    }
    let unique = file.apply_duplicates_once(plans);
    let keep = file.drop_overlapping(unique);
    let (changes, matches) = file.report_applied(keep);
    let new_content = (!changes.is_empty()).then(|| splice(&file.snap, changes));
    let mut out: Vec<EditResult> = file.results.into_iter().collect();
    out.sort_by_key(|(i, _)| *i);
    (out, new_content, matches)
}

/// The edits of one file on their way through the checks: the file as it
/// was, the edits by index, and the outcomes decided so far.
struct FileEdits<'a> {
    path: &'a str,
    snap: Snapshot<'a>,
    settings: &'a Settings,
    by_index: HashMap<usize, &'a HashEdit>,
    results: HashMap<usize, Result<Applied, EditFailure>>,
}

impl FileEdits<'_> {
    fn label(&self, i: usize) -> &str {
        self.by_index.get(&i).map_or("", |e| e.label.as_str())
    }

    /// Fail edit `index` with `failure`, its message led by the edit's label.
    fn fail(&mut self, index: usize, failure: EditFailure) {
        let message = message!(self.label(index), " on ", self.path, ": ", failure.message);
        self.results.insert(index, Err(EditFailure { message, ..failure }));
    }

    /// Plan every edit; those that fail outright get their outcome now.
    /// Returns the plans and the stale anchors of each edit that has some.
    fn plan_all(&mut self, edits: &[(usize, &HashEdit)]) -> (Vec<Plan>, Vec<(usize, Vec<Stale>)>) {
        let mut plans = Vec::with_capacity(edits.len());
        let mut stale = Vec::new();
        for &(index, edit) in edits {
            match plan(&self.snap, index, edit, self.settings) {
                Planned::Ok(p) => match elided(&self.snap, &p) {
                    Some(failure) => self.fail(index, failure),
                    None => plans.push(p),
                },
                Planned::Stale(s) => stale.push((index, s)),
                Planned::Failed(failure) => self.fail(index, failure),
            }
        }
        (plans, stale)
    }

    /// Stale anchors: one merged set of ranges and one fresh view for the
    /// file, in the first stale edit's hint; the others point to it.
    fn fail_stale(&mut self, stale: &[(usize, Vec<Stale>)]) {
        let path = self.path;
        let windows: Vec<LineRange> = stale.iter().flat_map(|(_, s)| s.iter().map(|s| s.window)).collect();
        let merged = merge_ranges(&windows, self.snap.len());
        let view = self.fresh_view(stale, &merged);
        let ranges = ranges_text(&merged);
        let anchors: Vec<String> = stale
            .iter()
            .flat_map(|(i, s)| {
                let label = self.label(*i);
                s.iter()
                    .map(move |s| format!("{} ({})", s.anchor, label.split(' ').take(2).collect::<Vec<_>>().join(" ")))
            })
            .collect();
        let first = stale[0].0;
        for (index, items) in stale {
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
                        self.label(*index)
                    ),
                )
                .with_hint(format!("Stale anchors in {path}: {}. Affected lines: {ranges}.\n{view}", anchors.join(", ")))
            } else {
                EditFailure::new(
                    kind,
                    format!(
                        "{} on {path}: {reasons}. Fresh lines {ranges} of {path} are in the hint of {}",
                        self.label(*index),
                        self.label(first)
                    ),
                )
            };
            self.results.insert(*index, Err(EditFailure { lines: own, ..failure }));
        }
    }

    /// The `merged` lines as the view shows them, the lines the stale
    /// anchors named marked `>>>`.
    fn fresh_view(&self, stale: &[(usize, Vec<Stale>)], merged: &[LineRange]) -> String {
        let marked: HashSet<u32> = stale.iter().flat_map(|(_, s)| s.iter().map(|s| s.anchor.line)).collect();
        let len = self.settings.hash_length;
        render_ranges(self.snap.content, merged, |n, line| {
            let tag = crate::hash::view_line(n, line, len);
            if marked.contains(&n) { format!(">>> {tag}") } else { tag }
        })
    }

    /// Identical edits apply once: the repeats succeed, saying so.
    fn apply_duplicates_once(&mut self, plans: Vec<Plan>) -> Vec<Plan> {
        // Where each range's distinct edits sit in `unique`: the new lines
        // are compared only between edits of the same range, not hashed.
        let mut seen: HashMap<(usize, usize), Vec<usize>> = HashMap::default();
        let mut unique: Vec<Plan> = Vec::new();
        for p in plans {
            let same = seen.get(&(p.start, p.end)).and_then(|at| at.iter().find(|&&u| unique[u].new == p.new));
            match same.map(|&u| unique[u].index) {
                Some(first) => {
                    let message = format!(
                        "{} on {}: the same as {}, applied once",
                        self.label(p.index),
                        self.path,
                        self.label(first)
                    );
                    self.results.insert(p.index, Ok(Applied { message, lines: Some(p.lines()), applied_path: None }));
                }
                None => {
                    seen.entry((p.start, p.end)).or_default().push(unique.len());
                    unique.push(p);
                }
            }
        }
        unique
    }

    /// Two edits touching the same line both fail; the others are kept.
    fn drop_overlapping(&mut self, mut unique: Vec<Plan>) -> Vec<Plan> {
        let overlapping = overlapping_pairs(&mut unique);
        let describe =
            |p: &Plan| if p.start == p.end { format!("inserts after line {}", p.start) } else { range_text(p.lines()) };
        let mut keep = Vec::new();
        for p in unique {
            let Some(&other) = overlapping.get(&p.index) else {
                keep.push(p);
                continue;
            };
            let failure = EditFailure::new(
                FailureKind::Overlap,
                format!(
                    "{} on {} ({}) overlaps {}: two edits may not touch the same line",
                    self.label(p.index),
                    self.path,
                    describe(&p),
                    self.label(other)
                ),
            )
            .with_hint("merge them into one replace_lines edit over the whole span")
            .at(p.lines());
            self.results.insert(p.index, Err(failure));
        }
        keep
    }

    /// Every kept edit succeeds; no-ops are reported, not applied. Returns
    /// the plans that change the file and how each kept edit was placed.
    fn report_applied(&mut self, keep: Vec<Plan>) -> (Vec<Plan>, Vec<(usize, MatchInfo)>) {
        let mut changes = Vec::new();
        let mut matches = Vec::new();
        for p in keep {
            let old = &self.snap.lines[p.start..p.end];
            let same = old.len() == p.new.len() && old.iter().copied().eq(p.new.iter());
            let message = self.applied_message(&p, same);
            matches.push((p.index, p.matched.clone()));
            self.results.insert(p.index, Ok(Applied { message, lines: Some(p.lines()), applied_path: None }));
            if !same {
                changes.push(p);
            }
        }
        (changes, matches)
    }

    /// What an applied edit did (`same`: nothing, its lines already read
    /// so), with its notes.
    fn applied_message(&self, p: &Plan, same: bool) -> String {
        let (label, path) = (self.label(p.index), self.path);
        let mut message = if same {
            format!("{label} on {path}: no change ({} already reads so)", range_or_gap(p))
        } else {
            message!(label, " on ", path, ": ", p.what)
        };
        for note in &p.notes {
            message.push_str("; ");
            message.push_str(note);
        }
        if self.by_index.get(&p.index).is_some_and(|e| e.stripped_prefixes) {
            message.push_str("; copied `N:hh|` prefixes were removed from its text");
        }
        message
    }
}

/// Sorts `plans` by position; each edit that overlaps another, with the
/// first one it was found to overlap. One pass: each plan is compared with
/// the replacement before it that reaches furthest down.
fn overlapping_pairs(plans: &mut [Plan]) -> HashMap<usize, usize> {
    plans.sort_by_key(|p| (p.start, p.start != p.end, p.index));
    let mut overlapping: HashMap<usize, usize> = HashMap::default();
    let mut cover: Option<usize> = None;
    for i in 0..plans.len() {
        if let Some(c) = cover
            && plans[i].overlaps(&plans[c])
        {
            overlapping.entry(plans[i].index).or_insert(plans[c].index);
            overlapping.entry(plans[c].index).or_insert(plans[i].index);
        }
        if plans[i].start != plans[i].end && cover.is_none_or(|c| plans[c].end < plans[i].end) {
            cover = Some(i);
        }
    }
    overlapping
}

/// New lines that leave code out (a placeholder the file does not have):
/// the SDK's rule for every format.
fn elided(snap: &Snapshot<'_>, p: &Plan) -> Option<EditFailure> {
    let new: Vec<&str> = p.new.iter().collect();
    agent_apply_sdk::matching::elided_replacement(&snap.lines[p.start..p.end], &new, snap.lines.iter().copied())
}

fn range_or_gap(p: &Plan) -> String {
    if p.start == p.end { "nothing to insert".into() } else { range_text(p.lines()) }
}

fn range_text(r: LineRange) -> String {
    LineSpan(r.start, r.end).to_string()
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
/// endings), planned lines written in the file's style. A stretch of kept
/// lines is copied whole, not line by line: a 12,000-line file with a few
/// hundred edits is mostly such stretches.
fn splice(snap: &Snapshot<'_>, mut plans: Vec<Plan>) -> String {
    let content = snap.content;
    let style = TextStyle::detect(content);
    plans.sort_by_key(|p| (p.start, p.start != p.end, p.index));
    // In order: stretches of kept lines and planned lines, none empty.
    let mut pieces: Vec<Stretch<'_>> = Vec::with_capacity(2 * plans.len() + 1);
    let mut next = 0;
    for p in &plans {
        if next < p.start {
            pieces.push(Stretch::Kept(next..p.start));
        }
        next = next.max(p.start);
        if !p.new.is_empty() {
            pieces.push(Stretch::New(&p.new));
        }
        next = next.max(p.end);
    }
    if next < snap.lines.len() {
        pieces.push(Stretch::Kept(next..snap.lines.len()));
    }
    // Sized once, for every new line and none removed: edits that add lines
    // outgrew the content's size, and the text grown by doubling was copied
    // over in the plugin's memory.
    let added: usize = plans.iter().map(|p| p.new.text_len() + p.new.len() * style.eol.as_str().len()).sum();
    let mut out = Out { text: String::with_capacity(content.len() + added + 64), style };
    if style.bom {
        out.text.push(agent_apply_sdk::text::BOM);
    }
    let count = pieces.len();
    for (i, piece) in pieces.into_iter().enumerate() {
        let last = i + 1 == count;
        match piece {
            Stretch::Kept(lines) => {
                // Every kept line has its own ending but perhaps the file's
                // last, and the new content's last line may lose its ending:
                // those two go line by line.
                let whole = if last || snap.endings[lines.end - 1].is_empty() { lines.end - 1 } else { lines.end };
                if lines.start < whole {
                    let from = offset_in(content, snap.lines[lines.start]);
                    let ending = snap.endings[whole - 1];
                    out.text.push_str(&content[from..offset_in(content, ending) + ending.len()]);
                }
                for i in whole..lines.end {
                    out.line(snap.lines[i], Some(snap.endings[i]), last && i + 1 == lines.end);
                }
            }
            Stretch::New(new) => {
                let n = new.len();
                for (k, line) in new.iter().enumerate() {
                    out.line(line, None, last && k + 1 == n);
                }
            }
        }
    }
    out.text
}

/// A piece of the new content: 0-based lines of the file as they are, or
/// an edit's new lines.
enum Stretch<'p> {
    Kept(std::ops::Range<usize>),
    New(&'p crate::NewLines),
}

/// The new content as it is written.
struct Out {
    text: String,
    style: TextStyle,
}

impl Out {
    /// One line: its own ending (`None` for a written line, or an empty
    /// one) or the file's, and none after the content's `last` line in a
    /// file that does not end with one.
    fn line(&mut self, line: &str, ending: Option<&str>, last: bool) {
        self.text.push_str(line);
        if last && !self.style.final_newline {
            return;
        }
        let ending = match ending {
            Some(e) if !e.is_empty() => e,
            _ => self.style.eol.as_str(),
        };
        // Pushed, not copied: in a component each copy is a call out of
        // the compiled code, and most endings are one byte.
        if ending.len() == 1 { self.text.push(char::from(ending.as_bytes()[0])) } else { self.text.push_str(ending) }
    }
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

#[cfg(test)]
mod splice_tests {
    use super::*;

    /// The new content line by line: each kept line with its own ending,
    /// each planned line with the file's, none after the last line of a
    /// file that had none. What `splice` writes, stretch by stretch.
    fn line_by_line(snap: &Snapshot<'_>, mut plans: Vec<Plan>) -> String {
        let style = TextStyle::detect(snap.content);
        plans.sort_by_key(|p| (p.start, p.start != p.end, p.index));
        let mut out: Vec<(&str, Option<&str>)> = Vec::new();
        let mut next = 0;
        for p in &plans {
            out.extend((next..p.start).map(|i| (snap.lines[i], Some(snap.endings[i]))));
            next = next.max(p.start);
            out.extend(p.new.iter().map(|line| (line, None)));
            next = next.max(p.end);
        }
        out.extend((next..snap.lines.len()).map(|i| (snap.lines[i], Some(snap.endings[i]))));
        let mut text = String::new();
        if style.bom {
            text.push(agent_apply_sdk::text::BOM);
        }
        let count = out.len();
        for (i, (line, ending)) in out.into_iter().enumerate() {
            text.push_str(line);
            if i + 1 == count && !style.final_newline {
                continue;
            }
            match ending {
                Some(e) if !e.is_empty() => text.push_str(e),
                _ => text.push_str(style.eol.as_str()),
            }
        }
        text
    }

    fn plan(index: usize, start: usize, end: usize, new: &[String]) -> Plan {
        Plan {
            index,
            start,
            end,
            new: new.iter().map(String::as_str).collect(),
            notes: Vec::new(),
            what: String::new(),
            matched: MatchInfo::at("anchor"),
        }
    }

    proptest::proptest! {
        /// Any file (endings mixed, a BOM, no final newline) and any set of
        /// edits that do not overlap (insertions, deletions at either end).
        #[test]
        fn stretches_copied_whole_give_the_line_by_line_content(
            bom in proptest::bool::ANY,
            lines in proptest::collection::vec(("[ab]{0,3}", proptest::sample::select(vec!["\n", "\r\n"])), 0..12),
            unterminated in proptest::option::of("[ab]{1,3}"),
            cuts in proptest::collection::vec((0usize..14, 0usize..3, proptest::collection::vec("[xy]{0,2}", 0..3)), 0..5),
        ) {
            let mut content = if bom { "\u{feff}".to_string() } else { String::new() };
            for (line, ending) in &lines {
                content.push_str(line);
                content.push_str(ending);
            }
            content.extend(unterminated);
            let snap = Snapshot::new(&content);
            let n = snap.lines.len();
            // Edits in file order, each starting at or after the last one's end.
            let mut plans = Vec::new();
            let mut at = 0;
            for (index, (skip, len, new)) in cuts.iter().enumerate() {
                let start = (at + skip).min(n);
                let end = (start + len).min(n);
                plans.push(plan(index, start, end, new));
                at = end;
            }
            proptest::prop_assert_eq!(splice(&snap, plans.clone()), line_by_line(&snap, plans));
        }
    }
}
