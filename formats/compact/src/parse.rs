//! The compact grammar: headers (`path:START-END`), fenced blocks with a
//! range in their info string (`lang:START:END`), and the replacement lines
//! that follow either.

use agent_apply_sdk::fence::{Fence, fenced_blocks, is_shell_info};
use agent_apply_sdk::message;
use agent_apply_sdk::paths::{looks_like_path, normalize, path_before};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::source::IndexedLines;
use agent_apply_sdk::text::{line_count, strip_ending};

use crate::RangeEdit;

/// A line range as the reply wrote it, already checked for shape
/// (`start >= 1`, `end >= start - 1`), not yet against any file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub start: u32,
    pub end: u32,
    /// The version tag after the range (`@3fa9c1`), lowercase, without `@`.
    pub tag: Option<String>,
}

/// A `path:START-END` header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub path: String,
    pub range: Range,
}

/// Characters models put around a header line: markdown headings, bold,
/// backticks, list bullets, a trailing colon.
fn strip_decoration(line: &str) -> &str {
    let line = line.trim();
    let line = line.trim_start_matches(['#', '*', '>', '`']).trim_start();
    let line = line.strip_prefix("- ").unwrap_or(line).trim_start_matches(['*', '`']);
    line.trim_end_matches([':', '*', '`']).trim_end()
}

/// `@3fa9c1` → `3fa9c1`.
fn tag_token(token: &str) -> Option<String> {
    let hex = token.strip_prefix('@')?;
    (4..=16).contains(&hex.len()).then_some(())?;
    hex.chars().all(|c| c.is_ascii_hexdigit()).then(|| hex.to_ascii_lowercase())
}

fn number(text: &str) -> Result<u32, String> {
    text.parse::<u32>().map_err(|_| format!("line number {text} is too large"))
}

/// Check the shape of `start`-`end`: 1-based, and an end before the start
/// only by one (an insertion).
fn shaped(start: u32, end: u32, written: &str) -> Result<(u32, u32), String> {
    if start == 0 {
        return Err(format!("`{written}`: line numbers start at 1 (to insert before the first line, write 1-0)"));
    }
    if end < start - 1 {
        return Err(format!(
            "`{written}` ends before it starts; to insert before line {start}, write {start}-{}",
            start - 1
        ));
    }
    Ok((start, end))
}

/// `10-15` or `10` (one line), digits only.
fn dash_range(text: &str) -> Option<Result<(u32, u32), String>> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    if !digits(a) || !digits(b) {
        return None;
    }
    Some(number(a).and_then(|s| number(b).and_then(|e| shaped(s, e, text))))
}

/// The header a line is, if it is one: `path:START-END`, optionally
/// decorated and optionally followed by a version tag (`@3fa9c1`). `Some(Err)`
/// is a line shaped like a header whose range is unusable.
pub fn header(line: &str) -> Option<Result<Header, String>> {
    let text = strip_ending(line);
    // Most headers are written bare (`src/a.py:4-9`): printable ASCII with
    // no space, no decoration at either end. Such a line is its own core
    // and has no tag token; the trims below (which decode a character at a
    // time) are for the rest.
    let (core, tag) = if is_bare(text) { (text, None) } else { decorated_core(text) };
    let (path, range) = core.rsplit_once(':')?;
    let path = path.trim_end_matches('`');
    if !looks_like_path(path) {
        return None;
    }
    let range = dash_range(range)?;
    Some(range.map(|(start, end)| Header { path: normalize(path), range: Range { start, end, tag } }))
}

/// Whether `text` is printable ASCII without a space and without
/// decoration at either end: its own core, with no tag token.
fn is_bare(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_graphic())
        && !matches!(text.as_bytes().first(), Some(b'#' | b'*' | b'>' | b'`'))
        && !matches!(text.as_bytes().last(), Some(b':' | b'*' | b'`'))
}

/// A header line's core, its decoration and version tag taken off.
fn decorated_core(text: &str) -> (&str, Option<String>) {
    let core = strip_decoration(text);
    match core.rsplit_once(char::is_whitespace) {
        Some((rest, last)) => match tag_token(last) {
            Some(tag) => (strip_decoration(rest), Some(tag)),
            None => (core, None),
        },
        None => (core, None),
    }
}

/// What a fence's info string says about a range: `lang:START:END`,
/// `START:END`, `lang:START-END`, or a whole `path:START-END` header, and a
/// version tag token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRange {
    pub path: Option<String>,
    pub range: Range,
}

pub fn info_range(info: &str) -> Option<Result<InfoRange, String>> {
    let tokens: Vec<&str> = info.split_whitespace().collect();
    let tag = tokens.iter().find_map(|t| tag_token(t));
    for token in &tokens {
        if let Some(found) = header(token) {
            return Some(found.map(|h| InfoRange {
                path: Some(h.path),
                range: Range { tag: h.range.tag.or_else(|| tag.clone()), ..h.range },
            }));
        }
        let parts: Vec<&str> = token.split(':').collect();
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let lang_ok = |s: &str| !s.contains(['.', '/', '\\']);
        let found = match parts.as_slice() {
            [a, b] if digits(a) && digits(b) => {
                Some(number(a).and_then(|s| number(b).and_then(|e| shaped(s, e, token))))
            }
            [lang, a, b] if lang_ok(lang) && digits(a) && digits(b) => {
                Some(number(a).and_then(|s| number(b).and_then(|e| shaped(s, e, token))))
            }
            [lang, range] if lang_ok(lang) && range.contains('-') => dash_range(range),
            _ => None,
        };
        if let Some(found) = found {
            return Some(found.map(|(start, end)| InfoRange { path: None, range: Range { start, end, tag } }));
        }
    }
    None
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn summary(range: &Range, count: usize) -> String {
    let (s, e) = (range.start, range.end);
    // Written piece by piece (`message!`): one per edit of the reply.
    match (e < s, count) {
        (true, n) => message!("insert ", LineCount(n), " before line ", s),
        (false, 0) => message!("delete ", LineSpan(s, e)),
        (false, n) => message!("replace ", LineSpan(s, e), " with ", LineCount(n)),
    }
}

struct Builder<'a> {
    reply: &'a str,
    map: &'a SourceMap,
    parsed: Parsed<RangeEdit>,
    /// Whether the host shows the edits' summaries (else they are left empty).
    summaries: bool,
}

impl Builder<'_> {
    fn push(&mut self, path: String, range: Range, body: ReplyText, start: usize, end: usize) {
        let span = self.map.span(start, end);
        let number = self.parsed.edits.len() + 1;
        self.parsed.edits.push(ParsedEdit {
            path,
            related_paths: Vec::new(),
            span,
            summary: if self.summaries { summary(&range, line_count(&body)) } else { String::new() },
            op: RangeEdit {
                number,
                reply_line: span.first_line,
                start: range.start,
                end: range.end,
                tag: range.tag,
                body,
            },
        });
    }

    fn error(&mut self, message: String, hint: &str, start: usize, end: usize) {
        let span = self.map.span(start, end);
        self.parsed.diagnostics.push(Diagnostic::error(message, Some(span)).with_hint(hint));
    }

    fn cut_off(&mut self, inside: String, start: usize, end: usize) {
        let span = self.map.span(start, end);
        self.parsed.diagnostics.push(Diagnostic::cut_off(inside, Some(span)));
    }

    fn line_of(&self, offset: usize) -> u32 {
        self.map.line_of(offset)
    }

    fn text(&self, start: usize, end: usize) -> &str {
        &self.reply[start..end]
    }
}

/// The reply's lines and fenced blocks, found once.
struct ReplyLines<'a> {
    lines: IndexedLines<'a>,
    blocks: Vec<Fence<'a>>,
}

impl<'a> ReplyLines<'a> {
    fn new(reply: &'a str) -> Self {
        let blocks = fenced_blocks(reply);
        // Blocks come in reply order: `block_at` searches them by halves.
        debug_assert!(blocks.windows(2).all(|w| w[0].start < w[1].start));
        ReplyLines { lines: IndexedLines::new(reply), blocks }
    }

    /// The block that opens at byte `offset`, if one does.
    fn block_at(&self, offset: usize) -> Option<&Fence<'a>> {
        let at = self.blocks.partition_point(|f| f.start < offset);
        self.blocks.get(at).filter(|f| f.start == offset)
    }

    /// Index of the first line at or after byte `offset`.
    fn line_index(&self, offset: usize) -> usize {
        self.lines.index_at(offset)
    }

    /// Byte offset of line `index`, or the reply's end past the last line.
    fn offset_of(&self, index: usize) -> usize {
        self.lines.offset(index)
    }

    /// Line `index`, with its ending.
    fn line(&self, index: usize) -> &'a str {
        self.lines.line(index)
    }
}

const HEADER_RANGE_HINT: &str = "write the range as START-END, 1-based and inclusive; START-(START-1) inserts";

/// Parse a reply. `edit_file` is the edit-mode file (option `file`), for
/// range blocks that name no file; summaries are made if `summaries`.
pub fn parse(reply: &str, edit_file: Option<&str>, summaries: bool) -> Parsed<RangeEdit> {
    let reply_lines = ReplyLines::new(reply);
    let mut b = Builder { reply, map: reply_lines.lines.map(), parsed: Parsed::default(), summaries };
    let mut i = 0;
    while i < reply_lines.lines.len() {
        i = if let Some(block) = reply_lines.block_at(reply_lines.offset_of(i)) {
            standalone_block(&mut b, block, edit_file);
            reply_lines.line_index(block.end)
        } else if let Some(found) = header(reply_lines.line(i)) {
            header_edit(&mut b, &reply_lines, i, found)
        } else {
            i + 1
        };
    }
    b.parsed
}

/// The edit that the header on line `i` starts: a fenced block after it
/// (past blank lines), else the legacy bare lines. Returns the index of the
/// first line after the edit.
fn header_edit(b: &mut Builder<'_>, reply_lines: &ReplyLines<'_>, i: usize, found: Result<Header, String>) -> usize {
    let (lines, start) = (&reply_lines.lines, reply_lines.offset_of(i));
    let mut j = i + 1;
    while j < lines.len() && is_blank(lines.line(j)) && reply_lines.block_at(lines.offset(j)).is_none() {
        j += 1;
    }
    let Some(block) = (j < lines.len()).then(|| reply_lines.block_at(lines.offset(j))).flatten() else {
        return legacy_edit(b, reply_lines, i, found);
    };
    match found {
        Ok(header) => fenced_with_header(b, header, start, block),
        Err(message) => {
            let header_line = b.line_of(start);
            b.error(format!("reply line {header_line}: {message}"), HEADER_RANGE_HINT, start, block.end);
        }
    }
    reply_lines.line_index(block.end)
}

/// The legacy form: the lines right after the header on line `i`, up to a
/// blank line, the next header or a fenced block. Returns the index of the
/// line that ends it.
fn legacy_edit(b: &mut Builder<'_>, reply_lines: &ReplyLines<'_>, i: usize, found: Result<Header, String>) -> usize {
    let lines = &reply_lines.lines;
    let mut k = i + 1;
    while k < lines.len()
        && !is_blank(lines.line(k))
        && header(lines.line(k)).is_none()
        && reply_lines.block_at(lines.offset(k)).is_none()
    {
        k += 1;
    }
    let body_end = reply_lines.offset_of(k);
    let body_start = reply_lines.offset_of(i + 1).min(body_end);
    let start = lines.offset(i);
    let header_line = b.line_of(start);
    match found {
        Ok(header) => {
            let body = ReplyText::new(b.text(body_start, body_end));
            if body.is_empty() && header.range.end >= header.range.start {
                let note = Diagnostic {
                    severity: Severity::Note,
                    ..Diagnostic::error(
                        format!(
                            "reply line {header_line}: `{}` has no replacement lines, so it deletes them",
                            strip_ending(lines.line(i)).trim()
                        ),
                        Some(b.map.span(start, body_start)),
                    )
                };
                b.parsed.diagnostics.push(note);
            }
            let end = if body_end > body_start { body_end } else { body_start };
            b.push(header.path, header.range, body, start, end);
        }
        Err(message) => {
            b.error(format!("reply line {header_line}: {message}"), HEADER_RANGE_HINT, start, body_end.max(body_start));
        }
    }
    k
}

fn fenced_with_header(b: &mut Builder<'_>, header: Header, start: usize, block: &Fence<'_>) {
    let header_line = b.line_of(start);
    if !block.closed {
        let inside = format!(
            "inside the code block for `{}:{}-{}` (reply line {header_line}): it has no closing fence",
            header.path, header.range.start, header.range.end
        );
        b.cut_off(inside, start, block.end);
        return;
    }
    let mut range = header.range;
    if let Some(Ok(info)) = info_range(block.info) {
        let (s, e) = (info.range.start, info.range.end);
        if (s, e) != (range.start, range.end) || info.path.as_ref().is_some_and(|p| *p != header.path) {
            let message = format!(
                "reply line {header_line}: the header says {}:{}-{} but the code block's info string says `{}`",
                header.path, range.start, range.end, block.info
            );
            b.error(message, "give the range once, on the header line", start, block.end);
            return;
        }
        range.tag = range.tag.or(info.range.tag);
    }
    b.push(header.path, range, ReplyText::new(block.body), start, block.end);
}

fn standalone_block(b: &mut Builder<'_>, block: &Fence<'_>, edit_file: Option<&str>) {
    let reply_line = b.line_of(block.start);
    match info_range(block.info) {
        Some(Ok(info)) => {
            if !block.closed {
                let inside = format!(
                    "inside the code block `{}` (reply line {reply_line}): it has no closing fence",
                    block.info
                );
                b.cut_off(inside, block.start, block.end);
                return;
            }
            let path = info.path.or_else(|| path_before(b.reply, block.start)).or_else(|| edit_file.map(normalize));
            let Some(path) = path else {
                let message = format!(
                    "reply line {reply_line}: the code block `{}` gives lines but no file to apply them to",
                    block.info
                );
                let hint = "put the file's path alone on the line before the block, or write the header \
                            `path:START-END` instead (or pass --file PATH)";
                b.error(message, hint, block.start, block.end);
                return;
            };
            b.push(path, info.range, ReplyText::new(block.body), block.start, block.end);
        }
        Some(Err(message)) => {
            let hint = "write the info string as `lang:START:END` (1-based, inclusive; START:(START-1) inserts)";
            b.error(format!("reply line {reply_line}: {message}"), hint, block.start, block.end);
        }
        None if is_shell_info(block.info) => {
            let span = b.map.span(block.start, block.end);
            b.parsed.commands.push(SuggestedCommand { command: block.body.trim_end().to_string(), span });
        }
        None => {
            let span = b.map.span(block.start, block.end);
            b.parsed.diagnostics.push(
                Diagnostic::warning(
                    format!("reply line {reply_line}: this code block names no line range, so it was not applied"),
                    Some(span),
                )
                .with_hint("put a header `path:START-END` on the line before it to make it an edit"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A bare line is its own core, with no tag: what the trims give it.
        #[test]
        fn a_bare_line_is_its_own_core(text in "[a-z./:0-9@`*#>-]{0,12}|[a-z./:0-9@`*#> \t\u{a0}-]{0,12}") {
            if is_bare(&text) {
                proptest::prop_assert_eq!(decorated_core(&text), (text.as_str(), None));
            }
        }
    }

    #[test]
    fn header_shapes() {
        let h = |line: &str| header(line).map(|r| r.map(|h| (h.path, h.range.start, h.range.end, h.range.tag)));
        assert_eq!(h("src/a.py:10-15"), Some(Ok(("src/a.py".into(), 10, 15, None))));
        assert_eq!(h("### `src/a.py:10-15`"), Some(Ok(("src/a.py".into(), 10, 15, None))));
        assert_eq!(h("**./src/a.py:7**"), Some(Ok(("src/a.py".into(), 7, 7, None))));
        assert_eq!(h("src/a.py:5-4 @3FA9c1"), Some(Ok(("src/a.py".into(), 5, 4, Some("3fa9c1".into())))));
        assert_eq!(h("Makefile:1-0:"), Some(Ok(("Makefile".into(), 1, 0, None))));
        assert!(matches!(h("src/a.py:15-10"), Some(Err(m)) if m.contains("ends before it starts")));
        assert!(matches!(h("src/a.py:0-3"), Some(Err(m)) if m.contains("start at 1")));
        assert!(matches!(h("src/a.py:99999999999-1"), Some(Err(m)) if m.contains("too large")));
        for prose in ["see src/a.py:10-15 for details", "a.py", "http://x.io:80-90", "time: 10-15", "x:10-15"] {
            assert_eq!(h(prose), None, "{prose}");
        }
    }

    #[test]
    fn info_shapes() {
        let r = |info: &str| info_range(info).map(|r| r.map(|i| (i.path, i.range.start, i.range.end)));
        assert_eq!(r("python:10:15"), Some(Ok((None, 10, 15))));
        assert_eq!(r("10:15"), Some(Ok((None, 10, 15))));
        assert_eq!(r("rust:3-4"), Some(Ok((None, 3, 4))));
        assert_eq!(r("rust src/lib.rs:3-4"), Some(Ok((Some("src/lib.rs".into()), 3, 4))));
        assert_eq!(r("python"), None);
        assert_eq!(r("python:main.py"), None);
        assert!(matches!(r("py:9:3"), Some(Err(_))));
        assert_eq!(info_range("py:3:4 @abcdef").unwrap().unwrap().range.tag.as_deref(), Some("abcdef"));
    }
}
