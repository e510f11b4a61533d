//! `hashline` (aliases `hash-line`, `anchors`): edits anchored by `LINE:HASH`.
//!
//! The model reads a file as `N:hh|content` lines (see [`hash`]) and edits by
//! citing anchors such as `11:a3`, in one JSON object per file:
//!
//! ```json
//! {"path": "src/app.py", "edits": [
//!   {"set_line": {"anchor": "2:5f", "new_text": "    return 42"}},
//!   {"replace_lines": {"start_anchor": "4:0c", "end_anchor": "6:e1", "new_text": "..."}},
//!   {"insert_after": {"anchor": "9:aa", "text": "..."}},
//!   {"replace": {"old_text": "...", "new_text": "..."}}
//! ]}
//! ```
//!
//! Every anchor is checked against the file before anything changes. An
//! anchor whose hash moved a few lines (within the `window` option) follows
//! it when exactly one nearby line has that hash; otherwise the edit fails
//! with the affected line ranges, merged, and a fresh view of just those
//! lines, so the model can retry without re-reading the whole file.

use std::borrow::Cow;
use std::fmt;

use agent_apply_sdk::json::JsonString;
use agent_apply_sdk::matching::LadderOptions;
use agent_apply_sdk::message;
use agent_apply_sdk::message::Piece;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{contains, find_all, line_count, lines_with_endings, split_bom, strip_ending};
use agent_apply_sdk::view::render_ranges;
use serde::{Deserialize, Serialize};

mod apply;
pub mod hash;
mod parse;

pub use apply::ranges_text;
pub use parse::parse_anchor;

#[derive(Default)]
pub struct Hashline;

/// `LINE:HASH` as the model cited it (the hash lowercase; empty only for
/// line 0, the start of the file).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Anchor {
    pub line: u32,
    pub hash: String,
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&message!(self))
    }
}

/// `12:a3`, or `12` with no hash: for the messages made per edit.
impl Piece for Anchor {
    fn size(&self) -> usize {
        self.line.size() + if self.hash.is_empty() { 0 } else { 1 + self.hash.len() }
    }
    fn push_to(&self, out: &mut String) {
        self.line.push_to(out);
        if !self.hash.is_empty() {
            out.push(':');
            out.push_str(&self.hash);
        }
    }
}

/// One operation. Line texts are without endings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Replace one line; no lines deletes it.
    SetLine { anchor: Anchor, new_text: NewText },
    /// Replace lines `start..=end`.
    ReplaceLines { start: Anchor, end: Anchor, new_text: NewText },
    /// Insert lines after the anchor's line (line 0: at the start).
    InsertAfter { anchor: Anchor, text: NewText },
    /// Replace a unique block of old text, found with the matching ladder.
    Replace { old_text: String, new_text: String },
}

impl Operation {
    /// One line for humans.
    pub fn summary(&self) -> String {
        let n = NewText::len;
        // Written piece by piece (`message!`): one per edit of the reply.
        match self {
            Operation::SetLine { anchor, new_text } if new_text.is_empty() => message!("delete line ", anchor),
            Operation::SetLine { anchor, new_text } => {
                message!("set line ", anchor, " (", LineCount(n(new_text)), ")")
            }
            Operation::ReplaceLines { start, end, new_text } => {
                message!("replace lines ", start, "..", end, " with ", LineCount(n(new_text)))
            }
            Operation::InsertAfter { anchor, text } => message!("insert ", LineCount(n(text)), " after ", anchor),
            Operation::Replace { old_text, new_text } => {
                message!("replace ", LineCount(line_count(old_text)), " of text with ", line_count(new_text))
            }
        }
    }
}

/// New lines, without endings, in one string with where each ends: a
/// `String` per line cost a reply of 20,000 edits 160,000 allocations and
/// their headers, held in the plugin's memory for the whole run. It
/// serializes as the list of lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewLines {
    text: String,
    /// Where each line ends in `text`.
    ends: Vec<u32>,
}

impl NewLines {
    /// Room for lines of `bytes` bytes in all.
    pub fn with_capacity(bytes: usize, lines: usize) -> Self {
        NewLines { text: String::with_capacity(bytes), ends: Vec::with_capacity(lines) }
    }

    /// The lines of `text`, without their endings.
    pub fn of_text(text: &str) -> Self {
        let mut lines = NewLines::with_capacity(text.len(), line_count(text));
        lines_with_endings(text).for_each(|line| lines.push(strip_ending(line)));
        lines
    }

    /// Add a line (without its ending).
    pub fn push(&mut self, line: &str) {
        self.text.push_str(line);
        self.ends.push(u32::try_from(self.text.len()).expect("an edit's text is far below 4 GiB"));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of the lines, without their endings.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The lines, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(start, &end)| &self.text[start as usize..end as usize])
    }
}

impl<'a> FromIterator<&'a str> for NewLines {
    fn from_iter<I: IntoIterator<Item = &'a str>>(lines: I) -> Self {
        let mut new = NewLines::default();
        lines.into_iter().for_each(|line| new.push(line));
        new
    }
}

impl Serialize for NewLines {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for NewLines {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let lines = Vec::<String>::deserialize(deserializer)?;
        Ok(lines.iter().map(String::as_str).collect())
    }
}

/// An edit's new lines: the JSON string the reply gave, kept as written
/// and split when the edit is applied (a reply of 20,000 edits then holds
/// no unescaped copy of each), or lines (an array of them, or lines whose
/// copied prefixes were stripped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NewText {
    Json { json: JsonString, lines: u32 },
    Lines(NewLines),
}

impl NewText {
    pub fn len(&self) -> usize {
        match self {
            NewText::Json { lines, .. } => *lines as usize,
            NewText::Lines(lines) => lines.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lines. `Err` when a kept JSON string no longer reads as one.
    pub fn lines(&self) -> Result<Cow<'_, NewLines>, String> {
        match self {
            // A text whose only escapes are `\n` is read where it lies: no
            // unescaped copy to split again.
            NewText::Json { json, .. } => Ok(Cow::Owned(match json.plain_lines() {
                Some(plain) => {
                    let mut new = NewLines::with_capacity(json.written_len(), plain.len());
                    plain.for_each(|line| new.push(line));
                    new
                }
                None => NewLines::of_text(&json.decoded()?),
            })),
            NewText::Lines(lines) => Ok(Cow::Borrowed(lines)),
        }
    }
}

/// The private payload of one edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HashEdit {
    /// `edit 3 (reply line 14)`, for messages.
    pub label: String,
    pub op: Operation,
    /// Copied `N:hh|` prefixes were removed from the edit's text.
    #[serde(default)]
    pub stripped_prefixes: bool,
    /// The file tag of the view the anchors came from, when the object gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl HashEdit {
    /// An insertion at the top (`"0:"`): the only edit that may create a file.
    fn creates_file(&self) -> bool {
        matches!(&self.op, Operation::InsertAfter { anchor, .. } if anchor.line == 0)
    }
}

/// Format options.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Hex digits per hash in views (2-8).
    pub hash_length: usize,
    /// How far (in lines) a stale anchor is looked for.
    pub window: u32,
    pub ladder: LadderOptions,
}

impl Settings {
    pub fn from_options(options: Options<'_>) -> Result<Settings, String> {
        let hash_length = options.parse_or("hash-length", 2usize)?;
        if !(hash::MIN_HASH_LEN..=hash::MAX_HASH_LEN).contains(&hash_length) {
            return Err(format!("option `hash-length` must be 2-8 (hex digits), not {hash_length}"));
        }
        let window = options.parse_or("window", 8u32)?;
        if window > 10_000 {
            return Err(format!("option `window` must be at most 10000 lines, not {window}"));
        }
        Ok(Settings { hash_length, window, ladder: apply::ladder() })
    }
}

const INSTRUCTIONS: &str = "\
Files are shown to you in hashline form: every line is `LINE:HASH|content`, for example \
`12:a3|    return x`. LINE is the 1-based line number and HASH is a short fingerprint of the \
line's text. The part after `|` is the real line.

To edit, send one JSON object per file, in a ```json block:

{\"path\": \"src/app.py\", \"edits\": [ ...edits... ]}

Each edit is one of:
- {\"set_line\": {\"anchor\": \"12:a3\", \"new_text\": \"    return y\"}} replaces line 12. \
An empty new_text (\"\") deletes the line.
- {\"replace_lines\": {\"start_anchor\": \"12:a3\", \"end_anchor\": \"15:0f\", \"new_text\": \"...\"}} \
replaces lines 12 to 15, both included.
- {\"insert_after\": {\"anchor\": \"12:a3\", \"text\": \"...\"}} inserts lines after line 12. \
Use the anchor \"0:\" to insert at the start of the file.
- {\"replace\": {\"old_text\": \"...\", \"new_text\": \"...\"}} replaces text copied exactly \
from the file; it must occur exactly once. Use it only when you have no anchors.

Rules:
- An anchor is LINE:HASH copied exactly from the view. Every anchor refers to the file as you \
read it, before any of your edits: do not renumber lines after earlier edits.
- new_text and text hold the new lines only, separated by \\n, without `LINE:HASH|` prefixes, \
with their indentation.
- Two edits may not touch the same line; merge them into one replace_lines instead.
- Several files: one object per file (several objects in one reply are fine).
- The view's first line is `PATH @TAG (N lines)`. Put that tag in the object: \
{\"path\": \"src/app.py\", \"tag\": \"@3fa9c1\", \"edits\": [...]}. It says which version your \
anchors come from, so edits to a file that changed since can be merged into it.

If an anchor is stale (the file changed since you read it), nothing is applied and the error \
shows fresh `LINE:HASH|` lines around the stale anchors (lines marked `>>>` are the ones your \
anchors named). Take the new anchors from those lines and send all your edits again; you do \
not need to read the whole file again.";

const EXAMPLE_REPLY: &str = "\
I'll make `greet` take a name.

```json
{\"path\": \"src/greet.py\", \"edits\": [
  {\"set_line\": {\"anchor\": \"1:48\", \"new_text\": \"def greet(name):\"}},
  {\"set_line\": {\"anchor\": \"2:53\", \"new_text\": \"    print(f\\\"Hello, {name}!\\\")\"}}
]}
```
";

impl Format for Hashline {
    type Op = HashEdit;

    /// Its edits' summaries are for the host alone: a large reply's are not kept.
    fn apply_reads_summaries(&self) -> bool {
        false
    }

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "hashline".into(),
            aliases: vec!["hash-line".into(), "anchors".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "JSON edits anchored by LINE:HASH from a `N:hh|content` view; stale anchors get fresh lines back"
                .into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/greet.py", "def greet():\n    print(\"Hello!\")\n")],
            options: vec![
                OptionDoc {
                    key: "hash-length".into(),
                    default_value: "2".into(),
                    description: "hex digits per line hash in views and anchors (2-8); more means fewer collisions"
                        .into(),
                },
                OptionDoc {
                    key: "window".into(),
                    default_value: "8".into(),
                    description: "lines above and below a stale anchor searched for its hash, and shown fresh \
                                  when it is not found once"
                        .into(),
                },
            ],
            detect_hints: vec!["set_line".into(), "replace_lines".into(), "insert_after".into(), "\"edits\"".into()],
        }
    }

    fn detect(&self, reply: &str) -> f32 {
        match (contains(reply, "\"edits\""), has_op_key(reply)) {
            (true, true) => 0.95,
            (false, true) => 0.6,
            (true, false) if contains(reply, "\"old_text\"") => 0.6,
            _ => 0.0,
        }
    }

    fn parse(&self, reply: &str, options: Options<'_>) -> Parsed<HashEdit> {
        parse::parse(reply, options.shows_summaries())
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<HashEdit>,
        options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        let mut results = Format::apply(self, workspace, std::slice::from_ref(edit), options);
        results.pop().unwrap_or_else(|| Err(EditFailure::new(FailureKind::Malformed, "no outcome")))
    }

    /// All edits of a path are validated together against the file as it
    /// was, then applied in one pass.
    fn apply(
        &self,
        workspace: &mut Workspace,
        edits: &[ParsedEdit<HashEdit>],
        options: Options<'_>,
    ) -> Vec<Result<Applied, EditFailure>> {
        let settings = match Settings::from_options(options) {
            Ok(s) => s,
            Err(message) => {
                return edits.iter().map(|_| Err(EditFailure::new(FailureKind::Malformed, message.clone()))).collect();
            }
        };
        agent_apply_sdk::apply_by_file(edits, |path, group| {
            let content = match workspace.read(path) {
                Some(content) => content.to_string(),
                None if group.iter().all(|(_, e)| e.creates_file()) => String::new(),
                None => {
                    let missing = |&(i, e): &(usize, &HashEdit)| {
                        let failure = EditFailure::new(
                            FailureKind::NotFound,
                            format!("{} on {path}: {path} does not exist", e.label),
                        )
                        .with_hint("check the path; to create a file, insert_after the anchor \"0:\" alone");
                        (i, Err(failure))
                    };
                    return group.iter().map(missing).collect();
                }
            };
            if let Some(stale) = apply::stale_tag(path, &content, &group, &settings) {
                return stale.into_iter().map(|(i, failure)| (i, Err(failure))).collect();
            }
            let (outcomes, new_content, matches) = apply::apply_to_file(path, &content, &group, &settings);
            for (i, matched) in matches {
                workspace.note_match_of(i, matched);
            }
            if let Some(new_content) = new_content {
                workspace.write(path, new_content);
            }
            outcomes
        })
    }

    fn render(&self, file: &File, ranges: &[LineRange], options: Options<'_>) -> Result<String, String> {
        let settings = Settings::from_options(options)?;
        let mut view = agent_apply_sdk::view::view_header(&file.path, &file.content);
        view.push_str(&render_ranges(&file.content, ranges, |n, line| hash::view_line(n, line, settings.hash_length)));
        Ok(view)
    }

    fn lint(&self, file: &File) -> Vec<Diagnostic> {
        let (_, body) = split_bom(&file.content);
        let mut runs: Vec<LineRange> = Vec::new();
        for (index, line) in lines_with_endings(body).enumerate() {
            let line = strip_ending(line);
            if line.starts_with(char::is_whitespace) || hash::copied_prefix_len(line).is_none() {
                continue;
            }
            let number = index as u32 + 1;
            match runs.last_mut() {
                Some(run) if run.end + 1 == number => run.end = number,
                _ => runs.push(LineRange::new(number, number)),
            }
        }
        runs.into_iter()
            .map(|run| {
                let what = if run.start == run.end {
                    format!("line {} starts with a leftover `LINE:HASH|` tag of a hashline view", run.start)
                } else {
                    format!("lines {}-{} start with leftover `LINE:HASH|` tags of a hashline view", run.start, run.end)
                };
                Diagnostic::in_file(what, &file.path, run)
                    .with_hint("a hashline view was pasted into the file; remove the `N:hh|` prefixes")
            })
            .collect()
    }
}

agent_apply_sdk::export_format!(Hashline);

/// The operations' names, as JSON keys.
const OPS: [&str; 3] = ["\"set_line\"", "\"replace_lines\"", "\"insert_after\""];

/// Whether an operation stands as a JSON key (`"set_line": {`), and not on
/// the `+`/`-` line of a diff that merely edits such JSON. Each name is
/// searched for in the whole reply, then its line looked at: a search per
/// line and name was most of the time `auto` took on a large reply.
fn has_op_key(reply: &str) -> bool {
    OPS.iter().any(|op| {
        find_all(reply, op).any(|at| {
            let line_start = reply[..at].rfind('\n').map_or(0, |i| i + 1);
            let line_end = reply[at..].find('\n').map_or(reply.len(), |i| at + i + 1);
            !reply[line_start..].starts_with(['+', '-']) && reply[at + op.len()..line_end].trim_start().starts_with(':')
        })
    })
}

#[cfg(test)]
mod tests;
