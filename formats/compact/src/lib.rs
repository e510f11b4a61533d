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

use agent_apply_sdk::fence::Fence;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{lines_with_endings, lines_without_endings, split_bom, strip_ending};
use agent_apply_sdk::view::render_ranges;
use serde::{Deserialize, Serialize};

mod apply;
pub mod parse;

use apply::{Settings, apply_file};

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
    /// The replacement lines, each with its ending as written: one text
    /// (a slice of the reply) rather than a vector of lines, which for a
    /// reply of thousands of edits was megabytes of the plugin's memory.
    pub body: ReplyText,
    /// The version tag the edit was written against, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl RangeEdit {
    /// The replacement lines, without endings.
    fn lines(&self) -> Vec<&str> {
        lines_without_endings(&self.body)
    }

    fn is_insertion(&self) -> bool {
        self.end < self.start
    }

    /// `start-end` as the edit wrote it (both numbers, even for one line),
    /// written straight into a message.
    fn range_text(&self) -> impl std::fmt::Display {
        let (start, end) = (self.start, self.end);
        std::fmt::from_fn(move |f| write!(f, "{start}-{end}"))
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

    /// Its edits' summaries are for the host alone: a large reply's are not kept.
    fn apply_reads_summaries(&self) -> bool {
        false
    }

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
            // A header or info-string range has a digit right after its `:`
            // (`src/a.py:12-15`, `py:12:15`): the host skips `detect` for a
            // reply with no such pair.
            detect_hints: (0..10).map(|digit| format!(":{digit}")).collect(),
        }
    }

    fn detect(&self, reply: &str) -> f32 {
        let fences = agent_apply_sdk::fence::fenced_blocks(reply);
        let headers = headers_outside_bodies(reply, &fences);
        let blocks = fences.iter().filter(|b| matches!(parse::info_range(b.info), Some(Ok(_)))).count();
        if headers + blocks > 0 { 0.8 } else { 0.0 }
    }

    fn parse(&self, reply: &str, options: Options<'_>) -> Parsed<RangeEdit> {
        let edit_file = options.get("file").map(str::trim).filter(|f| !f.is_empty());
        parse::parse(reply, edit_file, options.shows_summaries())
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

pub use agent_apply_sdk::view::version_tag;

/// `PATH @TAG (N lines)` and the numbered lines of `ranges` (all when empty).
pub fn numbered_view(path: &str, content: &str, ranges: &[LineRange]) -> String {
    let mut out = agent_apply_sdk::view::view_header(path, content);
    out.push_str(&render_ranges(content, ranges, |n, line| format!("{n}: {line}")));
    out
}

/// How many lines of `reply` are headers, not counting those deep inside
/// a fenced block: there a header is file content (a whole file that
/// mentions `path:N-M`), not an edit, though a body's first line still
/// counts. Only the lines between bodies and each body's first are read.
fn headers_outside_bodies(reply: &str, fences: &[Fence<'_>]) -> usize {
    let mut from = 0;
    let mut headers = 0;
    for body in fences.iter().map(|b| b.body_start..b.body_end).chain(std::iter::once(reply.len()..reply.len())) {
        let first_line = lines_with_endings(&reply[body.clone()]).next();
        let read = lines_with_endings(&reply[from..body.start]).chain(first_line);
        headers += read.filter(|line| matches!(parse::header(line), Some(Ok(_)))).count();
        from = body.end;
    }
    headers
}

agent_apply_sdk::export_format!(Compact);

#[cfg(test)]
mod tests;
