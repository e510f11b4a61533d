//! `tool-calls` (aliases `str-replace`, `edit-tool`): edits as the tool calls
//! agents already make, passed through as JSON.
//!
//! - Anthropic's text editor: `{"command": "str_replace" | "insert" | "create", "path", ...}`
//!   (`view` is reported as no edit; `undo_edit` cannot be replayed and is an error);
//! - Claude Code: `Edit` `{"file_path", "old_string", "new_string", "replace_all"?}`,
//!   `MultiEdit` `{"file_path", "edits": [...]}`, `Write` `{"file_path", "content"}`;
//! - opencode: `{"filePath", "oldString", "newString", "replaceAll"?}` and its write;
//! - in envelopes: `{"name", "input"}` (Anthropic `tool_use`), `{"name", "arguments":
//!   "<json>"}` (OpenAI), `{"type": "function_call", ...}` (Responses API),
//!   `{"function": {...}}` (Chat Completions), lists and messages of those;
//!
//! each as one JSON object, an array, JSON Lines or fenced blocks in prose.
//! Absolute paths inside the repository (the host passes its root as the
//! `repo-root` option) become repo-relative. Calls apply in order, each to
//! the result of the ones before.

use std::borrow::Cow;

use agent_apply_sdk::detect_parse;
use agent_apply_sdk::json::JsonString;
use agent_apply_sdk::message;
use agent_apply_sdk::message::{Composite, Piece, WritePieces};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{LineCount, contains};
use agent_apply_sdk::view::render_ranges;
use serde::{Deserialize, Serialize};

mod apply;
mod batch;
mod parse;
mod tools;

pub use parse::repo_relative;
pub use tools::definitions;

#[derive(Default)]
pub struct ToolCalls;

/// One replacement: `old_string` → `new_string`. Its texts are `String`s
/// when applied, and [`Text`]s in the payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replacement<T = String> {
    pub old: T,
    pub new: T,
    /// Replace every occurrence, not exactly one.
    pub all: bool,
}

/// What a call does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action<T = String> {
    /// `str_replace`, `Edit`, opencode's edit.
    Replace(Replacement<T>),
    /// Replacements in order, each on the previous result, all or nothing.
    MultiEdit { edits: Vec<Replacement<T>> },
    /// Lines after line `after_line` (0: the top). A `u32`, as the SDK's
    /// line numbers are: a `u64` here aligned every call to 8 bytes, unlike
    /// the contract's edits, which the SDK then could not reuse in place.
    Insert { after_line: u32, text: T },
    /// The whole file; `create` does not overwrite.
    Write { content: T, overwrite: bool },
}

/// A call's text as kept between `parse` and `apply`: the JSON string the
/// reply wrote, unescaped when applied (a reply of 20,000 calls then holds
/// no unescaped copy of each `old_string` and `new_string`), or a string
/// (from arguments sent as a JSON string, whose text is not the reply's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Text {
    Json(JsonString),
    Plain(String),
}

impl Text {
    fn decoded(&self) -> Result<String, String> {
        match self {
            Text::Json(json) => json.decoded().map(Cow::into_owned),
            Text::Plain(text) => Ok(text.clone()),
        }
    }

    /// Counted when a summary asks (in the JSON text as written): most
    /// runs show none, and counting 20,000 calls' texts was 2% of a run.
    fn line_count(&self) -> usize {
        match self {
            Text::Json(json) => json.line_count(),
            Text::Plain(text) => agent_apply_sdk::text::line_count(text),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Text::Json(json) => json.is_empty(),
            Text::Plain(text) => text.is_empty(),
        }
    }
}

impl Replacement<Text> {
    fn decoded(&self) -> Result<Replacement, String> {
        Ok(Replacement { old: self.old.decoded()?, new: self.new.decoded()?, all: self.all })
    }
}

impl Action<Text> {
    /// The action with its texts unescaped.
    fn decoded(&self) -> Result<Action, String> {
        Ok(match self {
            Action::Replace(r) => Action::Replace(r.decoded()?),
            Action::MultiEdit { edits } => {
                Action::MultiEdit { edits: edits.iter().map(Replacement::decoded).collect::<Result<_, _>>()? }
            }
            Action::Insert { after_line, text } => Action::Insert { after_line: *after_line, text: text.decoded()? },
            Action::Write { content, overwrite } => {
                Action::Write { content: content.decoded()?, overwrite: *overwrite }
            }
        })
    }
}

impl Action<Text> {
    /// One line for humans, written into the edit's summary (no string of
    /// its own).
    pub fn summary(&self) -> impl Piece + '_ {
        ActionSummary(self)
    }
}

/// What [`Action::summary`] writes, piece by piece (`message!`): one per
/// call of the reply.
struct ActionSummary<'a>(&'a Action<Text>);

impl Composite for ActionSummary<'_> {
    fn pieces<W: WritePieces>(&self, write: W) -> W::Done {
        match self.0 {
            Action::Replace(r) if r.old.is_empty() => {
                write.pieces((&"create a file of ", &LineCount(r.new.line_count())))
            }
            Action::Replace(r) => {
                let all = if r.all { " (every occurrence)" } else { "" };
                write.pieces((&"replace ", &LineCount(r.old.line_count()), &" with ", &r.new.line_count(), &all))
            }
            Action::MultiEdit { edits } => write.pieces((&edits.len(), &" replacements in order")),
            Action::Insert { after_line, text } => {
                write.pieces((&"insert ", &LineCount(text.line_count()), &" after line ", after_line))
            }
            Action::Write { content, .. } => {
                write.pieces((&"write the whole file (", &LineCount(content.line_count()), &")"))
            }
        }
    }
}

agent_apply_sdk::composite_piece!(ActionSummary<'_>);

/// The private payload of one edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// 1-based number of the call among the reply's edits.
    pub number: u32,
    /// Reply line where the call starts.
    pub reply_line: u32,
    /// The tool's name as called, or the shape's (`Edit`, `str_replace`).
    pub tool: String,
    pub action: Action<Text>,
}

impl Call {
    /// `call 2 (`Edit`, reply line 7)`, for messages: written into the
    /// message itself, not kept with each of a large reply's calls.
    pub fn label(&self) -> impl Piece + '_ {
        CallLabel(self)
    }
}

/// What [`Call::label`] writes.
struct CallLabel<'a>(&'a Call);

impl Composite for CallLabel<'_> {
    fn pieces<W: WritePieces>(&self, write: W) -> W::Done {
        let call = self.0;
        write.pieces((&"call ", &call.number, &" (`", &call.tool, &"`, reply line ", &call.reply_line, &")"))
    }
}

agent_apply_sdk::composite_piece!(CallLabel<'_>);

/// The option the host sets to the repository's absolute path.
pub const REPO_ROOT: &str = "repo-root";
/// `render` returns the tool definitions when this option is `tool-definitions`.
pub const RENDER: &str = "render";

const INSTRUCTIONS: &str = "\
Edit files by calling the edit tools Edit, MultiEdit and Write. Written as text, send each call \
as a JSON object in a ```json block:

{\"name\": \"Edit\", \"input\": {\"file_path\": \"src/app.py\", \"old_string\": \"...\", \"new_string\": \"...\"}}

- Edit replaces old_string with new_string. old_string is copied exactly from the file, \
indentation included, and must occur exactly once: add surrounding lines until it is unique, or \
set \"replace_all\": true to replace every occurrence. An empty old_string creates a new file.
- MultiEdit {\"file_path\", \"edits\": [{\"old_string\", \"new_string\"}, ...]} applies its edits in \
order, each to the result of the previous one; if one fails, none is applied.
- Write {\"file_path\", \"content\"} writes the complete file. Never leave code out with a \
placeholder such as `// ... existing code ...`.
- Paths are relative to the repository root (absolute paths inside the repository work too).
- Several calls: a JSON array, or one object per line. Calls apply in order, each to the result \
of the ones before.";

const EXAMPLE_REPLY: &str = "\
I'll make `greet` take a name.

```json
{\"name\": \"Edit\", \"input\": {\"file_path\": \"src/greet.py\", \"old_string\": \"def greet():\\n    print(\\\"Hello!\\\")\", \"new_string\": \"def greet(name):\\n    print(f\\\"Hello, {name}!\\\")\"}}
```
";

impl Format for ToolCalls {
    type Op = Call;

    /// Its edits' summaries are for the host alone: a large reply's are not kept.
    fn apply_reads_summaries(&self) -> bool {
        false
    }

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "tool-calls".into(),
            aliases: vec!["str-replace".into(), "edit-tool".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "edit tool calls as agents make them: str_replace/insert/create, Edit/MultiEdit/Write, \
                      opencode, in Anthropic or OpenAI envelopes"
                .into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/greet.py", "def greet():\n    print(\"Hello!\")\n")],
            options: vec![
                OptionDoc {
                    key: REPO_ROOT.into(),
                    default_value: "(set by the host)".into(),
                    description: "the repository's absolute path: absolute paths under it become repo-relative".into(),
                },
                OptionDoc {
                    key: RENDER.into(),
                    default_value: "view".into(),
                    description: "`tool-definitions`: render returns the tool definitions (JSON) instead of a view"
                        .into(),
                },
            ],
            // Unquoted, as `detect` asks (inside an `arguments` string the
            // quotes are escaped): the host skips it for a reply with none.
            detect_hints: ARGUMENT_KEYS.iter().chain(ENVELOPE_WORDS).map(|k| k.to_string()).collect(),
        }
    }

    /// Near-certain when the reply holds a call this format reads; likely
    /// when it holds only calls that are no edits (warnings), or problems
    /// in a reply with the edit tools' keys (JSON that does not parse in
    /// another format's reply is not this format's).
    fn detect(&self, reply: &str) -> f32 {
        match keys_in(reply) {
            Some(keyed) => confidence(&parse::parse(reply, None, false), keyed),
            None => 0.0,
        }
    }

    /// [`ToolCalls::detect`], whose reading of the reply is kept for the
    /// `parse` that follows: it reads every call, as `parse` does.
    fn detect_owned(&self, reply: String) -> f32 {
        match keys_in(&reply) {
            Some(keyed) => {
                detect_parse::keep(reply, |reply| parse::parse(reply, None, false), |parsed| confidence(parsed, keyed))
            }
            None => 0.0,
        }
    }

    fn parse(&self, reply: &str, options: Options<'_>) -> Parsed<Call> {
        let (root, summaries) = (options.get(REPO_ROOT), options.shows_summaries());
        match detect_parse::take(reply) {
            Some(detected) => parse::rooted(detected, root, summaries),
            None => parse::parse(reply, root, summaries),
        }
    }

    /// Calls apply one by one, but a run of plain replacements of one file
    /// is placed in one pass when that provably gives the same result.
    fn apply(
        &self,
        workspace: &mut Workspace,
        edits: &[ParsedEdit<Call>],
        options: Options<'_>,
    ) -> Vec<Result<Applied, EditFailure>> {
        let mut results = Vec::with_capacity(edits.len());
        while results.len() < edits.len() {
            let first = results.len();
            let path = &edits[first].path;
            // A text that does not read stops the run: its call fails on its own.
            let run: Vec<Replacement> = edits[first..]
                .iter()
                .take_while(|e| &e.path == path)
                .map_while(|e| match &e.op.action {
                    Action::Replace(r) => r.decoded().ok(),
                    _ => None,
                })
                .collect();
            let end = first + run.len().max(1);
            match replace_run(workspace, &edits[first..end], &run.iter().collect::<Vec<_>>()) {
                Some(done) => {
                    for (index, (applied, matched)) in (first..).zip(done) {
                        workspace.note_match_of(index, matched);
                        results.push(Ok(applied));
                    }
                }
                None => {
                    for index in first..end {
                        results.push(agent_apply_sdk::apply_one(self, workspace, edits, index, options));
                    }
                }
            }
        }
        results
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<Call>,
        _options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        let path = edit.path.as_str();
        let call = &edit.op;
        let label = call.label();
        let prefix = |failure: EditFailure| EditFailure {
            message: message!(label, " on ", path, ": ", failure.message),
            ..failure
        };
        // The host's path policy refuses these before apply; refused here
        // too, in its words, so no host can have this plugin write them
        // (an absolute path outside the repository stays absolute).
        if let Err(problem) = agent_apply_sdk::repo_path::validate(path) {
            let failure = EditFailure::new(FailureKind::Forbidden, format!("{path:?} {problem}"));
            return Err(prefix(failure.with_hint("name files inside the repository, relative to its root")));
        }
        let unreadable = |e: String| EditFailure::new(FailureKind::Malformed, format!("its text cannot be read: {e}"));
        let action = call.action.decoded().map_err(|e| prefix(unreadable(e)))?;
        let current = workspace.read(path);
        let done = match &action {
            Action::Replace(r) => apply::replace(current, path, r),
            Action::MultiEdit { edits } => apply::multi_edit(current, path, edits),
            Action::Insert { after_line, text } => apply::insert(current, path, *after_line, text),
            Action::Write { content, overwrite } => apply::write(current, path, content, *overwrite),
        }
        .map_err(prefix)?;
        workspace.write(path, done.content);
        workspace.note_match(done.matched);
        Ok(Applied { message: message!(label, " on ", path, ": ", done.how), lines: done.lines, applied_path: None })
    }

    fn render(&self, file: &File, ranges: &[LineRange], options: Options<'_>) -> Result<String, String> {
        match options.get(RENDER) {
            Some("tool-definitions") => Ok(serde_json::to_string_pretty(&definitions()).map_err(|e| e.to_string())?),
            None | Some("view") => Ok(render_ranges(&file.content, ranges, |_, line| line.to_string())),
            Some(other) => Err(format!("option `{RENDER}` has the invalid value {other:?} (view or tool-definitions)")),
        }
    }
}

/// Whether `reply` may hold tool calls: `Some(true)` when it holds an edit
/// tool's argument key, `Some(false)` when only an envelope's word.
fn keys_in(reply: &str) -> Option<bool> {
    // Unquoted: inside an `arguments` string the keys' quotes are escaped.
    let keyed = ARGUMENT_KEYS.iter().any(|k| contains(reply, k));
    (keyed || ENVELOPE_WORDS.iter().any(|k| contains(reply, k))).then_some(keyed)
}

/// [`Format::detect`]'s confidence from the reply's calls read.
fn confidence(parsed: &Parsed<Call>, keyed: bool) -> f32 {
    let errors = parsed.diagnostics.iter().any(|d| d.severity == Severity::Error);
    let no_edits = parsed.diagnostics.iter().any(|d| d.severity == Severity::Warning);
    match (parsed.edits.is_empty(), errors) {
        (false, false) => 0.97,
        (false, true) => 0.9,
        (true, true) if keyed => 0.6,
        (true, _) if no_edits => 0.6,
        (true, _) => 0.0,
    }
}

/// Keys only edit tool calls' arguments have: the detection hints.
const ARGUMENT_KEYS: &[&str] =
    &["old_string", "oldString", "old_str", "file_path", "filePath", "insert_line", "file_text"];
/// Other words a reply of tool calls holds: the text editor's `command`
/// (a `view`-only reply), the envelopes' types and lists.
const ENVELOPE_WORDS: &[&str] = &["command", "tool_use", "function_call", "tool_calls"];

/// A run of replacements of one file in one pass ([`batch::replace_at_once`]),
/// with what each call's outcome says; `None` leaves them to `apply_edit`.
fn replace_run(
    workspace: &mut Workspace,
    edits: &[ParsedEdit<Call>],
    calls: &[&Replacement],
) -> Option<Vec<(Applied, MatchInfo)>> {
    let path = edits.first()?.path.as_str();
    agent_apply_sdk::repo_path::validate(path).ok()?;
    let (content, lines) = batch::replace_at_once(workspace.read(path)?, calls)?;
    workspace.write(path, content);
    let done = edits.iter().zip(lines).map(|(edit, lines)| {
        let message = message!(edit.op.label(), " on ", path, ": ", apply::replaced_exactly(lines, 1));
        (Applied { message, lines: Some(lines), applied_path: None }, apply::exact_match(1))
    });
    Some(done.collect())
}

agent_apply_sdk::export_format!(ToolCalls);

#[cfg(test)]
mod tests;
