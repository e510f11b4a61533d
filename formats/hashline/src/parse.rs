//! Reading a reply: JSON objects `{"path": ..., "edits": [...]}`, fenced or
//! bare, one or several, and the anchors inside them.

use std::borrow::Cow;
use std::collections::BTreeSet;

use agent_apply_sdk::fence::{fenced_blocks, is_shell_info};
use agent_apply_sdk::json::{self, ArrayItems, JsonString, Kind, Node, NodeError};
use agent_apply_sdk::message;
use agent_apply_sdk::paths::normalize;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{joined_lines, line_count, lines_with_endings, offset_in, strip_ending};
use serde_json::Value;

use crate::hash::{MAX_HASH_LEN, strip_copied_prefixes};
use crate::{Anchor, HashEdit, NewLines, NewText, Operation};

/// How many bare (unfenced) JSON candidates a reply may make us try.
const MAX_BARE_ATTEMPTS: usize = 64;

/// An anchor as a model wrote it: `11:a3`, `11:a3|copied text`, `>>> 11:a3`,
/// `11 : A3`. `Err` says what is wrong.
pub fn parse_anchor(text: &str) -> Result<Anchor, String> {
    let shown = text.trim();
    let mut rest = shown.trim_start_matches('>').trim_start();
    rest = rest.strip_prefix(['L', 'l']).filter(|r| r.starts_with(|c: char| c.is_ascii_digit())).unwrap_or(rest);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(format!("anchor {shown:?} does not start with a line number; write it as LINE:HASH, e.g. `12:a3`"));
    }
    let line: u32 =
        rest[..digits].parse().map_err(|_| format!("anchor {shown:?} has a line number that is too big"))?;
    rest = rest[digits..].trim_start();
    let Some(after) = rest.strip_prefix(':') else {
        if rest.is_empty() && line == 0 {
            return Ok(Anchor { line, hash: String::new() });
        }
        return Err(format!(
            "anchor {shown:?} has no `:HASH` after the line number; copy it from the view, e.g. `{line}:a3`"
        ));
    };
    let after = after.trim_start();
    let hexes = after.bytes().take_while(u8::is_ascii_hexdigit).count();
    let tail = &after[hexes..];
    let ends_cleanly = tail.is_empty() || tail.starts_with('|') || tail.starts_with(char::is_whitespace);
    if hexes == 0 || !ends_cleanly {
        if line == 0 && after.trim().is_empty() {
            return Ok(Anchor { line, hash: String::new() });
        }
        return Err(format!(
            "anchor {shown:?} has no hex hash after `{line}:`; copy it from the view, e.g. `{line}:a3`"
        ));
    }
    if hexes > MAX_HASH_LEN {
        return Err(format!("anchor {shown:?} has a hash longer than {MAX_HASH_LEN} hex digits"));
    }
    Ok(Anchor { line, hash: after[..hexes].to_ascii_lowercase() })
}

/// A key without case, `_` or `-`: `new_text`, `newText` and `new-text` agree.
fn key(k: &str) -> String {
    if k.is_ascii() {
        // Keys are mostly ASCII: lowered byte by byte, not through
        // `char::to_lowercase` (every edit object has two or three).
        return k.bytes().filter(|&b| b != b'_' && b != b'-').map(|b| char::from(b.to_ascii_lowercase())).collect();
    }
    k.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// An object's keys as [`key`] writes them, each once and in order, for
/// messages.
fn keys_of(node: &Node<'_>) -> Vec<String> {
    node.members().iter().map(|(k, _)| key(k)).collect::<BTreeSet<_>>().into_iter().collect()
}

/// The member of `object` under the first of `names` it has, keys read as
/// models spell them ([`Node::member`]).
fn pick<'n, 'r>(object: &'n Node<'r>, names: &[&str]) -> Option<&'n Node<'r>> {
    names.iter().find_map(|n| object.member(n))
}

/// A (small) value's JSON, read.
fn value_of(node: &Node<'_>) -> Value {
    serde_json::from_str(node.text).unwrap_or(Value::Null)
}

/// New text: a string (split at newlines; `""` is no lines), kept as the
/// reply wrote it and split when applied; an array of strings (one per
/// line); or `null` (no lines). Copied `N:hh|` prefixes are stripped (the
/// `bool` says so), and a string that had them is kept as its lines.
fn new_text(raw: &Node<'_>, what: &str) -> Result<(NewText, bool), String> {
    if let Some(json) = JsonString::from_raw(raw.text) {
        // Most new texts have no escape but `\n`: their lines are read where
        // the reply wrote them, with no unescaped copy.
        // The lines are counted as the escapes are checked, once.
        let (stripped, lines) = match json.plain_lines() {
            // A copied prefix ends in `|`: a text with none has no prefix
            // to look for on each of its lines.
            Some(lines) if memchr::memchr(b'|', raw.text.as_bytes()).is_none() => (None, lines.len()),
            Some(lines) => (strip_copied_prefixes(lines.clone()), lines.len()),
            None => {
                let text = json.decoded()?;
                (strip_copied_prefixes(lines_with_endings(&text).map(strip_ending)), line_count(&text))
            }
        };
        return Ok(match stripped {
            Some(stripped) => (NewText::Lines(stripped), true),
            None => (NewText::Json { json, lines: lines as u32 }, false),
        });
    }
    match value_of(raw) {
        Value::Null => Ok((NewText::Lines(NewLines::default()), false)),
        Value::Array(items) => {
            let lines: Vec<&str> = items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(strip_ending(s)),
                    other => Err(format!("`{what}` holds {other} where a line (a string) was expected")),
                })
                .collect::<Result<_, _>>()?;
            Ok(match strip_copied_prefixes(lines.iter().copied()) {
                Some(stripped) => (NewText::Lines(stripped), true),
                None => (NewText::Lines(lines.into_iter().collect()), false),
            })
        }
        other => Err(format!("`{what}` must be a string (or an array of lines), not {other}")),
    }
}

fn anchor_of(raw: Option<&Node<'_>>, what: &str) -> Result<Anchor, String> {
    let raw = raw.ok_or_else(|| format!("`{what}` is missing"))?;
    // The string as written, not a `Value` made of it (one or two an edit).
    if let Some(anchor) = raw.as_str() {
        return parse_anchor(&anchor);
    }
    match value_of(raw) {
        Value::Number(n) if n.as_u64() == Some(0) => Ok(Anchor { line: 0, hash: String::new() }),
        Value::Number(n) => Err(format!(
            "`{what}` is the bare number {n}; anchors are LINE:HASH strings copied from the view, e.g. \"{n}:a3\""
        )),
        other => Err(format!("`{what}` must be an anchor string like \"12:a3\", not {other}")),
    }
}

/// The text field of an edit (see [`new_text`]).
fn new_lines(args: &Node<'_>, names: &[&str], what: &str) -> Result<(NewText, bool), String> {
    let raw = pick(args, names).ok_or_else(|| format!("`{what}` is missing (use \"\" for no lines)"))?;
    new_text(raw, what)
}

/// One operation object: `{"set_line": {...}}` or flat `{"op": "set_line", ...}`.
fn operation(node: &Node<'_>) -> Result<(Operation, bool), String> {
    const OPS: &str = "set_line, replace_lines, insert_after or replace";
    if node.members().is_empty() {
        return Err(format!("an edit must be an object with one of {OPS}, not {}", short(node.text)));
    }
    let named: Vec<(&str, &Node<'_>)> = ["insertafter", "replace", "replacelines", "setline"]
        .into_iter()
        .filter_map(|name| node.member(name).map(|args| (name, args)))
        .collect();
    let (name, args) = match named.as_slice() {
        [(name, args)] if args.is_object() => (Cow::Borrowed(*name), *args),
        [(name, _)] => return Err(format!("`{name}` must hold an object of arguments")),
        [] => match pick(node, &["op", "type", "operation", "action"]).map(value_of) {
            Some(Value::String(name)) => (Cow::Owned(key(&name)), node),
            _ => return Err(format!("an edit has none of {OPS} (it has {})", keys_of(node).join(", "))),
        },
        _ => return Err("an edit names several operations; give each its own object in `edits`".to_string()),
    };
    match name.as_ref() {
        "setline" => {
            let anchor = anchor_of(pick(args, &["anchor", "line", "at"]), "anchor")?;
            let (new_text, stripped) = new_lines(args, &["newtext", "text", "content", "lines", "new"], "new_text")?;
            Ok((Operation::SetLine { anchor, new_text }, stripped))
        }
        "replacelines" => {
            let start = anchor_of(pick(args, &["startanchor", "start", "first", "from"]), "start_anchor")?;
            let end = anchor_of(pick(args, &["endanchor", "end", "last", "to"]), "end_anchor")?;
            let (new_text, stripped) = new_lines(args, &["newtext", "text", "content", "lines", "new"], "new_text")?;
            Ok((Operation::ReplaceLines { start, end, new_text }, stripped))
        }
        "insertafter" => {
            let anchor = anchor_of(pick(args, &["anchor", "after", "line", "at"]), "anchor")?;
            let (text, stripped) = new_lines(args, &["text", "newtext", "content", "lines", "new"], "text")?;
            Ok((Operation::InsertAfter { anchor, text }, stripped))
        }
        "replace" => {
            let old = pick(args, &["oldtext", "old", "search", "find"]).ok_or("`old_text` is missing")?;
            let new = pick(args, &["newtext", "new", "text", "replace"]).ok_or("`new_text` is missing")?;
            let ((old_lines, old_stripped), (new_lines, new_stripped)) =
                (new_text(old, "old_text")?, new_text(new, "new_text")?);
            let stripped = old_stripped || new_stripped;
            let joined = |text: NewText| text.lines().map(|lines| joined_lines(&lines.iter().collect::<Vec<_>>()));
            let (old_text, new_text) = (joined(old_lines)?, joined(new_lines)?);
            if old_text.trim().is_empty() {
                return Err("`old_text` is empty; to add lines use insert_after with an anchor".into());
            }
            Ok((Operation::Replace { old_text, new_text }, stripped))
        }
        other => Err(format!("unknown operation `{other}`; use {OPS}")),
    }
}

/// A value for a message: compact JSON, cut at 40 characters.
fn short(raw: &str) -> String {
    let text = serde_json::from_str::<Value>(raw).map_or_else(|_| raw.trim().to_string(), |v| v.to_string());
    if text.chars().count() > 40 { format!("{}…", text.chars().take(40).collect::<String>()) } else { text }
}

struct Reader<'r> {
    reply: &'r str,
    map: SourceMap,
    out: Parsed<HashEdit>,
    /// Byte ranges of the reply already read as JSON.
    taken: Vec<(usize, usize)>,
    /// Whether the host shows the edits' summaries (else they are left empty).
    summaries: bool,
}

impl<'r> Reader<'r> {
    fn error(&mut self, start: usize, end: usize, message: String, hint: &str) {
        let span = self.map.span(start, end);
        let message = format!("reply line {}: {message}", span.first_line);
        self.out.diagnostics.push(Diagnostic::error(message, Some(span)).with_hint(hint));
    }

    fn cut_off(&mut self, start: usize, end: usize, inside: &str) {
        let span = self.map.span(start, end);
        let inside = format!("{inside} (reply line {}): the JSON ends before it is complete", span.first_line);
        self.out.diagnostics.push(Diagnostic::cut_off(inside, Some(span)));
    }

    /// The JSON value at the start of `text` (an edit object, or an array
    /// of them), read once into a tree, not once per level it nests in;
    /// where it ends. An array is read whole first (nothing of it is used
    /// if it is broken), then item by item, each its own tree: a block that
    /// is one array of file objects is never one tree.
    fn top_value(&mut self, text: &'r str, strict: bool) -> Result<usize, NodeError> {
        if text.starts_with('[') {
            let end = Node::skip_prefix(text)?;
            if let Some(mut items) = ArrayItems::of(&text[..end]) {
                items.try_for_each(|item| item.map(|file| self.node(&file, strict, 1)))?;
            }
            return Ok(end);
        }
        let (node, end) = Node::parse_prefix(text)?;
        self.node(&node, strict, 0);
        Ok(end)
    }

    fn node(&mut self, node: &Node<'r>, strict: bool, depth: usize) {
        let start = offset_in(self.reply, node.text);
        let end = start + node.text.len();
        match &node.kind {
            Kind::Array(_) if depth > 1 && strict => {
                self.error(start, end, "edit objects nest too deeply".into(), HINT);
            }
            Kind::Array(_) if depth > 1 => {}
            Kind::Array(items) => items.iter().for_each(|item| self.node(item, strict, depth + 1)),
            Kind::Object(_) => self.file_object(start, end, node),
            other if strict => {
                let what = match other {
                    Kind::String => "a string",
                    Kind::Number => "a number",
                    Kind::Bool(_) => "true or false",
                    _ => "null",
                };
                self.error(start, end, format!("the JSON value is {what}, not an edit object"), HINT);
            }
            _ => {}
        }
    }

    fn file_object(&mut self, start: usize, end: usize, node: &Node<'r>) {
        self.taken.push((start, end));
        let path = pick(node, &["path", "file", "filepath", "filename"]);
        let edits = pick(node, &["edits", "changes", "operations"]);
        let (path, edits) = match (path, edits) {
            (Some(path), Some(edits)) => (path, edits),
            (None, Some(_)) => {
                return self.error(start, end, "the edit object has no \"path\"".into(), HINT);
            }
            (Some(_), None) => {
                return self.error(start, end, "the object has no \"edits\" list".into(), HINT);
            }
            _ => return,
        };
        let path = match path.as_str() {
            Some(p) if !p.trim().is_empty() => normalize(p.trim()),
            _ => {
                return self.error(start, end, format!("\"path\" must be a non-empty string, not {}", path.text), HINT);
            }
        };
        // The file tag the view printed (`"tag": "@3fa9c1"`): which version
        // the anchors were read from.
        let tag = pick(node, &["tag", "version", "base"])
            .and_then(|v| v.as_str())
            .map(|t| t.trim().trim_start_matches('@').to_ascii_lowercase())
            .filter(|t| !t.is_empty());
        let Some(items) = edits.items() else {
            return self.error(start, end, format!("\"edits\" of {path} must be a list of edit objects"), HINT);
        };
        if items.is_empty() {
            let span = self.map.span(start, end);
            self.out.diagnostics.push(Diagnostic::warning(
                format!("reply line {}: the edit object for {path} has an empty \"edits\" list", span.first_line),
                Some(span),
            ));
        }
        for item in items {
            let text = item.text;
            let s = offset_in(self.reply, text);
            let e = s + text.len();
            let span = self.map.span(s, e);
            let parsed = operation(item);
            match parsed {
                Ok((op, stripped)) => {
                    // Labelled once every edit is read, in reply order.
                    let label = String::new();
                    self.out.edits.push(ParsedEdit {
                        path: path.clone(),
                        related_paths: Vec::new(),
                        span,
                        summary: if self.summaries { op.summary() } else { String::new() },
                        op: HashEdit { label, op, stripped_prefixes: stripped, tag: tag.clone() },
                    });
                }
                Err(message) => self.error(s, e, format!("an edit of {path}: {message}"), HINT),
            }
        }
    }

    /// Every JSON value in a fenced block's body.
    fn fence_body(&mut self, body: &'r str, strict: bool, closed: bool) {
        let mut at = 0;
        loop {
            at += json::space_len(&body[at..]);
            if at == body.len() {
                break;
            }
            match self.top_value(&body[at..], strict) {
                Ok(end) => at += end,
                Err(e) => {
                    if strict {
                        let body_start = offset_in(self.reply, body);
                        let (start, end) = (body_start + at, body_start + body.len());
                        // JSON that ends with its fence still open was cut off.
                        if e.is_eof() && !closed {
                            self.cut_off(start, end, "inside the JSON of this block");
                        } else {
                            self.error(start, end, format!("the JSON in this block does not parse: {e}"), HINT);
                        }
                    }
                    break;
                }
            }
        }
    }

    /// Objects written without a fence: `{` followed by a `"path"` or
    /// `"edits"` key, or a reply that is a bare JSON array.
    fn bare(&mut self, fences: &[(usize, usize)]) {
        let reply = self.reply;
        let bytes = reply.as_bytes();
        let mut attempts = 0;
        let mut i = 0;
        // From one `{` or `[` to the next; a fenced block or a value already
        // read is skipped whole, not byte by byte.
        while let Some(found) = memchr::memchr2(b'{', b'[', &bytes[i..]) {
            i += found;
            if let Some(&(_, end)) = fences.iter().chain(&self.taken).find(|&&(s, e)| s <= i && i < e) {
                i = end;
                continue;
            }
            let c = bytes[i];
            let candidate = (c == b'{' && opens_edit_object(&reply[i + 1..]))
                || (c == b'[' && reply[..i].trim().is_empty() && reply[i + 1..].trim_start().starts_with('{'));
            if !candidate {
                i += 1;
                continue;
            }
            attempts += 1;
            if attempts > MAX_BARE_ATTEMPTS {
                let end = reply.len();
                self.error(i, end, "too many unreadable JSON objects; stopped reading here".into(), HINT);
                return;
            }
            match self.top_value(&reply[i..], true) {
                Ok(end) => {
                    let end = i + end;
                    self.taken.push((i, end));
                    i = end.max(i + 1);
                }
                Err(e) => {
                    let line_end = reply[i..].find('\n').map_or(reply.len(), |n| i + n);
                    if e.is_eof() {
                        self.cut_off(i, reply.len(), "inside a JSON edit object");
                        return;
                    }
                    self.error(i, line_end, format!("a JSON edit object does not parse: {e}"), HINT);
                    i += 1;
                }
            }
        }
    }
}

const HINT: &str = "write one JSON object per file, {\"path\": \"src/a.rs\", \"edits\": [...]}, each edit one of \
                    set_line, replace_lines, insert_after or replace, in a ```json block";

fn opens_edit_object(after: &str) -> bool {
    let rest = after.trim_start();
    let Some(rest) = rest.strip_prefix('"') else {
        return false;
    };
    ["path\"", "file\"", "file_path\"", "filePath\"", "edits\""].iter().any(|k| rest.starts_with(k))
}

/// Read every edit in `reply`; summaries are made if `summaries`.
pub fn parse(reply: &str, summaries: bool) -> Parsed<HashEdit> {
    let mut reader = Reader { reply, map: SourceMap::new(reply), out: Parsed::default(), taken: Vec::new(), summaries };
    let mut fence_ranges = Vec::new();
    for fence in fenced_blocks(reply) {
        fence_ranges.push((fence.start, fence.end));
        if is_shell_info(fence.info) {
            let command = fence.body.trim_end().to_string();
            if !command.is_empty() {
                let span = reader.map.span(fence.start, fence.end);
                reader.out.commands.push(SuggestedCommand { command, span });
            }
            continue;
        }
        let lang = fence.info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
        let trimmed = fence.body.trim_start();
        let looks_json = trimmed.starts_with('{') || trimmed.starts_with('[');
        let strict = matches!(lang.as_str(), "json" | "jsonc" | "json5" | "hashline")
            || (looks_json && fence.body.contains("\"edits\""));
        if looks_json {
            reader.fence_body(fence.body, strict, fence.closed);
        }
    }
    reader.bare(&fence_ranges);
    // Fenced and bare edits are found in two passes. Sorted only when they
    // are out of order: the sort's scratch space is half the edits again.
    if !reader.out.edits.is_sorted_by_key(|e| e.span.start) {
        reader.out.edits.sort_by_key(|e| e.span.start);
    }
    for (index, edit) in reader.out.edits.iter_mut().enumerate() {
        edit.op.label = message!("edit ", index + 1, " (reply line ", edit.span.first_line, ")");
    }
    reader.out.diagnostics.sort_by_key(|d| d.span.map(|s| s.start));
    reader.out
}
