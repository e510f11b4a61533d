//! Where patches sit in a reply: the raw text, a fenced block, a shell
//! heredoc (`apply_patch <<'EOF'`, `cd sub && apply_patch <<EOF`), or a tool
//! call's JSON (`{"input": …}`, `{"patch": …}`, a function call whose
//! `arguments` string holds one, a shell call's `command` array).

use std::borrow::Cow;
use std::ops::Range;

use agent_apply_sdk::fence::Fence;
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{contains, lines_with_endings, strip_ending, trim, trim_start};
use serde_json::Value;

pub(crate) const BEGIN: &str = "*** Begin Patch";
pub(crate) const END: &str = "*** End Patch";
/// The markers that open a file section.
pub(crate) const FILE_MARKERS: [&str; 3] = ["*** Add File:", "*** Delete File:", "*** Update File:"];

/// A text that holds patches: the reply, or a string decoded from a tool call.
pub(crate) struct Source<'a> {
    pub text: Cow<'a, str>,
    /// Byte offset of `text` in the reply when it is a slice of it; `None`
    /// for a decoded string, whose positions only the whole call's span has.
    pub offset: Option<usize>,
    /// The tool call (or the whole reply) in the reply.
    pub span: Span,
    /// The text ends where its writer ended it (a complete JSON string).
    pub closed: bool,
}

/// How a patch's text stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// At `*** End Patch`.
    EndPatch,
    /// At its heredoc's delimiter line, without `*** End Patch`.
    Delimiter,
    /// At the end of a closed fence or a complete tool-call string.
    Closed,
    /// At the end of the text, or where another patch begins: the grammar
    /// decides whether prose ended it or the reply was cut off.
    Open,
}

/// One patch found in a [`Source`].
pub(crate) struct Located {
    /// Byte range (in the source text) of the patch's lines, markers excluded.
    pub body: Range<usize>,
    /// The same lines, as indexes into [`Patches::lines`].
    pub lines: Range<usize>,
    /// Byte offset of its `*** Begin Patch` line (or first file marker).
    pub begin: usize,
    pub ending: Ending,
    /// The directory of a `cd DIR && apply_patch` invocation, as written.
    pub cwd: Option<String>,
}

fn is_file_marker(trimmed: &str) -> bool {
    FILE_MARKERS.iter().any(|m| trimmed.starts_with(m))
}

/// Whether text holds a patch at all (for detection and JSON strings).
pub(crate) fn mentions_patch(text: &str) -> bool {
    contains(text, BEGIN) || FILE_MARKERS.iter().any(|m| contains(text, m))
}

/// The texts of `reply` that may hold patches, and problems with its JSON.
/// `fences` are the reply's fenced blocks.
pub(crate) fn sources<'a>(reply: &'a str, map: &SourceMap, fences: &[Fence<'a>]) -> (Vec<Source<'a>>, Vec<Diagnostic>) {
    let mut sources = Vec::new();
    let mut diagnostics = Vec::new();
    let whole = map.span(0, reply.len());
    let trimmed = reply.trim_start();
    if trimmed.starts_with(['{', '[']) && mentions_patch(reply) {
        match serde_json::from_str::<Value>(reply) {
            Ok(value) => push_strings(&value, whole, &mut sources),
            // Marked as a cut, so the host refuses the reply whole (even under --partial).
            Err(error) if error.is_eof() => diagnostics.push(Diagnostic::cut_off(
                format!("inside the tool call's JSON, which stops at reply line {}", error.line()),
                Some(whole),
            )),
            Err(_) => {}
        }
    }
    for fence in fences {
        let body = fence.body.trim_start();
        if body.starts_with(['{', '[']) && mentions_patch(body) && !has_marker_line(body) {
            let span = map.span(fence.start, fence.end);
            match serde_json::from_str::<Value>(fence.body) {
                Ok(value) => push_strings(&value, span, &mut sources),
                Err(error) => diagnostics.push(
                    Diagnostic::error(
                        format!("the JSON block at reply line {} is not valid JSON: {error}", span.first_line),
                        Some(span),
                    )
                    .with_hint("send the tool call as one complete JSON object"),
                ),
            }
        }
    }
    sources.push(Source { text: Cow::Borrowed(reply), offset: Some(0), span: whole, closed: false });
    (sources, diagnostics)
}

fn has_marker_line(text: &str) -> bool {
    lines_with_endings(text).any(|l| {
        let t = trim(l);
        t == BEGIN || is_file_marker(t)
    })
}

/// Every string of a JSON value that holds a patch; strings that are JSON
/// themselves (a function call's `arguments`) are decoded and searched.
fn push_strings<'a>(value: &Value, span: Span, out: &mut Vec<Source<'a>>) {
    match value {
        Value::String(text) if text.trim_start().starts_with(['{', '[']) => {
            if let Ok(inner) = serde_json::from_str::<Value>(text) {
                push_strings(&inner, span, out);
            }
        }
        Value::String(text) if mentions_patch(text) => {
            out.push(Source { text: Cow::Owned(text.clone()), offset: None, span, closed: true });
        }
        Value::Array(items) => items.iter().for_each(|v| push_strings(v, span, out)),
        Value::Object(fields) => fields.values().for_each(|v| push_strings(v, span, out)),
        _ => {}
    }
}

/// The heredoc a patch is fed through: its delimiter and a `cd` before it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Invocation {
    pub delimiter: Option<String>,
    pub cwd: Option<String>,
}

/// Read `apply_patch <<'EOF'`, `cd sub && apply_patch <<EOF`,
/// `bash -lc "cd sub; apply_patch <<-\"PATCH\""` from a command line.
pub(crate) fn invocation(line: &str) -> Option<Invocation> {
    let at = ["apply_patch", "applypatch"].iter().find_map(|name| line.find(name))?;
    let (before, after) = line.split_at(at);
    let delimiter = after.find("<<").map(|i| {
        let rest = after[i + 2..].trim_start_matches('-').trim_start();
        let rest = rest.trim_start_matches(['\'', '"', '\\']);
        rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>()
    });
    let cwd = before.rfind("cd ").filter(|&i| i == 0 || before[..i].ends_with([' ', '\'', '"', '(', ';'])).map(|i| {
        let dir = before[i + 3..].split(['&', ';']).next().unwrap_or("");
        dir.trim().trim_matches(['\'', '"']).to_string()
    });
    Some(Invocation { delimiter: delimiter.filter(|d| !d.is_empty()), cwd })
}

/// The lines of `text` with their byte offsets, endings stripped.
pub(crate) fn offset_lines(text: &str) -> Vec<(usize, &str)> {
    // Sized once: grown by doubling, a 10 MB reply's vector was copied a
    // dozen times into fresh memory of the plugin's.
    let mut out = Vec::with_capacity(agent_apply_sdk::text::line_count(text));
    let mut offset = 0;
    for line in lines_with_endings(text) {
        out.push((offset, strip_ending(line)));
        offset += line.len();
    }
    out
}

/// The patches of a source, with its lines, which the grammar reads again
/// rather than splitting the text a second time.
pub(crate) struct Patches<'t> {
    /// Every line of the source with its byte offset, ending stripped.
    pub lines: Vec<(usize, &'t str)>,
    pub found: Vec<Located>,
}

/// Every patch in `source`, in order; `fences` are its fenced blocks.
pub(crate) fn locate<'t>(source: &'t Source<'_>, fences: &[Fence<'_>]) -> Patches<'t> {
    let text = source.text.as_ref();
    let lines = offset_lines(text);
    // Without any `*** Begin Patch`, a file marker at a line's start opens the patch.
    let has_begin = lines.iter().any(|(_, l)| trim(l) == BEGIN);
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = trim(lines[i].1);
        let opens = if has_begin { trimmed == BEGIN } else { is_file_marker(trimmed) && !lines[i].1.starts_with(' ') };
        if !opens {
            i += 1;
            continue;
        }
        let heredoc = lines[..i].iter().rev().find(|(_, l)| !trim(l).is_empty()).and_then(|(_, l)| invocation(l));
        let heredoc = heredoc.unwrap_or_default();
        let first = if has_begin { i + 1 } else { i };
        let (stop, ending, next) = find_end(&lines, first, heredoc.delimiter.as_deref());
        let (stop, ending) = match ending {
            // No end marker: the patch runs to the end of its fence, if it is in one.
            Ending::Open => match fences.iter().find(|f| f.body_start <= lines[i].0 && lines[i].0 < f.body_end) {
                Some(fence) => {
                    let stop = lines.iter().position(|(at, _)| *at >= fence.body_end).unwrap_or(lines.len()).min(stop);
                    (stop, if fence.closed && stop < next { Ending::Closed } else { Ending::Open })
                }
                None if source.closed && stop == lines.len() => (stop, Ending::Closed),
                None => (stop, Ending::Open),
            },
            other => (stop, other),
        };
        let end_offset = lines.get(stop).map_or(text.len(), |(at, _)| *at);
        let start_offset = lines.get(first).map_or(text.len(), |(at, _)| *at).min(end_offset);
        let body = start_offset..end_offset;
        found.push(Located { body, lines: first..stop.max(first), begin: lines[i].0, ending, cwd: heredoc.cwd });
        i = next.max(i + 1);
    }
    Patches { lines, found }
}

/// Where the patch whose lines start at `first` stops: the index of its
/// last line + 1, how, and where scanning resumes.
fn find_end(lines: &[(usize, &str)], first: usize, delimiter: Option<&str>) -> (usize, Ending, usize) {
    // A patch is mostly hunk lines: a line is trimmed and compared only
    // when its first character (after blanks) could start a marker or the
    // delimiter.
    let could_end = |line: &str| match trim_start(line).as_bytes().first() {
        Some(&first) => first == b'*' || delimiter.is_some_and(|d| d.as_bytes().first() == Some(&first)),
        None => false,
    };
    for (j, (_, line)) in lines.iter().enumerate().skip(first) {
        if !could_end(line) {
            continue;
        }
        let trimmed = trim(line);
        if trimmed == END {
            // The heredoc's delimiter after `*** End Patch` belongs to it too.
            let after = lines[j + 1..].iter().position(|(_, l)| !trim(l).is_empty()).map(|k| j + 1 + k);
            let next = match after {
                Some(k) if delimiter.is_some_and(|d| trim(lines[k].1) == d) => k + 1,
                _ => j + 1,
            };
            return (j, Ending::EndPatch, next);
        }
        if delimiter.is_some_and(|d| trimmed == d) {
            return (j, Ending::Delimiter, j + 1);
        }
        if trimmed == BEGIN {
            return (j, Ending::Open, j);
        }
    }
    (lines.len(), Ending::Open, lines.len())
}

#[cfg(test)]
mod tests {
    use agent_apply_sdk::fence::fenced_blocks;

    use super::*;

    #[test]
    fn reads_heredoc_invocations() {
        let plain = invocation("apply_patch <<'EOF'").unwrap();
        assert_eq!(plain, Invocation { delimiter: Some("EOF".into()), cwd: None });
        let cd = invocation("cd sub/dir && apply_patch <<EOF").unwrap();
        assert_eq!(cd, Invocation { delimiter: Some("EOF".into()), cwd: Some("sub/dir".into()) });
        let bash = invocation("bash -lc \"cd 'web'; apply_patch <<-\\\"PATCH\\\"").unwrap();
        assert_eq!(bash, Invocation { delimiter: Some("PATCH".into()), cwd: Some("web".into()) });
        assert_eq!(invocation("echo hi"), None);
        assert_eq!(invocation("abcd x && apply_patch").unwrap().cwd, None, "`cd` must be a word of its own");
    }

    #[test]
    fn json_strings_and_nested_arguments_are_sources() {
        let reply = r#"{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Delete File: a\\n*** End Patch\"}"}"#;
        let map = SourceMap::new(reply);
        let (sources, diagnostics) = sources(reply, &map, &fenced_blocks(reply));
        assert!(diagnostics.is_empty());
        assert_eq!(sources[0].text, "*** Begin Patch\n*** Delete File: a\n*** End Patch");
        assert!(sources[0].closed && sources[0].offset.is_none());
        let cut = r#"{"input": "*** Begin Patch\n*** Delete File: a"#;
        let (_, diagnostics) = super::sources(cut, &SourceMap::new(cut), &fenced_blocks(cut));
        assert!(diagnostics[0].message.contains("cut off"), "{diagnostics:?}");
    }

    #[test]
    fn an_end_marker_wins_over_a_fence_its_content_seems_to_close() {
        let reply = "```\n*** Begin Patch\n*** Update File: a.md\n@@\n ```\n-x\n+y\n*** End Patch\n```\n";
        let source = Source {
            text: Cow::Borrowed(reply),
            offset: Some(0),
            span: SourceMap::new(reply).span(0, 1),
            closed: false,
        };
        let found = locate(&source, &fenced_blocks(reply)).found;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].ending, Ending::EndPatch);
        assert!(reply[found[0].body.clone()].ends_with("+y\n"));
    }
}
