//! `apply-patch` (aliases `v4a`, `codex-patch`): Codex's V4A patches, as
//! GPT-4.1, GPT-5, o3/o4 and the codex models write them.
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/app.py
//! @@ def total(items):
//! -    return sum(items)
//! +    return sum(i.price for i in items)
//! *** End Patch
//! ```
//!
//! The patch may be raw, fenced, fed to `apply_patch` through a shell heredoc
//! (a `cd DIR &&` before it is honoured inside the repository), or the string
//! of a tool call's JSON. Each hunk is placed with the SDK's matching ladder,
//! uniquely, in file order, after its scope lines; added lines follow the
//! indentation the match needed. A cut-off patch is refused whole, and the
//! host's transaction makes a patch of several files all or nothing.

use agent_apply_sdk::fence::{fenced_blocks, is_shell_info};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{contains, joined_lines, lines_with_endings, strip_ending};
use serde::{Deserialize, Serialize};

mod apply;
mod envelope;
mod grammar;
mod paths;
#[cfg(test)]
mod tests;

#[derive(Default)]
pub struct ApplyPatch;

/// One file section of a patch: the private payload of an edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum FileOp {
    /// `*** Add File:` with its lines (without the `+`).
    Add { path: String, lines: Vec<ReplyText>, at: String },
    /// `*** Delete File:`.
    Delete { path: String, at: String },
    /// `*** Update File:`, maybe `*** Move to:`, and hunks.
    Update {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        move_to: Option<String>,
        hunks: Vec<Hunk>,
        at: String,
    },
}

/// Where a hunk is in the reply: kept as numbers and written only into a
/// message, since most hunks place and need none.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct At {
    /// The reply's line, or the patch's inside a tool call.
    pub line: u32,
    /// The reply line of the tool call holding the patch, if it is in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_line: Option<u32>,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.call_line {
            Some(call) => write!(f, "line {} of the patch in the tool call at reply line {call}", self.line),
            None => write!(f, "reply line {}", self.line),
        }
    }
}

/// One hunk of an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hunk {
    /// 1-based number of the hunk in its section.
    pub number: usize,
    /// Where it is in the reply, for messages ("reply line 12").
    pub at: At,
    /// Its `@@` scope lines, outermost first.
    pub scopes: Vec<String>,
    /// Lines with their marker: ` ` unchanged, `-` removed, `+` added.
    pub lines: Vec<ReplyText>,
    /// Followed by `*** End of File`: the old lines end the file.
    #[serde(default)]
    pub end_of_file: bool,
}

const INSTRUCTIONS: &str = "\
To change files, send one patch in this format (V4A, as the `apply_patch` tool takes it):

*** Begin Patch
[one section per file]
*** End Patch

Sections:
- `*** Add File: PATH`, then every line of the new file, each starting with `+`.
- `*** Delete File: PATH`, nothing after it.
- `*** Update File: PATH`, optionally `*** Move to: NEW_PATH` on the next line to rename it, then \
one hunk per place you change.

A hunk starts with a line `@@`, optionally followed by a line of the file that the change is inside \
(`@@ class Cart`, `@@ def total(self):`); write several `@@` lines in a row to narrow it down \
(`@@ class Cart` then `@@     def total(self):`). Then the lines of that place, each starting with \
one marker character:
- a space for a line that stays as it is (give about three before and after each change),
- `-` for a line you remove,
- `+` for a line you add.
End a hunk that reaches the end of the file with `*** End of File`.

Rules:
- PATH is relative to the repository root.
- Copy unchanged and removed lines exactly from the file, indentation included. A hunk whose lines \
occur in two places is refused: add an `@@` line or more unchanged lines until it matches one place.
- Hunks of a file go in the order of the lines they change, and do not overlap.
- Never leave code out or write `...` in place of lines: every line of a hunk is taken literally.
- Always end with `*** End Patch`; a patch without it is treated as cut off and nothing is applied.";

const EXAMPLE_REPLY: &str = "\
I'll make `total` skip inactive items and add a test.

*** Begin Patch
*** Update File: src/cart.py
@@ class Cart:
@@     def total(self):
         result = 0
         for item in self.items:
-            result += item.price
+            if item.active:
+                result += item.price
         return result
*** Add File: tests/test_cart.py
+from src.cart import Cart
+
+
+def test_total_skips_inactive_items():
+    assert Cart([]).total() == 0
*** End Patch
";

const EXAMPLE_FILE: &str = "\
class Cart:
    def __init__(self, items):
        self.items = items

    def total(self):
        result = 0
        for item in self.items:
            result += item.price
        return result
";

impl Format for ApplyPatch {
    type Op = FileOp;

    /// Its edits' summaries are for the host alone: a large reply's are not kept.
    fn apply_reads_summaries(&self) -> bool {
        false
    }

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "apply-patch".into(),
            aliases: vec!["v4a".into(), "codex-patch".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "Codex V4A patches (`*** Begin Patch`), raw, fenced, heredoc or tool call; placed uniquely".into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/cart.py", EXAMPLE_FILE)],
            options: Vec::new(),
            // What `detect` needs (`envelope::mentions_patch`): the host
            // skips it for a reply with none.
            detect_hints: [envelope::BEGIN].iter().chain(&envelope::FILE_MARKERS).map(|m| m.to_string()).collect(),
        }
    }

    fn detect(&self, reply: &str) -> f32 {
        if !envelope::mentions_patch(reply) {
            return 0.0;
        }
        let begin = contains(reply, envelope::BEGIN);
        let sections = envelope::FILE_MARKERS.iter().any(|m| contains(reply, m));
        let marker_lines = lines_with_endings(reply)
            .map(|l| strip_ending(l).trim())
            .any(|l| l == envelope::BEGIN || envelope::FILE_MARKERS.iter().any(|m| l.starts_with(m)));
        match (begin, sections, marker_lines) {
            (true, true, _) => 0.95,
            (false, true, true) => 0.7,
            (true, false, _) => 0.5,
            _ => 0.2,
        }
    }

    fn parse(&self, reply: &str, _options: Options<'_>) -> Parsed<FileOp> {
        let map = SourceMap::new(reply);
        let mut parsed = Parsed::default();
        // Found once: the envelope reads them twice more.
        let fences = fenced_blocks(reply);
        let (sources, diagnostics) = envelope::sources(reply, &map, &fences);
        parsed.diagnostics = diagnostics;
        for source in &sources {
            let place = grammar::Place::new(&map, source);
            // The reply's own blocks when the source is the reply.
            let own_fences;
            let source_fences = if std::ptr::eq(source.text.as_ref(), reply) {
                &fences
            } else {
                own_fences = fenced_blocks(&source.text);
                &own_fences
            };
            let patches = envelope::locate(source, source_fences);
            for located in &patches.found {
                grammar::parse_patch(&patches.lines[located.lines.clone()], located, &place, &mut parsed);
            }
        }
        for fence in &fences {
            if is_shell_info(fence.info) && !envelope::mentions_patch(fence.body) {
                let span = map.span(fence.start, fence.end);
                parsed.commands.push(SuggestedCommand { command: fence.body.trim_end().to_string(), span });
            }
        }
        // A reply with no patch at all holds no edit: the host says so the same
        // way for every format, naming the format that fits if another does.
        parsed
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<FileOp>,
        _options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        match &edit.op {
            FileOp::Add { path, lines, at } => add(workspace, path, lines, at),
            FileOp::Delete { path, at } => {
                if !workspace.delete(path) {
                    return Err(EditFailure::new(
                        FailureKind::NotFound,
                        format!("`*** Delete File: {path}` ({at}): the file does not exist"),
                    )
                    .with_hint("check the path; if the file is already gone, drop this section"));
                }
                workspace.note_match(MatchInfo::at("whole-file"));
                Ok(Applied { message: format!("deleted {path}"), lines: None, applied_path: None })
            }
            FileOp::Update { path, move_to, hunks, at } => update(workspace, path, move_to.as_deref(), hunks, at),
        }
    }
}

fn add(workspace: &mut Workspace, path: &str, lines: &[ReplyText], at: &str) -> Result<Applied, EditFailure> {
    let content = joined_lines(lines);
    match workspace.read(path) {
        Some(existing) if existing == content || TextStyle::detect(existing).restyle(&content) == existing => {
            Err(EditFailure::new(
                FailureKind::AlreadyApplied,
                format!("`*** Add File: {path}` ({at}): the file already exists with this content"),
            )
            .with_hint("the file seems to have been added already; drop this section"))
        }
        Some(_) => Err(EditFailure::new(
            FailureKind::Stale,
            format!("`*** Add File: {path}` ({at}): the file already exists, and adding it would overwrite it"),
        )
        .with_hint(format!(
            "to change it, use `*** Update File: {path}` with hunks; to replace it whole, \
             `*** Delete File: {path}` first"
        ))),
        None => {
            workspace.write(path, content);
            workspace.note_match(MatchInfo::at("whole-file"));
            Ok(Applied {
                message: format!("added {path} ({})", LineCount(lines.len())),
                lines: None,
                applied_path: None,
            })
        }
    }
}

fn update(
    workspace: &mut Workspace,
    path: &str,
    move_to: Option<&str>,
    hunks: &[Hunk],
    at: &str,
) -> Result<Applied, EditFailure> {
    let Some(existing) = workspace.read(path) else {
        return Err(EditFailure::new(
            FailureKind::NotFound,
            format!("`*** Update File: {path}` ({at}): the file does not exist"),
        )
        .with_hint(
            "check the path from the repository root; to create a file, use `*** Add File: PATH` with `+` lines",
        ));
    };
    let patched = apply::patch_file(existing, hunks, path)?;
    let mut message = format!("updated {path} ({} hunks)", hunks.len());
    let target = match move_to.filter(|to| *to != path) {
        Some(to) => {
            if workspace.exists(to) {
                return Err(EditFailure::new(
                    FailureKind::Stale,
                    format!(
                        "`*** Move to: {to}` ({at}): {to} already exists, and moving {path} there would overwrite it"
                    ),
                )
                .with_hint("move the file to a path that does not exist, or delete the other file first"));
            }
            workspace.rename(path, to).map_err(|m| EditFailure::new(FailureKind::Stale, m))?;
            message = format!("moved {path} to {to} ({} hunks)", hunks.len());
            to
        }
        None => path,
    };
    workspace.write(target, patched.content);
    workspace.note_match(patched.matched);
    if !patched.notes.is_empty() {
        message.push_str(&format!("; {}", patched.notes.join("; ")));
    }
    Ok(Applied { message, lines: patched.lines, applied_path: None })
}

agent_apply_sdk::export_format!(ApplyPatch);
