//! Reading tool calls: the JSON values of a reply (see
//! [`agent_apply_sdk::json`]), envelopes unwrapped, and each call's
//! arguments recognised by their shape rather than by the tool's name, since
//! harnesses rename tools freely.

use std::borrow::Cow;

use agent_apply_sdk::fence::{fenced_blocks, is_shell_info};
use agent_apply_sdk::json::{
    ArrayItems, JsonFound, JsonString, Kind, Node, is_json_reply, json_values, json_values_from, key_is, space_len,
    unescaped,
};
use agent_apply_sdk::message;
use agent_apply_sdk::paths::normalize;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{line_count, offset_in};
use serde_json::{Map, Value};

use crate::{Action, Call, Replacement, Text};

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
        action: Action<Text>,
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
/// Summaries are made if `summaries`.
pub fn parse(reply: &str, root: Option<&str>, summaries: bool) -> Parsed<Call> {
    let mut reader = Reader::new(reply, root, summaries);
    // What is left to read the way `json_values` finds it: all of a reply
    // in prose; a JSON reply's values from the first that one pass cannot read.
    let found = if is_json_reply(reply) {
        // One call a line at most, as in JSON Lines (a pretty-printed call
        // spans several): sized with room, the vector is not grown by
        // doubling, which left the old and new vectors side by side in the
        // plugin's memory. No call is shorter than `{"path":"a","content":""}`.
        reader.out.edits.reserve(line_count(reply).min(reply.len() / 25));
        reader.stream()
    } else {
        let found = json_values(reply);
        reader.out.edits.reserve(found.values.len().min(reply.len() / 25));
        found
    };
    reader.finish(&found)
}

/// `parsed`, read with no root and no summaries (as `detect` reads a
/// reply), as [`parse`] with `root` and `summaries` reads the same reply:
/// paths under `root` made repo-relative, summaries made if `summaries`.
pub fn rooted(mut parsed: Parsed<Call>, root: Option<&str>, summaries: bool) -> Parsed<Call> {
    for edit in &mut parsed.edits {
        if root.is_some() {
            edit.path = repo_relative(&edit.path, root);
        }
        if summaries {
            edit.summary = message!(&edit.op.tool, ": ", edit.op.action.summary());
        }
    }
    parsed
}

struct Reader<'r> {
    reply: &'r str,
    map: SourceMap,
    root: Option<&'r str>,
    out: Parsed<Call>,
    /// Whether the host shows the edits' summaries (else they are left empty).
    summaries: bool,
}

impl<'r> Reader<'r> {
    fn new(reply: &'r str, root: Option<&'r str>, summaries: bool) -> Self {
        Reader { reply, map: SourceMap::new(reply), root, out: Parsed::default(), summaries }
    }

    /// The calls of `found`'s values, its problems, the reply's shell
    /// blocks, and the result in order.
    fn finish(mut self, found: &JsonFound<'r>) -> Parsed<Call> {
        for problem in &found.problems {
            let span = self.map.span(problem.at, problem.end);
            // A reply that ends inside a call was cut off: refused whole, and
            // the model is asked for the calls from this one on.
            let diagnostic = if problem.cut_off {
                Diagnostic::cut_off(
                    format!("inside the tool call's JSON at reply line {}", span.first_line),
                    Some(span),
                )
            } else {
                let message = format!("reply line {}: the JSON does not parse: {}", span.first_line, problem.message);
                Diagnostic::error(message, Some(span)).with_hint(HINT)
            };
            self.out.diagnostics.push(diagnostic);
        }
        for value in &found.values {
            self.value(value.text.trim_end());
        }
        for fence in fenced_blocks(self.reply).into_iter().filter(|f| is_shell_info(f.info)) {
            let command = fence.body.trim_end().to_string();
            if !command.is_empty() {
                self.out.commands.push(SuggestedCommand { command, span: self.map.span(fence.start, fence.end) });
            }
        }
        for (number, edit) in (1..).zip(&mut self.out.edits) {
            edit.op.number = number;
        }
        self.out.diagnostics.sort_by_key(|d| d.span.map(|s| s.start));
        self.out
    }

    /// The values of a JSON reply, each read once into its tree (an array's
    /// items one by one) and its calls taken, where `json_values` read each
    /// twice: once to find where it ends, once into the tree. At the first
    /// value that one pass cannot read, what it took from that value is put
    /// back and the rest is left to `json_values_from`, which finds what
    /// `json_values` would have there: the result is the same either way.
    fn stream(&mut self) -> JsonFound<'r> {
        let reply = self.reply;
        let mut at = 0;
        loop {
            at += space_len(&reply[at..]);
            if at == reply.len() {
                return JsonFound::default();
            }
            let taken = (self.out.edits.len(), self.out.diagnostics.len(), self.out.commands.len());
            let rest = &reply[at..];
            let read = match ArrayItems::of(rest) {
                Some(mut items) => {
                    items.try_for_each(|item| item.map(|call| self.node(&call, 1))).map(|()| items.end())
                }
                None => Node::parse_prefix(rest).map(|(value, end)| {
                    self.node(&value, 0);
                    end
                }),
            };
            match read {
                Ok(length) => at += length,
                Err(_) => {
                    self.out.edits.truncate(taken.0);
                    self.out.diagnostics.truncate(taken.1);
                    self.out.commands.truncate(taken.2);
                    return json_values_from(reply, at);
                }
            }
        }
    }

    /// A JSON value of the reply (text serde_json read as one), read once
    /// into a tree: not once more per level its strings nest in.
    /// An array's items each get a tree of their own, in turn: a reply
    /// that is one array of thousands of calls is never one tree.
    fn value(&mut self, text: &'r str) {
        let read = match ArrayItems::of(text) {
            Some(mut items) => items.try_for_each(|item| item.map(|call| self.node(&call, 1))),
            None => Node::parse(text).map(|value| self.node(&value, 0)),
        };
        // What the reply's reader skipped, the tree reads too, unless a key
        // does not unescape.
        if let Err(error) = read {
            let start = offset_in(self.reply, text);
            let span = self.map.span(start, start + text.len());
            let message = format!("reply line {}: the JSON cannot be read: {error}", span.first_line);
            self.out.diagnostics.push(Diagnostic::error(message, Some(span)).with_hint(HINT));
        }
    }

    /// A call, a list of calls, or a message that holds calls.
    fn node(&mut self, node: &Node<'r>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(items) = node.items() {
            items.iter().for_each(|item| self.node(item, depth + 1));
            return;
        }
        if !node.is_object() {
            return;
        }
        let fields = Fields::Raw(node);
        // An API response or message holds the calls: a Chat Completions
        // response's `choices` and their `message`, its `tool_calls`, an
        // Anthropic message's `content` blocks, a Responses API `output`.
        let holds = |key: &str, inner: &Node<'_>| match key {
            "message" => inner.is_object(),
            _ => inner.items().is_some(),
        };
        let inner = ["choices", "message", "tool_calls", "content", "output"]
            .iter()
            .find_map(|k| node.get(k).filter(|inner| holds(k, inner)));
        if let Some(inner) = inner {
            return self.node(inner, depth + 1);
        }
        let start = offset_in(self.reply, node.text);
        let span = self.map.span(start, start + node.text.len());
        match read_call(&fields) {
            Ok(Found::Edit { path, tool, action }) => {
                let path = repo_relative(&path, self.root);
                let summary = if self.summaries { message!(tool, ": ", action.summary()) } else { String::new() };
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

/// A call's fields: as the reply wrote them, so that a text is kept as the
/// JSON string it is (unescaped only when applied: a reply of 20,000 calls
/// holds no unescaped copy of each `old_string` and `new_string`), or parsed
/// from the JSON string an OpenAI function call sends its arguments in.
enum Fields<'a> {
    /// An object of the reply (of a key written twice, the last counts).
    Raw(&'a Node<'a>),
    Parsed(&'a Map<String, Value>),
}

impl<'a> Fields<'a> {
    /// The field whose key is `name` once without case, `_` or `-` ([`key_is`]).
    fn get(&self, name: &str) -> Option<Json<'a>> {
        // The last such key, as when a later duplicate overwrote an earlier one.
        match self {
            Fields::Raw(node) => node.member(name).map(Json::Raw),
            Fields::Parsed(fields) => fields.iter().rfind(|(k, _)| key_is(k, name)).map(|(_, v)| Json::Parsed(v)),
        }
    }

    /// The field whose key is exactly `key` (an envelope's).
    fn exact(&self, key: &str) -> Option<Json<'a>> {
        match self {
            Fields::Raw(node) => node.get(key).map(Json::Raw),
            Fields::Parsed(fields) => fields.get(key).map(Json::Parsed),
        }
    }
}

/// One JSON value of a call, as the reply wrote it or parsed.
#[derive(Clone, Copy)]
enum Json<'a> {
    Raw(&'a Node<'a>),
    Parsed(&'a Value),
}

impl<'a> Json<'a> {
    /// The string, unescaped; `None` when the value is no string.
    fn string(self) -> Result<Option<Cow<'a, str>>, String> {
        match self {
            Json::Raw(node) => (node.kind == Kind::String).then(|| unescaped(node.text)).transpose(),
            Json::Parsed(value) => Ok(value.as_str().map(Cow::Borrowed)),
        }
    }

    /// The string as a text to write: as the reply wrote it when it is the
    /// reply's, unescaped when applied. `None` when the value is no string.
    fn text(self) -> Option<Text> {
        match self {
            Json::Raw(node) => JsonString::from_raw(node.text).map(Text::Json),
            Json::Parsed(value) => value.as_str().map(|s| Text::Plain(s.to_string())),
        }
    }

    fn is_null(self) -> bool {
        match self {
            Json::Raw(node) => node.kind == Kind::Null,
            Json::Parsed(value) => value.is_null(),
        }
    }

    /// The value parsed: for what is not text (numbers, booleans) and for
    /// messages, which show it as compact JSON.
    fn value(self) -> Value {
        match self {
            Json::Raw(node) => serde_json::from_str(node.text).unwrap_or(Value::Null),
            Json::Parsed(value) => value.clone(),
        }
    }

    fn object(self) -> Option<Fields<'a>> {
        match self {
            Json::Raw(node) => node.is_object().then_some(Fields::Raw(node)),
            Json::Parsed(value) => value.as_object().map(Fields::Parsed),
        }
    }

    fn array(self) -> Option<Vec<Json<'a>>> {
        match self {
            Json::Raw(node) => node.items().map(|items| items.iter().map(Json::Raw).collect()),
            Json::Parsed(value) => value.as_array().map(|items| items.iter().map(Json::Parsed).collect()),
        }
    }
}

/// A call's arguments.
enum Arguments<'a> {
    /// The call's own fields (bare arguments).
    Call,
    /// An object of the call (`input`, a Chat Completions `function`'s `arguments`).
    Object(Fields<'a>),
    /// Parsed from the JSON string an OpenAI function call holds them in.
    Parsed(Map<String, Value>),
}

/// The tool's name (if the call names it) and its arguments: an Anthropic
/// `tool_use` (`name`, `input`), an OpenAI function call (`name`,
/// `arguments` as a JSON string), a Chat Completions tool call (`function`),
/// or bare arguments.
fn envelope<'a>(call: &Fields<'a>) -> Result<(Option<String>, Arguments<'a>), String> {
    let function = call.exact("function").and_then(Json::object);
    let holder = function.as_ref().unwrap_or(call);
    let name = holder.exact("name").map(Json::string).transpose()?.flatten();
    let args = ["input", "arguments", "parameters", "args"].iter().find_map(|k| holder.exact(k));
    let (Some(name), Some(args)) = (name, args) else { return Ok((None, Arguments::Call)) };
    let name = name.into_owned();
    if let Some(fields) = args.object() {
        return Ok((Some(name), Arguments::Object(fields)));
    }
    match args.string()? {
        Some(text) => match serde_json::from_str::<Map<String, Value>>(&text) {
            Ok(parsed) => Ok((Some(name), Arguments::Parsed(parsed))),
            Err(e) => Err(format!("the arguments of the `{name}` call are not a JSON object: {e}")),
        },
        None => Err(format!("the arguments of the `{name}` call must be an object, not {}", args.value())),
    }
}

/// What a call asks for: [`classify`] of its arguments.
fn read_call(call: &Fields<'_>) -> Result<Found, String> {
    let (name, args) = envelope(call)?;
    let name = name.as_deref();
    match args {
        Arguments::Call => classify(name, call),
        Arguments::Object(fields) => classify(name, &fields),
        Arguments::Parsed(parsed) => classify(name, &Fields::Parsed(&parsed)),
    }
}

const OLD: &[&str] = &["oldstring", "oldstr"];
const NEW: &[&str] = &["newstring", "newstr"];
const PATH: &[&str] = &["filepath", "path", "file"];

fn pick<'a>(f: &Fields<'a>, names: &[&str]) -> Option<Json<'a>> {
    names.iter().find_map(|n| f.get(n))
}

/// The value under one of `names`, unless absent or `null`.
fn given<'a>(f: &Fields<'a>, names: &[&str]) -> Option<Json<'a>> {
    pick(f, names).filter(|json| !json.is_null())
}

fn not_a_string(what: &str, json: Json<'_>) -> String {
    format!("`{what}` must be a string, not {}", json.value())
}

/// The string under one of `names`, unescaped (`what` is the name messages use).
fn string<'a>(f: &Fields<'a>, names: &[&str], what: &str) -> Result<Option<Cow<'a, str>>, String> {
    let Some(json) = given(f, names) else { return Ok(None) };
    match json.string() {
        Ok(Some(s)) => Ok(Some(s)),
        Ok(None) => Err(not_a_string(what, json)),
        Err(e) => Err(format!("`{what}` cannot be read: {e}")),
    }
}

/// A text to write, under one of `names`, kept as the reply wrote it.
fn text(f: &Fields<'_>, names: &[&str], what: &str) -> Result<Option<Text>, String> {
    let Some(json) = given(f, names) else { return Ok(None) };
    json.text().map(Some).ok_or_else(|| not_a_string(what, json))
}

fn required(f: &Fields<'_>, names: &[&str], what: &str) -> Result<Text, String> {
    text(f, names, what)?.ok_or_else(|| format!("`{what}` is missing"))
}

/// What the arguments ask for, by their shape; `name` only tells shells
/// and other tools apart.
fn classify(name: Option<&str>, f: &Fields<'_>) -> Result<Found, String> {
    let tool = name.unwrap_or("");
    if let Some(command) = f.get("command").map(Json::string).transpose()?.flatten() {
        if let Some(found) = text_editor(&command, f, tool)? {
            return Ok(found);
        }
        if ["bash", "shell", "run_command", "terminal"].contains(&tool.to_ascii_lowercase().as_str()) {
            return Ok(Found::Command(command.into_owned()));
        }
    }
    // Every item an object that has an old string: a MultiEdit's list.
    let items: Option<Vec<Fields<'_>>> = pick(f, &["edits"])
        .and_then(Json::array)
        .and_then(|items| items.into_iter().map(Json::object).collect::<Option<Vec<_>>>())
        .filter(|items| items.iter().all(|item| pick(item, OLD).is_some()));
    let action = match items {
        Some(items) if pick(f, PATH).is_some() => {
            if items.is_empty() {
                return Err("the MultiEdit call has an empty `edits` list".into());
            }
            let edits = items.iter().map(|item| replacement(item, false));
            Some(("MultiEdit", Action::MultiEdit { edits: edits.collect::<Result<_, _>>()? }))
        }
        _ if pick(f, OLD).is_some() => Some(("Edit", Action::Replace(replacement(f, false)?))),
        _ => match (text(f, &["content", "filetext"], "content")?, pick(f, PATH)) {
            (Some(content), Some(_)) => Some(("Write", Action::Write { content, overwrite: true })),
            _ => None,
        },
    };
    match action {
        Some((shape, action)) => Ok(Found::Edit { path: path(f)?, tool: display(tool, shape), action }),
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
    match string(f, PATH, "file_path")? {
        Some(p) if !p.trim().is_empty() => Ok(p.trim().to_string()),
        _ => Err("the call names no file: give `file_path` (or `path`)".into()),
    }
}

fn replacement(f: &Fields<'_>, new_optional: bool) -> Result<Replacement<Text>, String> {
    let old = required(f, OLD, "old_string")?;
    let new = match text(f, NEW, "new_string")? {
        Some(new) => new,
        None if new_optional => Text::Plain(String::new()),
        None => return Err("`new_string` is missing (use \"\" to delete the text)".into()),
    };
    let all = match pick(f, &["replaceall"]).map(Json::value) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
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
            let line_number = |value: &Value| match value {
                Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            };
            let after_line = match pick(f, &["insertline"]).map(Json::value) {
                Some(value) => line_number(&value)
                    .ok_or_else(|| format!("`insert_line` must be a line number (0 for the top), not {value}"))?,
                None => return Err("`insert_line` is missing (0 inserts at the top of the file)".into()),
            };
            let text = text(f, &["inserttext", "newstr", "text"], "insert_text")?.ok_or("`insert_text` is missing")?;
            Action::Insert { after_line, text }
        }
        "create" => Action::Write { content: required(f, &["filetext", "content"], "file_text")?, overwrite: false },
        "view" => {
            let what = string(f, PATH, "path")?.unwrap_or_default();
            return Ok(Some(Found::NotEdit(format!("`view` of {what} reads a file; it is not an edit"))));
        }
        "undo_edit" => {
            let what = string(f, PATH, "path")?.unwrap_or_default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values a reply's stream is made of: calls (alone, enveloped, in
    /// arrays and messages), JSON that is no call, a key that does not
    /// unescape (JSON a tree cannot read) and text that is no JSON.
    const PIECES: [&str; 12] = [
        r#"{"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}"#,
        r#"{"name": "Edit", "input": {"file_path": "b.py", "old_string": "y\n", "new_string": "z\n"}}"#,
        r#"[{"path": "c.txt", "content": "new\n"}, {"command": "view", "path": "c.txt"}]"#,
        r#"{"choices": [{"message": {"tool_calls": [{"function": {"name": "Write", "arguments": "{\"path\": \"d\", \"content\": \"\"}"}}]}}]}"#,
        r#"{"file_path": "e.py", "old_string": 3}"#,
        r#"{"note": [1, 2.5e3, true, null, "s"]}"#,
        r#"{"bad\q": 1, "path": "f", "content": ""}"#,
        r#"[{"path": "g", "content": ""}, {"k\x": 1}, {"path": "h", "content": ""}]"#,
        "42",
        r#""text""#,
        "{not json}",
        r#"[{"path": "i", "content": ""},"#,
    ];

    proptest! {
        /// One pass over a JSON reply finds what reading each value twice
        /// (`json_values`, then its tree) found: the same calls,
        /// diagnostics and commands, however the reply breaks or ends.
        #[test]
        fn one_pass_over_a_json_reply_reads_what_two_passes_read(
            picks in proptest::collection::vec((0..PIECES.len(), prop_oneof![Just("\n"), Just(" "), Just("")]), 1..7),
            lead in prop_oneof![Just(""), Just("  \n")],
            cut in proptest::option::of(0.0..1.0f64),
        ) {
            let mut reply: String = lead.to_string();
            for (piece, gap) in picks {
                reply.push_str(PIECES[piece]);
                reply.push_str(gap);
            }
            if let Some(cut) = cut {
                let mut at = (reply.len() as f64 * cut) as usize;
                while !reply.is_char_boundary(at) {
                    at -= 1;
                }
                reply.truncate(at);
            }
            let twice = Reader::new(&reply, None, true).finish(&json_values(&reply));
            prop_assert_eq!(parse(&reply, None, true), twice);
        }

        /// What `detect` read (no root, no summaries), rooted, is what
        /// `parse` reads with the root and summaries the host gives: the
        /// reading `detect` keeps stands in for `parse`'s.
        #[test]
        fn a_reading_made_by_detect_rooted_is_what_parse_reads(
            picks in proptest::collection::vec(0..PIECES.len() + ROOTED_PIECES.len(), 1..6),
            root in proptest::option::of(prop_oneof![
                Just("/home/u/repo"), Just("/home/u/repo/"), Just(" /home/u/repo "), Just("/home//u/./repo"),
                Just("C:/work/repo"), Just("relative/root"), Just("/"),
            ]),
            summaries in any::<bool>(),
        ) {
            let reply: Vec<&str> = picks.iter().map(|&at| *PIECES.get(at).unwrap_or_else(|| &ROOTED_PIECES[at - PIECES.len()])).collect();
            let reply = reply.join("\n");
            prop_assert_eq!(rooted(parse(&reply, None, false), root, summaries), parse(&reply, root, summaries));
        }
    }

    /// Calls whose paths a root changes, or looks as if it might.
    const ROOTED_PIECES: [&str; 7] = [
        r#"{"file_path": "/home/u/repo/src/a.py", "old_string": "x", "new_string": "y"}"#,
        r#"{"file_path": "/home/u/repo//src/./b.py", "content": "z"}"#,
        r#"{"command": "create", "path": "/home/u/repo/../repo/c.txt", "file_text": "c"}"#,
        r#"{"filePath": "/home/u/repository/d.py", "oldString": "", "newString": "d"}"#,
        r#"{"file_path": "C:/work/repo/e.rs", "content": ""}"#,
        r#"{"file_path": "/home/u/repo", "content": ""}"#,
        r#"{"path": "relative/root/f", "content": "", "command": "create", "file_text": "f"}"#,
    ];
}
