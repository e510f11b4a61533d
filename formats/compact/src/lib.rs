//! `compact` (aliases `line-range`, `lines`): edits that name a line range
//! and give its replacement.
//!
//! # Grammar
//!
//! Four forms, mixable in one reply:
//!
//! 1. A header `path:START-END` alone on a line (markdown decoration such as
//!    `###`, `**` or backticks is allowed), then a fenced block holding the
//!    replacement. The block may hold blank lines and nested fences.
//! 2. The legacy bare form: the header, then the replacement lines right
//!    below it, ended by the first blank line (or the next header).
//! 3. Edit mode: a fenced block whose info string is `lang:START:END` or
//!    `START:END` (also `lang:START-END`) replaces those lines of the
//!    edit-mode file: the path on a line just before the block, else the
//!    format option `file` (the host passes `--file PATH` as that option).
//! 4. In every form, `START-END` with `END = START - 1` is an *insertion*:
//!    the lines go before line `START` (`1-0` inserts at the top, `N+1-N`
//!    appends to a file of `N` lines). An empty replacement *deletes* the range.
//!
//! Line numbers are 1-based and inclusive, and every edit of a reply refers
//! to the file as the model read it (the original numbering), whatever the
//! order of the edits. A header or info string may end with the version tag
//! the `render` view printed (`src/app.py:10-12 @3fa9c1`).
//!
//! # What runs before anything is written
//!
//! Per file, [`Compact`]'s `apply` checks, in this order:
//!
//! 1. **Version tag.** When an edit carries a tag (or the option `base-hash`
//!    gives one), it must equal the tag of the file's content as given;
//!    otherwise every edit of the file fails `stale`, with a fresh numbered
//!    view of the lines it targeted. (The host then gives the version `read`
//!    recorded with that tag instead, and merges the result into the current
//!    file: see the host's `rebase` module.)
//! 2. **View prefixes.** A replacement whose every line starts with the
//!    view's `N: ` numbers, in sequence, fails `malformed`.
//! 3. **Range.** `1 <= START`, `END <= lines in the file`, `END >= START - 1`
//!    (else `out-of-range`).
//! 4. **Overlap.** Two edits that replace a common line, or an insertion
//!    strictly inside another edit's range, both fail `overlap`, each naming
//!    the other. Insertions at the same point apply in reply order.
//! 5. **Stale-number guard** (unless option `stale-guard=off`), for edits
//!    without a tag:
//!    - *shifted context*: a replacement of two or more lines whose first
//!      and last lines do not both sit at `START` and `END`, but do sit at
//!      `START+d` and `END+d` for exactly one shift `d` with `1 <= |d| <= 8`
//!      (and at least one of them is a distinctive line, not `}` or blank);
//!    - *repeated neighbours*: the replacement begins with the 1-3 lines just
//!      above the range, or ends with the 1-3 lines just below it (one of
//!      them distinctive), so applying it would duplicate them.
//!
//!    Either fails the edit `stale` with the lines it probably meant, and
//!    fails the file's other edits too: the numbers cannot be trusted. The
//!    edit is never moved to the lines it probably meant.
//!
//! Edits that pass are sorted and applied from the bottom up (one forward
//! pass over the original lines, which gives the same result), keeping every
//! untouched line's ending, the file's BOM and its final newline (or lack of
//! one); new lines take the file's dominant line ending. The last edit of a
//! file (in reply order) reports `File 'PATH' has been updated. It now has N
//! lines.`; the others report their old and new ranges.

use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{lines_with_endings, splice_lines, split_bom, strip_ending};
use agent_apply_sdk::view::render_ranges;
use serde::{Deserialize, Serialize};

pub mod parse;

#[derive(Default)]
pub struct Compact;

/// The private payload of one edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeEdit {
    /// 1-based number of the edit in the reply.
    pub number: usize,
    /// Reply line where the edit starts (its header or opening fence).
    pub reply_line: u32,
    /// First line replaced, 1-based.
    pub start: u32,
    /// Last line replaced; `start - 1` for an insertion before `start`.
    pub end: u32,
    /// The replacement lines, without endings.
    pub lines: Vec<String>,
    /// The version tag the edit was written against, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl RangeEdit {
    fn is_insertion(&self) -> bool {
        self.end < self.start
    }

    fn range_text(&self) -> String {
        format!("{}-{}", self.start, self.end)
    }

    fn label(&self) -> String {
        format!("edit {} (reply line {}, lines {})", self.number, self.reply_line, self.range_text())
    }
}

const INSTRUCTIONS: &str = "\
To change a file, name a range of its lines and give the lines that replace them. Line \
numbers are the ones shown in the numbered view of the file (`N: text`): 1-based, and \
both ends included.

Write the header `path:START-END` alone on a line, then the new lines in a fenced code \
block:

src/app.py:12-14
```python
new line 12
new line 13
```

- The block replaces lines START to END. It may have more or fewer lines than the range.
- To insert without replacing, use END = START-1: `src/app.py:5-4` inserts before line 5, \
`src/app.py:1-0` at the top, and `src/app.py:41-40` after the last line of a 40-line file.
- To delete lines, send an empty block.
- Send several edits for one file as separate headers. All numbers refer to the file as \
you read it, before any of your edits: do not adjust them for earlier edits. Ranges must \
not overlap.
- Copy the new lines without the `N: ` prefixes of the view.
- If the view showed a version tag (`@3fa9c1` in its first line), put it after the range: \
`src/app.py:12-14 @3fa9c1`. If the file changed since you read it, your edits are applied to the \
version you read and merged into the file; where the change meets your edit, it is refused with \
the lines as they are now.
- When only one file is being edited, a block may instead carry the range in its info \
string: ```python:12:14.
- If you are not sure of the numbers, read the file again rather than guess: an edit \
whose lines seem to have moved is refused.";

const EXAMPLE_REPLY: &str = "\
I'll make `greet` take a name, and call it with one.

src/greet.py:1-2
```python
def greet(name):
    print(f\"Hello, {name}!\")
```

src/greet.py:5-5
```python
greet(\"world\")
```
";

const EXAMPLE_FILE: &str = "def greet():\n    print(\"Hello!\")\n\n\ngreet()\n";

impl Format for Compact {
    type Op = RangeEdit;

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "compact".into(),
            aliases: vec!["line-range".into(), "lines".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "Line-range edits: `path:START-END` then the replacement lines, in the numbering the model read"
                .into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/greet.py", EXAMPLE_FILE)],
            options: vec![
                OptionDoc {
                    key: "file".into(),
                    default_value: String::new(),
                    description: "the edit-mode file: where ```lang:START:END blocks apply when no path line \
                                  precedes them (set by --file)"
                        .into(),
                },
                OptionDoc {
                    key: "base-hash".into(),
                    default_value: String::new(),
                    description: "the version tag of the file the model read (from `read`); edits of a file \
                                  whose content no longer has it are refused as stale"
                        .into(),
                },
                OptionDoc {
                    key: "stale-guard".into(),
                    default_value: "on".into(),
                    description: "refuse edits whose context lines sit a few lines away from the stated range \
                                  or repeat the lines around it"
                        .into(),
                },
            ],
            detect_hints: vec![":".into()],
        }
    }

    fn detect(&self, reply: &str) -> f32 {
        let fences = agent_apply_sdk::fence::fenced_blocks(reply);
        // A header deep inside a fenced block is file content (a whole file that
        // mentions `path:N-M`), not an edit; the first body line still counts.
        let inside = |at: usize| fences.iter().any(|b| at > b.body_start && at < b.body_end);
        let mut at = 0;
        let mut headers = 0;
        for line in lines_with_endings(reply) {
            if !inside(at) && matches!(parse::header(line), Some(Ok(_))) {
                headers += 1;
            }
            at += line.len();
        }
        let blocks = fences.iter().filter(|b| matches!(parse::info_range(b.info), Some(Ok(_)))).count();
        if headers + blocks > 0 { 0.8 } else { 0.0 }
    }

    fn parse(&self, reply: &str, options: Options<'_>) -> Parsed<RangeEdit> {
        parse::parse(reply, options.get("file").map(str::trim).filter(|f| !f.is_empty()))
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<RangeEdit>,
        options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        Format::apply(self, workspace, std::slice::from_ref(edit), options).pop().expect("one outcome per edit")
    }

    fn apply(
        &self,
        workspace: &mut Workspace,
        edits: &[ParsedEdit<RangeEdit>],
        options: Options<'_>,
    ) -> Vec<Result<Applied, EditFailure>> {
        let settings = match Settings::read(options) {
            Ok(settings) => settings,
            Err(failure) => return edits.iter().map(|_| Err(failure.clone())).collect(),
        };
        agent_apply_sdk::apply_by_file(edits, |path, ops| {
            let Some(content) = workspace.read(path) else {
                let missing = |(i, op): (usize, &RangeEdit)| {
                    let failure = EditFailure::new(
                        FailureKind::NotFound,
                        format!("{} on {path}: {path} does not exist", op.label()),
                    )
                    .with_hint("compact edits change existing files; to create one, use the `whole` format");
                    (i, Err(failure))
                };
                return ops.into_iter().map(missing).collect();
            };
            let (new_content, outcomes) = apply_file(path, content, &ops, &settings);
            for (i, outcome) in &outcomes {
                if outcome.is_ok() {
                    workspace.note_match_of(*i, MatchInfo::at("line-numbers"));
                }
            }
            if let Some(new_content) = new_content {
                workspace.write(path, new_content);
            }
            outcomes
        })
    }

    /// The numbered view: a first line `PATH @TAG (N lines)`, then each line
    /// as `N: text` (no padding), with a `...` line for every gap. The tag is
    /// what edits may quote to prove they were written against this content.
    fn render(&self, file: &File, ranges: &[LineRange], _options: Options<'_>) -> Result<String, String> {
        Ok(numbered_view(&file.path, &file.content, ranges))
    }

    /// Leftover compact headers (`path:START-END` alone on a line).
    fn lint(&self, file: &File) -> Vec<Diagnostic> {
        let (_, body) = split_bom(&file.content);
        lines_with_endings(body)
            .enumerate()
            .filter(|(_, line)| matches!(parse::header(line), Some(Ok(_))))
            .map(|(index, line)| {
                let number = index as u32 + 1;
                Diagnostic::in_file(
                    format!("leftover compact edit header: `{}`", strip_ending(line).trim()),
                    &file.path,
                    LineRange::new(number, number),
                )
                .with_hint("a line-range edit was pasted into the file instead of applied; remove the header line")
            })
            .collect()
    }
}

/// Format options, read once per `apply`.
#[derive(Debug, Clone, Default)]
struct Settings {
    edit_file: Option<String>,
    base_hash: Option<String>,
    guard: bool,
}

impl Settings {
    fn read(options: Options<'_>) -> Result<Self, EditFailure> {
        let guard = match options.get("stale-guard").map(|v| v.trim().to_ascii_lowercase()) {
            None => true,
            Some(v) if ["", "on", "true", "yes", "1"].contains(&v.as_str()) => true,
            Some(v) if ["off", "false", "no", "0"].contains(&v.as_str()) => false,
            Some(v) => {
                return Err(EditFailure::new(
                    FailureKind::Malformed,
                    format!("option `stale-guard` has the invalid value {v:?} (expected on or off)"),
                ));
            }
        };
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

pub use agent_apply_sdk::view::version_tag;

/// `PATH @TAG (N lines)` and the numbered lines of `ranges` (all when empty).
pub fn numbered_view(path: &str, content: &str, ranges: &[LineRange]) -> String {
    let mut out = agent_apply_sdk::view::view_header(path, content);
    out.push_str(&render_ranges(content, ranges, |n, line| format!("{n}: {line}")));
    out
}

fn same(a: &str, b: &str) -> bool {
    a.trim_end() == b.trim_end()
}

/// A line that means something on its own: not blank, not a lone brace or
/// keyword such as `}` or `end`.
fn distinctive(line: &str) -> bool {
    let t = line.trim();
    t.chars().count() >= 6 && t.chars().filter(|c| c.is_alphanumeric()).count() >= 3
}

fn plural(n: usize) -> String {
    if n == 1 { "1 line".into() } else { format!("{n} lines") }
}

/// Apply the edits of one file. Returns the new content (when any edit
/// applied) and an outcome per edit index.
#[allow(clippy::type_complexity)]
fn apply_file(
    path: &str,
    content: &str,
    ops: &[(usize, &RangeEdit)],
    settings: &Settings,
) -> (Option<String>, Vec<(usize, Result<Applied, EditFailure>)>) {
    let (_, body) = split_bom(content);
    let lines: Vec<&str> = lines_with_endings(body).map(strip_ending).collect();
    let n = lines.len() as u32;
    let current_tag = version_tag(content);
    let view = |from: u32, to: u32| numbered_view(path, content, &[LineRange::new(from.max(1), to.min(n))]);
    let mut failed: Vec<(usize, EditFailure)> = Vec::new();

    // 1. Version tags.
    let stale_tag = ops
        .iter()
        .find_map(|(_, op)| settings.tag_for(path, op).filter(|tag| !agent_apply_sdk::view::tag_matches(tag, content)));
    if let Some(tag) = stale_tag {
        let outcomes = ops
            .iter()
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
                    view(lo, hi)
                ));
                (i, Err(failure))
            })
            .collect();
        return (None, outcomes);
    }

    // 2. View prefixes copied into the replacement; 3. ranges.
    for &(i, op) in ops {
        if copied_prefixes(&op.lines) {
            failed.push((
                i,
                EditFailure::new(
                    FailureKind::Malformed,
                    format!("{} on {path}: the replacement lines still carry the view's `N: ` numbers", op.label()),
                )
                .with_hint("send the new lines as they should appear in the file, without the line numbers"),
            ));
            continue;
        }
        if op.start == 0 || op.end > n || op.end + 1 < op.start || op.start > n + 1 {
            let wanted = if op.is_insertion() {
                format!("inserts before line {}", op.start)
            } else {
                format!("replaces lines {}", op.range_text())
            };
            failed.push((
                i,
                EditFailure::new(
                    FailureKind::OutOfRange,
                    format!("{} is out of range: it {wanted}, but {path} has only {}", op.label(), plural(n as usize)),
                )
                .with_hint(format!(
                    "ranges go from 1 to {n}; to add lines at the end, insert with {}-{n}. The file ends:\n{}",
                    n + 1,
                    view(n.saturating_sub(2), n)
                ))
                .at(LineRange::new(op.start, op.end)),
            ));
        }
    }

    // 4. Overlaps among the edits still standing. Only edits whose spans
    // touch a neighbour's (in line order) can overlap anything; the others
    // are not searched, so thousands of edits of one file stay cheap.
    let failed_now: std::collections::HashSet<usize> = failed.iter().map(|(i, _)| *i).collect();
    let standing: Vec<(usize, &RangeEdit)> = ops.iter().copied().filter(|(i, _)| !failed_now.contains(i)).collect();
    let near = touching_neighbours(&standing);
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
    let overlapped: std::collections::HashSet<usize> = overlapping.iter().map(|(i, _)| *i).collect();
    failed.extend(overlapping);

    // 5. The stale-number guard.
    let mut standing: Vec<(usize, &RangeEdit)> =
        standing.into_iter().filter(|(i, _)| !overlapped.contains(i)).collect();
    if settings.guard {
        let evidence = standing.iter().find_map(|&(i, op)| {
            if settings.tag_for(path, op).is_some() {
                return None;
            }
            suspicious(path, &lines, op, &view).map(|failure| (i, op, failure))
        });
        if let Some((culprit, culprit_op, failure)) = evidence {
            for &(i, op) in &standing {
                let failure = if i == culprit {
                    failure.clone()
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
                failed.push((i, failure));
            }
            standing.clear();
        }
    }

    // A replacement that leaves code out (a placeholder the file does not
    // have) is refused: the SDK's rule for every format.
    standing.retain(|&(i, op)| {
        let old = lines.get((op.start - 1) as usize..op.end as usize).unwrap_or_default();
        let new: Vec<&str> = op.lines.iter().map(String::as_str).collect();
        let Some(failure) = agent_apply_sdk::matching::elided_replacement(old, &new, &lines) else { return true };
        failed.push((i, EditFailure { message: format!("{} on {path}: {}", op.label(), failure.message), ..failure }));
        false
    });

    // 6. Apply, one forward pass over the original lines (the same as
    // applying the sorted edits from the bottom up).
    standing.sort_by_key(|(i, op)| (op.start, op.end, *i));
    let mut outcomes: Vec<(usize, Result<Applied, EditFailure>)> =
        failed.into_iter().map(|(i, failure)| (i, Err(failure))).collect();
    if standing.is_empty() {
        return (None, outcomes);
    }
    let eol = TextStyle::detect(content).eol.as_str();
    let final_newline = body.is_empty() || body.ends_with('\n');
    let mut shift: i64 = 0;
    let mut messages = Vec::new();
    for &(i, op) in &standing {
        let removed = (op.end + 1 - op.start) as usize;
        let added = op.lines.len();
        let new_start = (op.start as i64 + shift) as u32;
        let now = match added {
            0 => String::new(),
            1 => format!(", now line {new_start}"),
            _ => format!(", now lines {new_start}-{}", new_start as usize + added - 1),
        };
        let message = if op.is_insertion() {
            format!("inserted {} before line {} of {path}{now}", plural(added), op.start)
        } else if added == 0 {
            format!("deleted lines {} of {path}", op.range_text())
        } else {
            format!("replaced lines {} of {path} ({}) with {}{now}", op.range_text(), plural(removed), plural(added))
        };
        messages.push((i, message, LineRange::new(op.start, op.end)));
        shift += added as i64 - removed as i64;
    }
    let replaced = standing.iter().map(|(_, op)| ((op.start - 1) as usize..op.end as usize, op.lines.as_slice()));
    let new_content = splice_lines(content, replaced, eol, final_newline);
    let total = (lines.len() as i64 + shift) as usize;
    let last_index = standing.iter().map(|(i, _)| *i).max().expect("standing is not empty");
    for (i, message, lines) in messages {
        let message = if i == last_index {
            format!("File '{path}' has been updated. It now has {total} lines.")
        } else {
            message
        };
        outcomes.push((i, Ok(Applied { message, lines: Some(lines), applied_path: None })));
    }
    (Some(new_content), outcomes)
}

/// Whether two edits of one file touch a common line (or one inserts inside
/// the other's range).
/// The edits whose span (`start..=end`, an insertion's is its line) meets
/// another's: a superset of those that [`overlaps`] another. In line order,
/// a span that meets any other meets its predecessor's furthest end or its
/// successor's start.
fn touching_neighbours(ops: &[(usize, &RangeEdit)]) -> std::collections::HashSet<usize> {
    let mut sorted: Vec<(u32, u32, usize)> = ops.iter().map(|&(i, op)| (op.start, op.end.max(op.start), i)).collect();
    sorted.sort_unstable();
    let mut near = std::collections::HashSet::new();
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

fn overlaps(a: &RangeEdit, b: &RangeEdit) -> bool {
    match (a.is_insertion(), b.is_insertion()) {
        (true, true) => false,
        (true, false) => b.start < a.start && a.start <= b.end,
        (false, true) => a.start < b.start && b.start <= a.end,
        (false, false) => a.start.max(b.start) <= a.end.min(b.end),
    }
}

/// Every non-blank replacement line starts with `N: `, numbers in sequence.
fn copied_prefixes(lines: &[String]) -> bool {
    let numbers: Vec<Option<u64>> = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split_once(": ")
                .and_then(|(n, _)| n.trim_start().parse().ok())
                .or_else(|| l.trim_end().strip_suffix(':').and_then(|n| n.trim_start().parse().ok()))
        })
        .collect();
    numbers.len() >= 2 && numbers.iter().all(Option::is_some) && numbers.windows(2).all(|w| w[0] < w[1])
}

/// Evidence that an edit's numbers are off (see the crate docs).
fn suspicious(path: &str, lines: &[&str], op: &RangeEdit, view: &dyn Fn(u32, u32) -> String) -> Option<EditFailure> {
    const WINDOW: i64 = 8;
    let r = &op.lines;
    let k = r.len();
    if k == 0 {
        return None;
    }
    let at =
        |line: i64| -> Option<&str> { (line >= 1 && line as usize <= lines.len()).then(|| lines[line as usize - 1]) };
    let (s, e) = (op.start as i64, op.end as i64);
    // Shifted context.
    if !op.is_insertion() && k >= 2 && (distinctive(&r[0]) || distinctive(&r[k - 1])) {
        let fits = |d: i64| at(s + d).is_some_and(|l| same(l, &r[0])) && at(e + d).is_some_and(|l| same(l, &r[k - 1]));
        if !fits(0) {
            let shifts: Vec<i64> = (-WINDOW..=WINDOW).filter(|&d| d != 0 && fits(d)).collect();
            if let [d] = shifts[..] {
                let (ns, ne) = (s + d, e + d);
                return Some(
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
                        view((s.min(ns) - 2).max(1) as u32, (e.max(ne) + 2) as u32)
                    ))
                    .at(LineRange::new(op.start, op.end)),
                );
            }
        }
    }
    // Repeated neighbours.
    for m in (1..=3usize).rev() {
        if k < m {
            continue;
        }
        let above: Option<Vec<&str>> = (0..m as i64).map(|j| at(s - m as i64 + j)).collect();
        if let Some(above) = above
            && above.iter().zip(&r[..m]).all(|(a, b)| same(a, b))
            && above.iter().any(|l| distinctive(l))
            && !at(s).is_some_and(|l| same(l, &r[0]) && !op.is_insertion())
        {
            let first = s - m as i64;
            return Some(repeated(path, op, first, s - 1, "begins", "above", first, e, view));
        }
        let below: Option<Vec<&str>> = (1..=m as i64).map(|j| at(e + j)).collect();
        if let Some(below) = below
            && below.iter().zip(&r[k - m..]).all(|(a, b)| same(a, b))
            && below.iter().any(|l| distinctive(l))
            && !at(e).is_some_and(|l| same(l, &r[k - 1]) && !op.is_insertion())
        {
            let last = e + m as i64;
            return Some(repeated(path, op, e + 1, last, "ends", "below", s, last, view));
        }
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn repeated(
    path: &str,
    op: &RangeEdit,
    from: i64,
    to: i64,
    verb: &str,
    side: &str,
    widened_start: i64,
    widened_end: i64,
    view: &dyn Fn(u32, u32) -> String,
) -> EditFailure {
    let which = if from == to { format!("line {from}") } else { format!("lines {from}-{to}") };
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
        view((op.start as i64 - 4).max(1) as u32, (op.end as i64 + 4) as u32)
    ))
    .at(LineRange::new(op.start, op.end))
}

agent_apply_sdk::export_format!(Compact);

#[cfg(test)]
mod tests;
