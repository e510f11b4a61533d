//! `ops-json`: structured edit operations, as editor agents emit them.
//!
//! A reply holds a JSON list (bare, or in a ```` ```json ```` fence) of
//! operations:
//!
//! ```json
//! [
//!   {"targetFile": "src/a.py",
//!    "baseVersion": "9f86d081",
//!    "operation": {"type": "replace", "search": "x = 1\n", "replace": "x = 2\n"},
//!    "explanation": "bump x"}
//! ]
//! ```
//!
//! Operation types: `replace` (`search`, `replace`), `insert_after` and
//! `insert_before` (`anchor`, `content`), `delete` (`search`), `append` and
//! `prepend` (`content`). `search` and `anchor` are found with the SDK's
//! matching ladder and must match exactly one place.
//!
//! `baseVersion` (optional; also `contentHash`) is the lowercase hex sha256 of
//! the file's bytes as the model last saw them, or a prefix of it of at least
//! 8 digits. When the file now hashes differently the operation fails as
//! `stale` (a conflict), so an edit written against an old version never
//! lands on a new one. All operations of a reply compare against the file as
//! it was before the reply, not after the reply's earlier operations.
//!
//! This crate is the worked example of a third-party plugin: it uses only the
//! public SDK, and builds as a wasm component that `.agent-apply.toml` loads.

use std::collections::HashMap;

use agent_apply_sdk::fence::fenced_blocks;
use agent_apply_sdk::matching::{LadderOptions, replace_block};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{lines_with_endings, split_bom};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The format.
#[derive(Default)]
pub struct OpsJson;

/// One operation, as the model wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Operation {
    /// Replace the one place `search` matches with `replace`.
    Replace {
        #[serde(alias = "find")]
        search: String,
        #[serde(alias = "content")]
        replace: String,
    },
    /// Insert `content` on the lines after the one place `anchor` matches.
    InsertAfter {
        #[serde(alias = "search")]
        anchor: String,
        content: String,
    },
    /// Insert `content` on the lines before the one place `anchor` matches.
    InsertBefore {
        #[serde(alias = "search")]
        anchor: String,
        content: String,
    },
    /// Remove the one place `search` matches.
    Delete {
        #[serde(alias = "anchor")]
        search: String,
    },
    /// Add `content` at the end of the file (creating it if missing).
    Append { content: String },
    /// Add `content` at the start of the file (creating it if missing).
    Prepend { content: String },
}

/// One element of the reply's JSON list.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOp {
    target_file: String,
    operation: Operation,
    #[serde(default, alias = "contentHash", alias = "base_version")]
    base_version: Option<String>,
    #[serde(default)]
    explanation: Option<String>,
}

/// The private payload of one edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Op {
    /// What to do.
    pub operation: Operation,
    /// The normalised (lowercase hex) `baseVersion`, if one was given.
    pub base_version: Option<String>,
}

/// The key every operation carries; replies without it are not ours.
const MARKER: &str = "\"targetFile\"";
/// A `baseVersion` shorter than this could match by chance.
const MIN_HASH_DIGITS: usize = 8;

const INSTRUCTIONS: &str = "\
Send your edits as a JSON list in a ```json fenced block. Each element edits one file:
  {\"targetFile\": \"path/from/repo/root\", \"operation\": {...}, \"explanation\": \"why\"}
The operation's \"type\" is one of:
  replace        {\"search\": old text, \"replace\": new text}
  insert_after   {\"anchor\": existing text, \"content\": lines to insert after it}
  insert_before  {\"anchor\": existing text, \"content\": lines to insert before it}
  delete         {\"search\": text to remove}
  append         {\"content\": text to add at the end of the file (creates the file if missing)}
  prepend        {\"content\": text to add at the start of the file}
`search` and `anchor` are whole lines copied exactly from the file, and must occur exactly once: \
include enough surrounding lines to make them unique. Operations apply in order, so a later \
operation on the same file sees the result of the earlier ones. Optionally add \
\"baseVersion\": the lowercase hex sha256 of the file's bytes as you read it (at least its \
first 8 digits); if the file has changed since, the operation is refused as stale instead of \
being applied to text you have not seen.";

const EXAMPLE_REPLY: &str = r#"I'll make `greet` take a name and add a farewell.

```json
[
  {
    "targetFile": "src/greet.py",
    "operation": {
      "type": "replace",
      "search": "def greet():\n    print(\"Hello!\")\n",
      "replace": "def greet(name):\n    print(f\"Hello, {name}!\")\n"
    },
    "explanation": "greet takes a name"
  },
  {
    "targetFile": "src/greet.py",
    "operation": {"type": "append", "content": "\ndef bye():\n    print(\"Bye!\")\n"},
    "explanation": "add a farewell"
  }
]
```
"#;

impl Format for OpsJson {
    type Op = Op;

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "ops-json".into(),
            aliases: vec!["operations-json".into()],
            version: env!("CARGO_PKG_VERSION").into(),
            summary: "Structured operations: a JSON list of {targetFile, operation, explanation}".into(),
            instructions: INSTRUCTIONS.into(),
            example_reply: EXAMPLE_REPLY.into(),
            example_files: vec![File::new("src/greet.py", "def greet():\n    print(\"Hello!\")\n")],
            options: Vec::new(),
            detect_hints: vec![MARKER.into()],
        }
    }

    /// Near certain when a block parses as a list of operations; still likely
    /// when it only mentions `targetFile` (so a malformed list gets this
    /// format's error, not another format's confusion).
    fn detect(&self, reply: &str) -> f32 {
        if !reply.contains(MARKER) {
            return 0.0;
        }
        let parses = blocks(reply).iter().any(|block| {
            serde_json::from_str::<serde_json::Value>(block.text)
                .ok()
                .and_then(|doc| operations_of(doc).ok())
                .is_some_and(|ops| {
                    !ops.is_empty() && ops.into_iter().all(|op| serde_json::from_value::<RawOp>(op).is_ok())
                })
        });
        if parses { 0.95 } else { 0.6 }
    }

    fn parse(&self, reply: &str, _options: Options<'_>) -> Parsed<Op> {
        let map = SourceMap::new(reply);
        let mut parsed = Parsed::default();
        let blocks = blocks(reply);
        if blocks.is_empty() {
            parsed.diagnostics.push(
                Diagnostic::error("the reply holds no JSON list of operations", None)
                    .with_hint("send a ```json block holding a list of {\"targetFile\", \"operation\"} objects"),
            );
        }
        for block in blocks {
            parse_block(&map, &block, &mut parsed);
        }
        parsed
    }

    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<Op>,
        _options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        let path = edit.path.as_str();
        let ladder = LadderOptions::default();
        let existing = workspace.read(path).map(str::to_string);
        let (content, message, lines) = match (&edit.op.operation, existing) {
            (Operation::Append { content }, None) | (Operation::Prepend { content }, None) => {
                let text = TextStyle::default().restyle(content);
                let count = lines_with_endings(&text).count();
                (text, format!("created {path} ({count} lines)"), None)
            }
            (_, None) => {
                return Err(EditFailure::new(FailureKind::NotFound, format!("{path} does not exist"))
                    .with_hint("check the path; to create a file, use an `append` operation"));
            }
            (Operation::Append { content }, Some(old)) => {
                let style = TextStyle::detect(&old);
                let mut text = old.clone();
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push_str(style.eol.as_str());
                }
                text.push_str(&TextStyle { bom: false, ..style }.restyle(content));
                let at = lines_with_endings(split_bom(&old).1).count() as u32 + 1;
                (text, format!("appended to {path}"), Some(LineRange::new(at, at - 1)))
            }
            (Operation::Prepend { content }, Some(old)) => {
                let style = TextStyle::detect(&old);
                let (bom, body) = split_bom(&old);
                let added = TextStyle { bom, final_newline: true, ..style }.restyle(content);
                (added + body, format!("prepended to {path}"), Some(LineRange::new(1, 0)))
            }
            (Operation::Replace { search, replace }, Some(old)) => {
                let done = replace_block(&old, search, replace, &ladder)?;
                (
                    done.content,
                    format!("replaced lines {}-{} of {path}", done.lines.start, done.lines.end),
                    Some(done.lines),
                )
            }
            (Operation::Delete { search }, Some(old)) => {
                let done = replace_block(&old, search, "", &ladder)?;
                (
                    done.content,
                    format!("deleted lines {}-{} of {path}", done.lines.start, done.lines.end),
                    Some(done.lines),
                )
            }
            (Operation::InsertAfter { anchor, content }, Some(old)) => {
                let joined = format!("{}\n{}", trim_eol(anchor), content);
                let done = replace_block(&old, anchor, &joined, &ladder)?;
                (done.content, format!("inserted after line {} of {path}", done.lines.end), Some(done.lines))
            }
            (Operation::InsertBefore { anchor, content }, Some(old)) => {
                let joined = format!("{}\n{}", trim_eol(content), anchor);
                let done = replace_block(&old, anchor, &joined, &ladder)?;
                (done.content, format!("inserted before line {} of {path}", done.lines.start), Some(done.lines))
            }
        };
        workspace.write(path, content);
        Ok(Applied { message, lines, applied_path: None })
    }

    /// Checks each operation's `baseVersion` against its file as it was
    /// before the reply, then applies the operations in reply order (so the
    /// operations on one file apply in the order written).
    fn apply(
        &self,
        workspace: &mut Workspace,
        edits: &[ParsedEdit<Op>],
        options: Options<'_>,
    ) -> Vec<Result<Applied, EditFailure>> {
        let mut originals: HashMap<String, Option<String>> = HashMap::new();
        edits
            .iter()
            .map(|edit| {
                let original = originals
                    .entry(edit.path.clone())
                    .or_insert_with(|| workspace.read(&edit.path).map(str::to_string));
                if let Some(expected) = &edit.op.base_version {
                    check_version(&edit.path, expected, original.as_deref())?;
                }
                self.apply_edit(workspace, edit, options)
            })
            .collect()
    }
}

/// The lowercase hex sha256 of `content`'s UTF-8 bytes: what `baseVersion` names.
pub fn content_hash(content: &str) -> String {
    Sha256::digest(content.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn check_version(path: &str, expected: &str, original: Option<&str>) -> Result<(), EditFailure> {
    let Some(original) = original else {
        return Err(EditFailure::new(
            FailureKind::Stale,
            format!(
                "conflict: the operation was written against a version {expected} of {path}, which no longer exists"
            ),
        )
        .with_hint("read the file list again; to create the file, drop `baseVersion`"));
    };
    let actual = content_hash(original);
    if actual.starts_with(expected) {
        return Ok(());
    }
    Err(EditFailure::new(
        FailureKind::Stale,
        format!("conflict: {path} has changed since the operation was written (baseVersion {expected}, the file is now {actual})"),
    )
    .with_hint(format!("read {path} again and rewrite the operation against it, with \"baseVersion\": \"{actual}\"")))
}

fn trim_eol(text: &str) -> &str {
    text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(text)
}

/// A piece of the reply that should hold a JSON list of operations.
struct Block<'a> {
    text: &'a str,
    /// Byte offset of `text` in the reply.
    offset: usize,
}

/// The fenced blocks that mention `targetFile`; failing that, the JSON the
/// reply holds outside any fence (from the `[` or `{` before the first
/// `targetFile` to the last `]` or `}`).
fn blocks(reply: &str) -> Vec<Block<'_>> {
    let fenced: Vec<Block<'_>> = fenced_blocks(reply)
        .into_iter()
        .filter(|f| f.body.contains(MARKER))
        .map(|f| Block { text: f.body, offset: f.body_start })
        .collect();
    if !fenced.is_empty() {
        return fenced;
    }
    let Some(first) = reply.find(MARKER) else { return Vec::new() };
    // The run of brackets and blanks that opens the document: `[ {` or `{`.
    let opening = reply[..first].trim_end_matches(|c: char| c.is_whitespace() || c == '[' || c == '{');
    let Some(start) = reply[opening.len()..first].find(['[', '{']).map(|at| opening.len() + at) else {
        return Vec::new();
    };
    let end = reply.rfind([']', '}']).map_or(reply.len(), |e| e + 1);
    vec![Block { text: &reply[start..end.max(start)], offset: start }]
}

/// The operation objects of a document: a list, or `{"operations": [...]}`.
fn operations_of(doc: serde_json::Value) -> Result<Vec<serde_json::Value>, &'static str> {
    match doc {
        serde_json::Value::Array(ops) => Ok(ops),
        serde_json::Value::Object(mut object) => match object.remove("operations").or_else(|| object.remove("edits")) {
            Some(serde_json::Value::Array(ops)) => Ok(ops),
            _ if object.contains_key("targetFile") => Ok(vec![serde_json::Value::Object(object)]),
            _ => Err("an object without an `operations` list"),
        },
        _ => Err("neither a list nor an object"),
    }
}

fn parse_block(map: &SourceMap, block: &Block<'_>, parsed: &mut Parsed<Op>) {
    let whole = map.span(block.offset, block.offset + block.text.len());
    let doc: serde_json::Value = match serde_json::from_str(block.text) {
        Ok(doc) => doc,
        Err(error) => {
            let line = map.line_of(block.offset) + error.line() as u32 - 1;
            let at = map.lines_span(line, line);
            parsed.diagnostics.push(
                Diagnostic::error(
                    format!("malformed JSON at reply line {line}, column {}: {}", error.column(), json_reason(&error)),
                    Some(at),
                )
                .with_hint(
                    "send valid JSON: strings in double quotes, newlines as \\n, no trailing commas or comments",
                ),
            );
            return;
        }
    };
    let ops = match operations_of(doc) {
        Ok(ops) => ops,
        Err(what) => {
            parsed.diagnostics.push(
                Diagnostic::error(
                    format!("the JSON at reply line {} is {what}, not a list of operations", whole.first_line),
                    Some(whole),
                )
                .with_hint("send a JSON list: [{\"targetFile\": ..., \"operation\": {...}}, ...]"),
            );
            return;
        }
    };
    let spans = op_spans(map, block, ops.len());
    for (index, (value, span)) in ops.into_iter().zip(spans).enumerate() {
        let raw: RawOp = match serde_json::from_value(value) {
            Ok(raw) => raw,
            Err(error) => {
                parsed.diagnostics.push(
                    Diagnostic::error(
                        format!("operation {} (reply line {}) is malformed: {error}", index + 1, span.first_line),
                        Some(span),
                    )
                    .with_hint(
                        "each operation needs \"targetFile\" and an \"operation\" with a \"type\" of replace, insert_after, \
                         insert_before, delete, append or prepend and that type's fields",
                    ),
                );
                continue;
            }
        };
        let base_version = match raw.base_version.as_deref().map(normalise_hash).transpose() {
            Ok(version) => version,
            Err(bad) => {
                parsed.diagnostics.push(
                    Diagnostic::error(
                        format!("operation {} (reply line {}) has an unusable baseVersion {bad:?}", index + 1, span.first_line),
                        Some(span),
                    )
                    .with_hint(format!("give the file's sha256 as lowercase hex, at least its first {MIN_HASH_DIGITS} digits, or leave baseVersion out")),
                );
                continue;
            }
        };
        let summary = match &raw.explanation {
            Some(why) if !why.trim().is_empty() => format!("{}: {}", describe(&raw.operation), why.trim()),
            _ => describe(&raw.operation),
        };
        parsed.edits.push(ParsedEdit {
            path: raw.target_file,
            related_paths: Vec::new(),
            span,
            summary,
            op: Op { operation: raw.operation, base_version },
        });
    }
}

/// serde_json's message without its own "at line L column C" (which counts
/// from the block, not the reply).
fn json_reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Where each of `count` operations sits: from its `"targetFile"` to the
/// next one's. When the key count disagrees (a file's content mentions
/// `"targetFile"`), every operation gets the whole block.
fn op_spans(map: &SourceMap, block: &Block<'_>, count: usize) -> Vec<Span> {
    let starts: Vec<usize> = block.text.match_indices(MARKER).map(|(at, _)| block.offset + at).collect();
    let end = block.offset + block.text.len();
    if starts.len() != count {
        return vec![map.span(block.offset, end); count];
    }
    (0..count).map(|i| map.span(starts[i], starts.get(i + 1).copied().unwrap_or(end))).collect()
}

/// `baseVersion` as lowercase hex without a `sha256:` prefix, or the raw
/// value when it is not usable.
fn normalise_hash(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim();
    let hex = trimmed.strip_prefix("sha256:").unwrap_or(trimmed).to_ascii_lowercase();
    if hex.len() >= MIN_HASH_DIGITS && hex.len() <= 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hex)
    } else {
        Err(raw.to_string())
    }
}

fn count_lines(text: &str) -> usize {
    lines_with_endings(text).count()
}

/// One line for humans: "replace 2 lines", "append 3 lines".
fn describe(operation: &Operation) -> String {
    match operation {
        Operation::Replace { search, replace } => {
            format!("replace {} lines with {}", count_lines(search), count_lines(replace))
        }
        Operation::InsertAfter { content, .. } => format!("insert {} lines after an anchor", count_lines(content)),
        Operation::InsertBefore { content, .. } => format!("insert {} lines before an anchor", count_lines(content)),
        Operation::Delete { search } => format!("delete {} lines", count_lines(search)),
        Operation::Append { content } => format!("append {} lines", count_lines(content)),
        Operation::Prepend { content } => format!("prepend {} lines", count_lines(content)),
    }
}

agent_apply_sdk::export_format!(OpsJson);

#[cfg(test)]
mod tests;
