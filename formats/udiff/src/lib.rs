//! `udiff` (aliases `unified-diff`, `patch`): unified diffs as models write them.
//!
//! ```text
//! --- a/src/app.py
//! +++ b/src/app.py
//! @@ -10,3 +10,3 @@
//!  def total(items):
//! -    return sum(items)
//! +    return sum(i.price for i in items)
//! ```
//!
//! Models get `@@` numbers wrong, drop context lines, drift whitespace and
//! forget the space before blank context lines. Each hunk is placed with the
//! SDK's matching ladder where it matches exactly one place; line numbers
//! only break ties near the stated line; a hunk that does not match whole is
//! placed change by change. What cannot be placed unambiguously is refused.
//! The `strict` option behaves like `git apply` instead.

use agent_apply_sdk::fence::fenced_blocks;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{line_count, lines_with_endings, split_bom, strip_ending};
use serde::{Deserialize, Serialize};

use crate::signs::Signs;

pub mod apply;
mod parse;
mod parse_paths;
mod signs;

#[derive(Default)]
pub struct UnifiedDiff;

/// What a file section of a diff does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    Modify,
    Create,
    Delete,
    Rename,
}

/// The private payload of one file section of a diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilePatch {
    pub kind: FileKind,
    /// The file changed, created, deleted, or renamed from.
    pub path: String,
    /// A rename's destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Reply lines of the section.
    pub reply_line: u32,
    pub end_line: u32,
    pub hunks: Vec<Hunk>,
}

/// One hunk as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hunk {
    /// 1-based number of the hunk in its file section.
    pub number: usize,
    /// Reply line of its `@@` header (or first line when it has none).
    pub reply_line: u32,
    /// The `@@` line, empty when the hunk had none.
    pub header: ReplyText,
    pub old_start: Option<u32>,
    pub old_count: Option<u32>,
    pub new_start: Option<u32>,
    pub new_count: Option<u32>,
    /// Lines with their marker: ` ` context, `-` removed, `+` added, `~`
    /// context written without a marker.
    pub lines: Vec<ReplyText>,
    #[serde(default)]
    pub old_no_eol: bool,
    #[serde(default)]
    pub new_no_eol: bool,
}

impl Hunk {
    pub(crate) fn new(
        number: usize,
        reply_line: u32,
        header: &str,
        numbers: Option<(u32, Option<u32>, u32, Option<u32>)>,
    ) -> Self {
        let (old_start, old_count, new_start, new_count) = match numbers {
            Some((a, b, c, d)) => (Some(a), b, Some(c), d),
            None => (None, None, None, None),
        };
        Hunk {
            number,
            reply_line,
            header: ReplyText::new(header),
            old_start,
            old_count,
            new_start,
            new_count,
            // Sized by the header's counts (at most the two sides' sum),
            // bounded: the counts are the reply's word, not its length.
            lines: Vec::with_capacity(old_count.unwrap_or(0).saturating_add(new_count.unwrap_or(0)).min(256) as usize),
            old_no_eol: false,
            new_no_eol: false,
        }
    }
}

const INSTRUCTIONS: &str = "\
To change files, send a unified diff (like `diff -u` or `git diff` output) in a ```diff fence.

For each file:
1. a line `--- a/PATH` and a line `+++ b/PATH` (PATH relative to the repository root);
2. one hunk per place you change: a line `@@ @@`, then the lines of that place, each starting \
with one marker character:
   - a space for a line that stays as it is,
   - `-` for a line you remove,
   - `+` for a line you add.

Rules:
- Copy unchanged and removed lines exactly from the file, indentation included. Give two or \
three unchanged lines before and after each change so the hunk matches exactly one place; a \
hunk that matches two places is refused.
- Line numbers in `@@ -12,4 +12,5 @@` are optional; when given they are only a hint. Never \
guess them: `@@ @@` is fine.
- A blank unchanged line is a line with a single space.
- Keep hunks of one file in file order, and do not let two hunks change the same lines.
- To create a file, use `--- /dev/null` and `+++ b/PATH` with every line added (`+`).
- To delete a file, use `--- a/PATH` and `+++ /dev/null` with every line removed (`-`).
- To rename a file, use `--- a/OLD` and `+++ b/NEW` (or git's `rename from` / `rename to` \
lines), with hunks for any changes to its content.
- Put shell commands in their own ```bash block; they are shown to the user, never run.";

const EXAMPLE_REPLY: &str = "\
I'll make `greet` take a name from the command line.

```diff
--- a/src/greet.py
+++ b/src/greet.py
@@ @@
 import sys
 
 
-def greet():
-    print(\"Hello!\")
+def greet(name):
+    print(f\"Hello, {name}!\")
 
 
 if __name__ == \"__main__\":
-    greet()
+    greet(sys.argv[1])
```
";

const EXAMPLE_FILE: &str = "\
import sys


def greet():
    print(\"Hello!\")


if __name__ == \"__main__\":
    greet()
";

/// Read the `strict` option.
pub fn strict_option(options: Options<'_>) -> Result<bool, String> {
    options.flag("strict", false)
}

impl Format for UnifiedDiff {
    type Op = FilePatch;

    /// Its edits' summaries are for the host alone: a large reply's are not kept.
    fn apply_reads_summaries(&self) -> bool {
        false
    }

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "udiff".into(),
            aliases: vec!["unified-diff".into(), "patch".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "unified diffs (`---`/`+++`, `@@` hunks), placed by content, refused when ambiguous".into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/greet.py", EXAMPLE_FILE)],
            options: vec![OptionDoc {
                key: "strict".into(),
                default_value: "false".into(),
                description: "behave like `git apply`: context must match exactly, hunk line numbers and counts \
                              are required and honoured (the nearest exact match wins), no hunk splitting"
                    .into(),
            }],
            // Every sign `detect` scores (a marker's run, a hunk, headers, a
            // `diff --git` line or a diff or patch fence) holds one of these:
            // the host skips `detect` for a reply with none.
            detect_hints: ["<<<<<", ">>>>>", "@@", "+++ ", "diff", "patch"].map(String::from).to_vec(),
        }
    }

    fn detect(&self, reply: &str) -> f32 {
        let Signs { block_marker, git, numbered, bare_hunk, headers } = Signs::of(reply);
        if block_marker {
            // SEARCH/REPLACE blocks, even inside a ```diff fence, are editblock's.
            return 0.05;
        }
        let diff_fence = fenced_blocks(reply).iter().any(|b| {
            let lang = b.info.split_whitespace().next().unwrap_or("");
            (lang.eq_ignore_ascii_case("diff") || lang.eq_ignore_ascii_case("patch"))
                && lines_with_endings(b.body).any(|l| l.starts_with('+') || l.starts_with('-'))
        });
        if git && (numbered || bare_hunk || headers) {
            0.9
        } else if headers && (numbered || bare_hunk) {
            0.85
        } else if numbered || (headers && diff_fence) {
            0.7
        } else if headers || (bare_hunk && diff_fence) {
            0.6
        } else if diff_fence {
            0.4
        } else {
            0.0
        }
    }

    fn parse(&self, reply: &str, _options: Options<'_>) -> Parsed<FilePatch> {
        parse::parse(reply)
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<FilePatch>,
        options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        let strict = strict_option(options).map_err(|m| EditFailure::new(FailureKind::Malformed, m))?;
        let patch = &edit.op;
        match patch.kind {
            FileKind::Create => create(workspace, patch),
            FileKind::Delete => delete(workspace, patch, strict),
            FileKind::Modify => modify(workspace, patch, strict),
            FileKind::Rename => rename(workspace, patch, strict),
        }
    }

    fn lint(&self, file: &File) -> Vec<Diagnostic> {
        let lower = file.path.to_ascii_lowercase();
        if [".diff", ".patch", ".rej", ".orig"].iter().any(|ext| lower.ends_with(ext)) {
            return Vec::new();
        }
        let markdown = [".md", ".markdown", ".rst", ".txt"].iter().any(|ext| lower.ends_with(ext));
        let (_, body) = split_bom(&file.content);
        let mut fenced = vec![false; line_count(body) + 1];
        if markdown {
            let map = SourceMap::new(body);
            for block in fenced_blocks(body) {
                let (first, last) = (map.line_of(block.start) as usize, map.line_of(block.end.max(1) - 1) as usize);
                for flag in fenced.iter_mut().take(last + 1).skip(first) {
                    *flag = true;
                }
            }
        }
        let mut found = Vec::new();
        let mut previous = "";
        for (index, line) in lines_with_endings(body).map(strip_ending).enumerate() {
            let number = index as u32 + 1;
            if fenced[number as usize] {
                previous = line;
                continue;
            }
            let what = if parse::is_numbered_hunk_header(line) {
                Some("a hunk header")
            } else if line.starts_with("diff --git a/") {
                Some("a `diff --git` header")
            } else if (line.starts_with("+++ b/") || line.starts_with("+++ /dev/null"))
                && (previous.starts_with("--- a/") || previous.starts_with("--- /dev/null"))
            {
                Some("a `---`/`+++` file header")
            } else {
                None
            };
            if let Some(what) = what {
                found.push(
                    Diagnostic::in_file(
                        format!("leftover diff fragment, {what}: `{}`", line.chars().take(80).collect::<String>()),
                        &file.path,
                        LineRange::new(number, number),
                    )
                    .with_hint("a diff was pasted into the file instead of applied; remove the diff lines"),
                );
            }
            previous = line;
        }
        found
    }
}

fn hunks_text(n: usize) -> String {
    if n == 1 { "1 hunk".into() } else { format!("{n} hunks") }
}

fn message(path: &str, patch: &FilePatch, notes: &[String]) -> String {
    let mut text = format!("changed {path}: applied {}", hunks_text(patch.hunks.len()));
    if !notes.is_empty() {
        text.push_str(&format!(" ({})", notes.join("; ")));
    }
    text
}

agent_apply_sdk::export_format!(UnifiedDiff);

/// `(reply line N)`, for messages about a file's diff.
fn reply_line(patch: &FilePatch) -> String {
    format!("(reply line {})", patch.reply_line)
}

/// `--- /dev/null`: the file must not exist (or already hold the content).
fn create(workspace: &mut Workspace, patch: &FilePatch) -> Result<Applied, EditFailure> {
    let (path, at) = (patch.path.as_str(), reply_line(patch));
    let content = apply::created_content(&patch.hunks);
    match workspace.read(path) {
        Some(existing) if existing == content || TextStyle::detect(existing).restyle(&content) == existing => {
            Err(EditFailure::new(
                FailureKind::AlreadyApplied,
                format!("the diff creates {path} {at}, but it already exists with that content"),
            )
            .with_hint("this file seems to have been created already; drop this diff"))
        }
        Some(_) => Err(EditFailure::new(
            FailureKind::Stale,
            format!("the diff creates {path} {at} (`--- /dev/null`), but {path} already exists"),
        )
        .with_hint("to change an existing file, use `--- a/PATH` with hunks of its current lines")),
        None => {
            let lines = line_count(&content);
            workspace.write(path, content);
            Ok(Applied { message: format!("created {path} ({})", LineCount(lines)), lines: None, applied_path: None })
        }
    }
}

/// `+++ /dev/null`: the file must exist and hold the removed lines.
fn delete(workspace: &mut Workspace, patch: &FilePatch, strict: bool) -> Result<Applied, EditFailure> {
    let (path, at) = (patch.path.as_str(), reply_line(patch));
    let Some(existing) = workspace.read(path) else {
        return Err(EditFailure::new(
            FailureKind::NotFound,
            format!("the diff deletes {path} {at}, but it does not exist"),
        )
        .with_hint("check the path; if the file was already deleted, drop this diff"));
    };
    if let Err(why) = apply::old_side_matches(existing, &patch.hunks, strict) {
        return Err(EditFailure::new(FailureKind::NotFound, format!("the diff deletes {path} {at}, but {why}"))
            .with_hint("make sure the diff deletes the right file, with its current lines"));
    }
    let lines = line_count(existing) as u32;
    workspace.delete(path);
    workspace.note_match(MatchInfo::at("whole-file"));
    Ok(Applied { message: format!("deleted {path}"), lines: Some(LineRange::new(1, lines)), applied_path: None })
}

/// Hunks of an existing file.
fn modify(workspace: &mut Workspace, patch: &FilePatch, strict: bool) -> Result<Applied, EditFailure> {
    let (path, at) = (patch.path.as_str(), reply_line(patch));
    let Some(existing) = workspace.read(path) else {
        return Err(EditFailure::new(FailureKind::NotFound, format!("{path} does not exist {at}"))
            .with_hint("check the path in the `---`/`+++` headers; to create a file use `--- /dev/null`"));
    };
    let outcome = apply::patch(existing, &patch.hunks, path, strict)?;
    workspace.write(path, outcome.content);
    workspace.note_match(outcome.matched);
    Ok(Applied { message: message(path, patch, &outcome.notes), lines: outcome.lines, applied_path: None })
}

/// A rename, with or without hunks; one already done gets the hunks at its
/// destination (unless strict).
fn rename(workspace: &mut Workspace, patch: &FilePatch, strict: bool) -> Result<Applied, EditFailure> {
    let (path, at) = (patch.path.as_str(), reply_line(patch));
    let to = patch.to.as_deref().unwrap_or(path);
    let (source, renaming) = match (workspace.exists(path), workspace.exists(to)) {
        (true, false) => (path, true),
        (true, true) => {
            return Err(EditFailure::new(
                FailureKind::Stale,
                format!("the diff renames {path} to {to} {at}, but {to} already exists"),
            )
            .with_hint("rename to a path that does not exist, or change the existing file in place"));
        }
        // Already renamed: the diff's changes go to the destination.
        (false, true) if !strict => (to, false),
        _ => {
            return Err(EditFailure::new(
                FailureKind::NotFound,
                format!("the diff renames {path} to {to} {at}, but {path} does not exist"),
            )
            .with_hint("check the path in the `---` header or the `rename from` line"));
        }
    };
    let existing = workspace.read(source).expect("exists").to_string();
    let outcome = if patch.hunks.is_empty() {
        apply::Outcome { content: existing, lines: None, notes: Vec::new(), matched: MatchInfo::at("exact") }
    } else {
        apply::patch(&existing, &patch.hunks, source, strict)?
    };
    if renaming {
        workspace.rename(path, to).map_err(|m| EditFailure::new(FailureKind::Stale, m))?;
    }
    workspace.write(to, outcome.content);
    let mut text = if renaming {
        format!("renamed {path} to {to}")
    } else {
        format!("{path} was already renamed to {to}; changed {to}")
    };
    if !patch.hunks.is_empty() {
        text.push_str(&format!(" and applied {}", hunks_text(patch.hunks.len())));
    }
    if !outcome.notes.is_empty() {
        text.push_str(&format!(" ({})", outcome.notes.join("; ")));
    }
    Ok(Applied { message: text, lines: outcome.lines, applied_path: None })
}

#[cfg(test)]
mod tests;
