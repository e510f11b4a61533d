//! The V4A grammar: file sections (`*** Add File:`, `*** Delete File:`,
//! `*** Update File:` with an optional `*** Move to:`), hunks opened by `@@`
//! lines (each may name a scope line; several in a row narrow it), ` `/`-`/`+`
//! lines and `*** End of File`.
//!
//! Tolerated because models write them: padded markers, blank context lines
//! without their space, CRLF, a unified-diff `@@ -1,3 +1,4 @@` header, and a
//! missing `*** End Patch` where prose plainly ends the patch. A patch that
//! simply stops is a cut-off reply and is refused: applying its first half
//! would commit a change nobody asked for.

use std::ops::Range;

use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{trim, trim_end, trim_start};

use crate::envelope::{Ending, Located, Source};
use crate::paths::resolve;
use crate::{At, FileOp, Hunk};

/// Positions in one [`Source`], as the reply sees them.
pub(crate) struct Place<'a> {
    reply: &'a SourceMap,
    offset: Option<usize>,
    call: Span,
    local: Option<SourceMap>,
}

impl<'a> Place<'a> {
    pub(crate) fn new(reply: &'a SourceMap, source: &Source<'_>) -> Self {
        let local = source.offset.is_none().then(|| SourceMap::new(&source.text));
        Place { reply, offset: source.offset, call: source.span, local }
    }

    /// "reply line 12", or the line of the patch inside a tool call.
    pub(crate) fn at(&self, offset: usize) -> String {
        self.locate(offset).to_string()
    }

    /// Where `offset` is, as [`Place::at`] writes it.
    pub(crate) fn locate(&self, offset: usize) -> At {
        match (&self.local, self.offset) {
            (Some(local), _) => At { line: local.line_of(offset), call_line: Some(self.call.first_line) },
            (None, base) => At { line: self.reply.line_of(base.unwrap_or(0) + offset), call_line: None },
        }
    }

    fn span(&self, range: Range<usize>) -> Span {
        match self.offset {
            Some(base) => self.reply.span(base + range.start, base + range.end),
            None => self.call,
        }
    }
}

/// Parse the patch `located` into `parsed`; `lines` are its body's, each
/// with its offset in the source (see [`crate::envelope::Patches`]).
pub(crate) fn parse_patch(lines: &[(usize, &str)], located: &Located, place: &Place<'_>, parsed: &mut Parsed<FileOp>) {
    let mut parser = Parser { lines, i: 0, place, located, text_len: located.body.end, parsed };
    parser.run();
}

struct Parser<'p, 'a> {
    lines: &'p [(usize, &'p str)],
    i: usize,
    place: &'p Place<'a>,
    located: &'p Located,
    text_len: usize,
    parsed: &'p mut Parsed<FileOp>,
}

impl Parser<'_, '_> {
    /// The first edit's span (edit `first` of the reply) starts at the
    /// patch's `*** Begin Patch`, so the envelope is read as part of an edit,
    /// not left as a marker no format read.
    fn cover_begin(&mut self, first: usize) {
        if let Some(first) = self.parsed.edits.get_mut(first) {
            let begin = self.place.span(self.located.begin..self.located.begin);
            if begin.start < first.span.start {
                first.span.start = begin.start;
                first.span.first_line = begin.first_line;
            }
        }
    }

    fn run(&mut self) {
        let before = self.parsed.edits.len();
        while let Some(&(at, line)) = self.lines.get(self.i) {
            let trimmed = trim(line);
            let result = if trimmed.is_empty() {
                self.i += 1;
                Ok(())
            } else if let Some(rest) = trimmed.strip_prefix("*** Add File:") {
                self.add(at, rest)
            } else if let Some(rest) = trimmed.strip_prefix("*** Delete File:") {
                self.delete(at, rest)
            } else if let Some(rest) = trimmed.strip_prefix("*** Update File:") {
                self.update(at, rest)
            } else {
                self.stray(at, line)
            };
            if let Err(diagnostic) = result {
                self.parsed.diagnostics.push(*diagnostic);
                return;
            }
            if self.i == usize::MAX {
                self.cover_begin(before);
                return; // prose ended the patch
            }
        }
        self.cover_begin(before);
        if self.located.ending == Ending::Open {
            self.cut_off();
        } else if self.parsed.edits.len() == before {
            let at = self.place.at(self.located.begin);
            let span = self.place.span(self.located.begin..self.text_len);
            self.parsed.diagnostics.push(
                Diagnostic::error(format!("the patch at {at} changes no file"), Some(span)).with_hint(
                    "between `*** Begin Patch` and `*** End Patch`, write `*** Update File: PATH` sections with hunks",
                ),
            );
        }
    }

    fn error(&self, at: usize, message: String, hint: &str) -> Box<Diagnostic> {
        let end = self.lines.iter().find(|(o, _)| *o > at).map_or(self.text_len, |(o, _)| *o);
        Box::new(Diagnostic::error(message, Some(self.place.span(at..end))).with_hint(hint))
    }

    /// A line outside any section: prose after a patch with no end marker,
    /// or a mistake inside one.
    fn stray(&mut self, at: usize, line: &str) -> Result<(), Box<Diagnostic>> {
        let markers_follow = self.lines[self.i..].iter().any(|(_, l)| {
            let t = l.trim_start();
            t.starts_with("*** ") || t.starts_with("@@")
        });
        if self.located.ending == Ending::Open && !line.trim_start().starts_with("***") && !markers_follow {
            self.i = usize::MAX;
            return Ok(());
        }
        let shown: String = line.trim().chars().take(80).collect();
        Err(self.error(
            at,
            format!("{}: `{shown}` is not part of a V4A patch", self.place.at(at)),
            "inside `*** Begin Patch` … `*** End Patch`, every line is a marker (`*** Add File: PATH`, \
             `*** Update File: PATH`, `*** Delete File: PATH`, `*** Move to: PATH`, `@@`, `*** End of File`) or \
             starts with ` ` (unchanged), `-` (removed) or `+` (added)",
        ))
    }

    /// A patch the reply's end cut (no `*** End Patch`, nothing after it):
    /// marked as a cut, so the host refuses the reply whole, even under
    /// `--partial`, and asks for the edits from this one on.
    fn cut_off(&mut self) {
        let at = self.place.at(self.located.begin);
        let last = self.lines.last().map_or(self.located.begin, |(o, _)| *o);
        let inside = format!(
            "inside the patch that begins at {at}: it stops at {} without `*** End Patch`",
            self.place.at(last)
        );
        let span = self.place.span(self.located.begin..self.text_len);
        self.parsed.diagnostics.push(Diagnostic::cut_off(inside, Some(span)));
    }

    fn path(&self, at: usize, raw: &str) -> Result<String, Box<Diagnostic>> {
        resolve(raw, self.located.cwd.as_deref()).map_err(|why| {
            self.error(at, format!("{}: {why}", self.place.at(at)), "name files by their path from the repository root")
        })
    }

    fn push(&mut self, at: usize, path: &str, summary: String, op: FileOp, related: Vec<String>) {
        let end = self.lines.get(self.i).map_or(self.text_len, |(o, _)| *o);
        self.parsed.edits.push(ParsedEdit {
            path: path.to_string(),
            related_paths: related,
            span: self.place.span(at..end),
            summary,
            op,
        });
    }

    fn add(&mut self, at: usize, raw: &str) -> Result<(), Box<Diagnostic>> {
        let path = self.path(at, raw)?;
        self.i += 1;
        let mut lines = Vec::new();
        while let Some(&(_, line)) = self.lines.get(self.i) {
            if let Some(text) = line.strip_prefix('+') {
                lines.push(ReplyText::new(text));
                self.i += 1;
                continue;
            }
            // Blank lines the model wrote without their `+`, inside the file
            // (found in one pass: a reply may hold a great many).
            let next = self.lines[self.i..].iter().position(|(_, l)| !trim(l).is_empty()).map(|k| self.i + k);
            match next {
                Some(j) if j > self.i && self.lines[j].1.starts_with('+') => {
                    lines.extend(std::iter::repeat_n(ReplyText::from(String::new()), j - self.i));
                    self.i = j;
                }
                _ => break,
            }
        }
        let summary = format!("add {path} ({})", LineCount(lines.len()));
        let op = FileOp::Add { path: path.clone(), lines, at: self.place.at(at) };
        self.push(at, &path, summary, op, Vec::new());
        Ok(())
    }

    fn delete(&mut self, at: usize, raw: &str) -> Result<(), Box<Diagnostic>> {
        let path = self.path(at, raw)?;
        self.i += 1;
        let op = FileOp::Delete { path: path.clone(), at: self.place.at(at) };
        self.push(at, &path, format!("delete {path}"), op, Vec::new());
        Ok(())
    }

    fn update(&mut self, at: usize, raw: &str) -> Result<(), Box<Diagnostic>> {
        let path = self.path(at, raw)?;
        self.i += 1;
        let mut move_to = None;
        if let Some(&(move_at, line)) = self.lines.get(self.i)
            && let Some(rest) = trim(line).strip_prefix("*** Move to:")
        {
            move_to = Some(self.path(move_at, rest)?);
            self.i += 1;
        }
        let hunks = self.hunks(&path)?;
        if hunks.is_empty() && move_to.is_none() {
            return Err(self.error(
                at,
                format!("{}: `*** Update File: {path}` has no hunks", self.place.at(at)),
                "after `*** Update File: PATH`, write `@@` and the lines to change, each starting with ` `, `-` or `+`",
            ));
        }
        let count = match hunks.len() {
            1 => "1 hunk".to_string(),
            n => format!("{n} hunks"),
        };
        let (summary, related) = match &move_to {
            Some(to) => (format!("move {path} to {to} ({count})"), vec![to.clone()]),
            None => (format!("update {path} ({count})"), Vec::new()),
        };
        let op = FileOp::Update { path: path.clone(), move_to, hunks, at: self.place.at(at) };
        self.push(at, &path, summary, op, related);
        Ok(())
    }

    /// The hunks of an update section, up to the next marker or a line
    /// that is not part of the grammar.
    fn hunks(&mut self, path: &str) -> Result<Vec<Hunk>, Box<Diagnostic>> {
        let mut hunks: Vec<Hunk> = Vec::new();
        let mut current: Option<Hunk> = None;
        let mut scope_at: Option<usize> = None;
        let mut scopes: Vec<String> = Vec::new();
        while let Some(&(at, line)) = self.lines.get(self.i) {
            // Only a line that starts `*` (after blanks) can be a marker:
            // the hunk lines around are not trimmed at their end too.
            let lead = trim_start(line);
            let trimmed = if lead.starts_with('*') { trim_end(lead) } else { "" };
            if trimmed == "*** End of File" {
                let Some(mut hunk) = current.take() else {
                    return Err(self.error(
                        at,
                        format!("{}: `*** End of File` has no hunk lines before it", self.place.at(at)),
                        "put `*** End of File` right after the last line of a hunk that ends the file",
                    ));
                };
                hunk.end_of_file = true;
                close(hunk, &mut hunks);
            } else if line.starts_with("***") || (trimmed.starts_with("*** ") && !line.starts_with([' ', '+', '-'])) {
                break;
            } else if let Some(header) = line.strip_prefix("@@") {
                if let Some(hunk) = current.take() {
                    close(hunk, &mut hunks);
                }
                scope_at.get_or_insert(at);
                scopes.extend(scope_of(header));
            } else if line.starts_with([' ', '+', '-']) || line.is_empty() {
                let number = hunks.len() + 1;
                let hunk = current.get_or_insert_with(|| Hunk {
                    number,
                    at: self.place.locate(scope_at.take().unwrap_or(at)),
                    scopes: std::mem::take(&mut scopes),
                    // Room for a usual hunk: grown from empty, one of 13 lines was
                    // reallocated three times.
                    lines: Vec::with_capacity(16),
                    end_of_file: false,
                });
                // `~` marks a blank line written without its space, until the hunk closes.
                hunk.lines.push(ReplyText::new(if line.is_empty() { "~" } else { line }));
            } else {
                break;
            }
            self.i += 1;
        }
        if let Some(hunk) = current {
            close(hunk, &mut hunks);
        }
        if let Some(at) = scope_at {
            return Err(self.error(
                at,
                format!("{}: the `@@` line in {path} has no lines after it", self.place.at(at)),
                "follow each `@@` line with the lines to change, each starting with ` `, `-` or `+`",
            ));
        }
        Ok(hunks)
    }
}

/// Close a hunk: blank lines after it are the reply's spacing, not context.
fn close(mut hunk: Hunk, hunks: &mut Vec<Hunk>) {
    while hunk.lines.last().is_some_and(|l| l == "~") {
        hunk.lines.pop();
    }
    for line in &mut hunk.lines {
        if line == "~" {
            *line = ReplyText::from(" ".to_string());
        }
    }
    if !hunk.lines.is_empty() {
        hunks.push(hunk);
    }
}

/// The scope line of an `@@` header (the text after `@@`): `class Foo`, or
/// the text after a unified-diff `@@ -1,3 +1,4 @@`; none for a bare `@@`.
fn scope_of(header: &str) -> Option<String> {
    let mut text = header.trim();
    if text.starts_with('-') && text.as_bytes().get(1).is_some_and(u8::is_ascii_digit) {
        text = text.split_once("@@").map_or("", |(_, rest)| rest).trim();
    }
    let text = text.trim_end_matches('@').trim_end();
    (!text.trim().is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::scope_of;

    #[test]
    fn scope_lines() {
        assert_eq!(scope_of(" class Foo"), Some("class Foo".into()));
        assert_eq!(scope_of(""), None);
        assert_eq!(scope_of(" -12,7 +12,8 @@ def f():"), Some("def f():".into()));
        assert_eq!(scope_of(" -12,7 +12,8 @@"), None);
        assert_eq!(scope_of(" def g(): @@"), Some("def g():".into()));
    }
}
