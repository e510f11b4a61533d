//! Reading tool calls: the JSON values of a reply (see
//! [`agent_apply_sdk::json`]), envelopes unwrapped, and each call's
//! arguments recognised by their shape rather than by the tool's name, since
//! harnesses rename tools freely.

use std::borrow::Cow;
use std::collections::BTreeMap;

use agent_apply_sdk::fence::{fenced_blocks, is_shell_info};
use agent_apply_sdk::json::json_values;
use agent_apply_sdk::paths::normalize;
use agent_apply_sdk::prelude::*;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::{Action, Call, Replacement};

/// How deeply arrays and message objects may nest around a call.
const MAX_DEPTH: usize = 6;

const HINT: &str = "send each tool call as a JSON object: its arguments ({\"file_path\", \"old_string\", \
                    \"new_string\"}, {\"command\": \"str_replace\", \"path\", ...}) or an envelope \
                    ({\"name\": \"Edit\", \"input\": {...}}); several as an array or one per line";

/// What one call amounts to.
enum Found {
    Edit {
        path: String,
        tool: String,
        action: Action,
    },
    /// A tool call that is no edit (`view`, `Read`, ...): reported, not applied.
    NotEdit(String),
    /// A shell tool's command: shown, never run.
    Command(String),
    /// JSON that is no tool call.
    Nothing,
}

/// Read every call in `reply`. Absolute paths under `root` become
/// repo-relative; others stay absolute for the host's path policy to refuse.
pub fn parse(reply: &str, root: Option<&str>) -> Parsed<Call> {
    let found = json_values(reply);
    // Sized once, for a call per JSON value (an array of calls grows it):
    // grown by doubling, a reply of 20,000 calls had the old and new vectors
    // side by side in the plugin's memory. No call is shorter than
    // `{"path":"a","content":""}`, so a reply of tiny values reserves no
    // more than so many calls could need.
    let calls = found.values.len().min(reply.len() / 25);
    let out = Parsed { edits: Vec::with_capacity(calls), ..Parsed::default() };
    let mut reader = Reader { reply, map: SourceMap::new(reply), root, out };
    for problem in &found.problems {
        let span = reader.map.span(problem.at, problem.end);
        // A reply that ends inside a call was cut off: refused whole, and
        // the model is asked for the calls from this one on.
        let diagnostic = if problem.cut_off {
            Diagnostic::cut_off(format!("inside the tool call's JSON at reply line {}", span.first_line), Some(span))
        } else {
            let message = format!("reply line {}: the JSON does not parse: {}", span.first_line, problem.message);
            Diagnostic::error(message, Some(span)).with_hint(HINT)
        };
        reader.out.diagnostics.push(diagnostic);
    }
    for value in &found.values {
        reader.value(value.text.trim_end(), 0);
    }
    for fence in fenced_blocks(reply).into_iter().filter(|f| is_shell_info(f.info)) {
        let command = fence.body.trim_end().to_string();
        if !command.is_empty() {
            reader.out.commands.push(SuggestedCommand { command, span: reader.map.span(fence.start, fence.end) });
        }
    }
    for (number, edit) in (1..).zip(&mut reader.out.edits) {
        edit.op.number = number;
    }
    reader.out.diagnostics.sort_by_key(|d| d.span.map(|s| s.start));
    reader.out
}

struct Reader<'r> {
    reply: &'r str,
    map: SourceMap,
    root: Option<&'r str>,
    out: Parsed<Call>,
}

impl<'r> Reader<'r> {
    /// A call, a list of calls, or a message that holds calls.
    fn value(&mut self, text: &'r str, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        if text.starts_with('[') {
            for item in serde_json::from_str::<Vec<&'r RawValue>>(text).unwrap_or_default() {
                self.value(item.get(), depth + 1);
            }
            return;
        }
        let Ok(fields) = serde_json::from_str::<BTreeMap<String, &'r RawValue>>(text) else { return };
        // An API response or message holds the calls: a Chat Completions
        // response's `choices` and their `message`, its `tool_calls`, an
        // Anthropic message's `content` blocks, a Responses API `output`.
        let holds = |key: &str, inner: &RawValue| match key {
            "message" => inner.get().starts_with('{'),
            _ => inner.get().starts_with('['),
        };
        let inner = ["choices", "message", "tool_calls", "content", "output"]
            .iter()
            .find_map(|k| fields.get(*k).filter(|inner| holds(k, inner)));
        if let Some(inner) = inner {
            return self.value(inner.get(), depth + 1);
        }
        let Ok(object) = serde_json::from_str::<Map<String, Value>>(text) else { return };
        let start = (text.as_ptr() as usize).saturating_sub(self.reply.as_ptr() as usize).min(self.reply.len());
        let span = self.map.span(start, start + text.len());
        match envelope(&object).and_then(|(name, args)| classify(name.as_deref(), &args)) {
            Ok(Found::Edit { path, tool, action }) => {
                let path = repo_relative(&path, self.root);
                let summary = format!("{tool}: {}", action.summary());
                self.out.edits.push(ParsedEdit {
                    path,
                    related_paths: Vec::new(),
                    span,
                    summary,
                    op: Call { number: 0, reply_line: span.first_line, tool, action },
                });
            }
            Ok(Found::NotEdit(what)) => {
                let message = format!("reply line {}: {what}; nothing was done for it", span.first_line);
                self.out.diagnostics.push(Diagnostic::warning(message, Some(span)));
            }
            Ok(Found::Command(command)) => self.out.commands.push(SuggestedCommand { command, span }),
            Ok(Found::Nothing) => {}
            Err(message) => {
                let message = format!("reply line {}: {message}", span.first_line);
                self.out.diagnostics.push(Diagnostic::error(message, Some(span)).with_hint(HINT));
            }
        }
    }
}

/// The tool's name (if the call names it) and its arguments: an Anthropic
/// `tool_use` (`name`, `input`), an OpenAI function call (`name`,
/// `arguments` as a JSON string), a Chat Completions tool call (`function`),
/// or bare arguments.
fn envelope(object: &Map<String, Value>) -> Result<(Option<String>, Arguments<'_>), String> {
    let holder = match object.get("function") {
        Some(Value::Object(function)) => function,
        _ => object,
    };
    let name = holder.get("name").and_then(Value::as_str);
    let args = ["input", "arguments", "parameters", "args"].iter().find_map(|k| holder.get(*k));
    match (name, args) {
        (Some(name), Some(Value::Object(args))) => Ok((Some(name.to_string()), Cow::Borrowed(args))),
        (Some(name), Some(Value::String(text))) => match serde_json::from_str::<Map<String, Value>>(text) {
            Ok(args) => Ok((Some(name.to_string()), Cow::Owned(args))),
            Err(e) => Err(format!("the arguments of the `{name}` call are not a JSON object: {e}")),
        },
        (Some(name), Some(other)) => Err(format!("the arguments of the `{name}` call must be an object, not {other}")),
        _ => Ok((None, Cow::Borrowed(object))),
    }
}

/// A call's arguments: borrowed from the call, or parsed from the string an
/// OpenAI function call holds them in.
type Arguments<'a> = Cow<'a, Map<String, Value>>;

/// Whether key `k` is `name` once without case, `_` or `-` (`old_string`,
/// `oldString` and `old-string` are `oldstring`), compared without building
/// that form: a reply of thousands of calls names a few keys in each.
fn key_is(k: &str, name: &str) -> bool {
    let mut normal = k.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase);
    name.chars().all(|c| normal.next() == Some(c)) && normal.next().is_none()
}

/// An object's fields, looked up by [`key_is`].
struct Fields<'v>(&'v Map<String, Value>);

impl<'v> Fields<'v> {
    fn get(&self, name: &str) -> Option<&'v Value> {
        // The last such key, as when a later duplicate overwrote an earlier one.
        self.0.iter().rfind(|(k, _)| key_is(k, name)).map(|(_, v)| v)
    }
}

const OLD: &[&str] = &["oldstring", "oldstr"];
const NEW: &[&str] = &["newstring", "newstr"];
const PATH: &[&str] = &["filepath", "path", "file"];

fn pick<'v>(f: &Fields<'v>, names: &[&str]) -> Option<&'v Value> {
    names.iter().find_map(|n| f.get(n))
}

/// The string under one of `names` (`what` is the name messages use).
fn text(f: &Fields<'_>, names: &[&str], what: &str) -> Result<Option<String>, String> {
    match pick(f, names) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{what}` must be a string, not {other}")),
    }
}

fn required(f: &Fields<'_>, names: &[&str], what: &str) -> Result<String, String> {
    text(f, names, what)?.ok_or_else(|| format!("`{what}` is missing"))
}

/// What the arguments ask for, by their shape; `name` only tells shells
/// and other tools apart.
fn classify(name: Option<&str>, args: &Map<String, Value>) -> Result<Found, String> {
    let f = Fields(args);
    let tool = name.unwrap_or("");
    if let Some(Value::String(command)) = f.get("command") {
        if let Some(found) = text_editor(command, &f, tool)? {
            return Ok(found);
        }
        if ["bash", "shell", "run_command", "terminal"].contains(&tool.to_ascii_lowercase().as_str()) {
            return Ok(Found::Command(command.clone()));
        }
    }
    let multi = matches!(pick(&f, &["edits"]), Some(Value::Array(items))
        if items.iter().all(|item| matches!(item, Value::Object(o) if pick(&Fields(o), OLD).is_some())));
    let action = if multi && pick(&f, PATH).is_some() {
        let Some(Value::Array(items)) = pick(&f, &["edits"]) else { unreachable!("checked above") };
        if items.is_empty() {
            return Err("the MultiEdit call has an empty `edits` list".into());
        }
        let edits = items.iter().filter_map(Value::as_object).map(|o| replacement(&Fields(o), false));
        Some(("MultiEdit", Action::MultiEdit { edits: edits.collect::<Result<_, _>>()? }))
    } else if pick(&f, OLD).is_some() {
        Some(("Edit", Action::Replace(replacement(&f, false)?)))
    } else if let (Some(content), Some(_)) = (text(&f, &["content", "filetext"], "content")?, pick(&f, PATH)) {
        Some(("Write", Action::Write { content, overwrite: true }))
    } else {
        None
    };
    match action {
        Some((shape, action)) => Ok(Found::Edit { path: path(&f)?, tool: display(tool, shape), action }),
        None if edits_files(tool) => Err(format!(
            "the `{tool}` call looks like an edit, but its arguments are none this format reads \
             (old_string/new_string, edits, content, or a text editor command)"
        )),
        None if !tool.is_empty() => Ok(Found::NotEdit(format!("the `{tool}` call is not an edit"))),
        None => Ok(Found::Nothing),
    }
}

/// Whether a tool's name says it changes files (`NotebookEdit`,
/// `apply_patch`): skipping such a call would leave out part of the change.
/// Claude Code's `TodoWrite` writes a to-do list, not a file.
fn edits_files(tool: &str) -> bool {
    let tool = tool.to_ascii_lowercase();
    let verbs = ["edit", "write", "patch", "replace", "create", "insert", "delete", "rename"];
    !tool.contains("todo") && verbs.iter().any(|w| tool.contains(w))
}

fn display(tool: &str, shape: &str) -> String {
    if tool.is_empty() { shape.to_string() } else { tool.to_string() }
}

fn path(f: &Fields<'_>) -> Result<String, String> {
    match text(f, PATH, "file_path")? {
        Some(p) if !p.trim().is_empty() => Ok(p.trim().to_string()),
        _ => Err("the call names no file: give `file_path` (or `path`)".into()),
    }
}

fn replacement(f: &Fields<'_>, new_optional: bool) -> Result<Replacement, String> {
    let old = required(f, OLD, "old_string")?;
    let new = match text(f, NEW, "new_string")? {
        Some(new) => new,
        None if new_optional => String::new(),
        None => return Err("`new_string` is missing (use \"\" to delete the text)".into()),
    };
    let all = match pick(f, &["replaceall"]) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) if s == "true" || s == "false" => s == "true",
        Some(other) => return Err(format!("`replace_all` must be true or false, not {other}")),
    };
    Ok(Replacement { old, new, all })
}

/// Anthropic's text editor tool (`str_replace_based_edit_tool`); `None`
/// when `command` is none of its commands (a shell tool's, say).
fn text_editor(command: &str, f: &Fields<'_>, tool: &str) -> Result<Option<Found>, String> {
    let action = match command {
        "str_replace" => Action::Replace(replacement(f, true)?),
        "insert" => {
            let after_line = match pick(f, &["insertline"]) {
                Some(Value::Number(n)) if n.is_u64() => n.as_u64().unwrap_or_default(),
                Some(Value::String(s)) if s.trim().parse::<u64>().is_ok() => s.trim().parse().unwrap_or_default(),
                Some(other) => return Err(format!("`insert_line` must be a line number (0 for the top), not {other}")),
                None => return Err("`insert_line` is missing (0 inserts at the top of the file)".into()),
            };
            let text = text(f, &["inserttext", "newstr", "text"], "insert_text")?.ok_or("`insert_text` is missing")?;
            Action::Insert { after_line, text }
        }
        "create" => Action::Write { content: required(f, &["filetext", "content"], "file_text")?, overwrite: false },
        "view" => {
            let what = text(f, PATH, "path")?.unwrap_or_default();
            return Ok(Some(Found::NotEdit(format!("`view` of {what} reads a file; it is not an edit"))));
        }
        "undo_edit" => {
            let what = text(f, PATH, "path")?.unwrap_or_default();
            return Err(format!(
                "`undo_edit` of {what} cannot be replayed: it undoes an earlier edit of the agent's session, \
                 which this run does not have; leave it out and send the edits that should remain \
                 (`git agent-apply undo` reverts a whole applied reply)"
            ));
        }
        _ => return Ok(None),
    };
    Ok(Some(Found::Edit { path: path(f)?, tool: display(tool, command), action }))
}

/// `path` relative to the repository when it is an absolute path inside
/// `root`; otherwise as written (an absolute path outside stays absolute,
/// and the host's path policy refuses it with its reason).
pub fn repo_relative(path: &str, root: Option<&str>) -> String {
    let path = normalize(path);
    let root = root.map(|r| normalize(r.trim())).filter(|r| r.starts_with('/') || r.get(1..2) == Some(":"));
    if let Some(root) = root {
        let root = root.trim_end_matches('/');
        if let Some(rest) = path.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
            let rest = rest.trim_start_matches('/');
            if !rest.is_empty() {
                return normalize(rest);
            }
        }
    }
    path
}
