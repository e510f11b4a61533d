//! Reading unified diffs out of a model's reply: fenced (```` ```diff ````,
//! ```` ```patch ````) or bare, with or without `---`/`+++` and `@@` headers,
//! git extended headers, `/dev/null` creates and deletes, and
//! `\ No newline at end of file` markers.

use std::cmp::Ordering;

use agent_apply_sdk::fence::{fenced_blocks, is_shell_info};
use agent_apply_sdk::paths::{looks_like_path, path_before, path_from_info};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{holds_run, lines_with_endings, strip_ending};

pub(crate) use crate::parse_paths::header_path;
use crate::parse_paths::{clean, git_line_paths, strip_prefix_pair};
use crate::{FileKind, FilePatch, Hunk};

/// Whether a fence's info string names a diff.
fn is_diff_info(info: &str) -> bool {
    let lang = info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    matches!(lang.as_str(), "diff" | "patch" | "udiff" | "git-diff" | "gitdiff")
}

/// Whether a line is a SEARCH/REPLACE marker (the editblock format's).
pub(crate) fn is_block_marker(line: &str) -> bool {
    // Asked of every line of a reply: most are turned down by their first
    // character, before any character of the rest is looked at.
    if !matches!(agent_apply_sdk::text::trim_start(line).as_bytes().first(), Some(b'<' | b'>')) {
        return false;
    }
    let t = agent_apply_sdk::text::trim(line);
    let run = |ch: char| t.chars().take_while(|&c| c == ch).count() >= 5;
    (run('<') && t.trim_start_matches('<').trim().eq_ignore_ascii_case("SEARCH"))
        || (run('>') && t.trim_start_matches('>').trim().eq_ignore_ascii_case("REPLACE"))
}

/// `@@ -a,b +c,d @@ ...`: the numbers, when the header has them.
pub(crate) fn hunk_numbers(header: &str) -> Option<(u32, Option<u32>, u32, Option<u32>)> {
    plain_hunk_numbers(header).or_else(|| any_hunk_numbers(header))
}

/// [`hunk_numbers`] of a header as tools write it (`@@ -12,3 +12,4 @@`:
/// ASCII digits, single spaces), read byte by byte; `None` for any other
/// header, which [`any_hunk_numbers`] reads. A reply of 17,000 hunks spent
/// a thousand instructions on each header's words and number parsing.
pub(crate) fn plain_hunk_numbers(header: &str) -> Option<(u32, Option<u32>, u32, Option<u32>)> {
    let bytes = header.as_bytes().strip_prefix(b"@@ -")?;
    // Digits, then `,` and digits or not; the rest after them.
    let number = |bytes: &[u8]| -> Option<(u32, usize)> {
        let digits = bytes.iter().take(9).take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || bytes.get(digits).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        Some((bytes[..digits].iter().fold(0, |n, &b| n * 10 + u32::from(b - b'0')), digits))
    };
    let pair = |bytes: &[u8]| -> Option<((u32, Option<u32>), usize)> {
        let (a, used) = number(bytes)?;
        match bytes.get(used) {
            Some(b',') => number(&bytes[used + 1..]).map(|(b, more)| ((a, Some(b)), used + 1 + more)),
            _ => Some(((a, None), used)),
        }
    };
    let ((a, b), used) = pair(bytes)?;
    let rest = bytes[used..].strip_prefix(b" +")?;
    let ((c, d), used) = pair(rest)?;
    matches!(rest.get(used), None | Some(b' ')).then_some((a, b, c, d))
}

/// [`hunk_numbers`] of any header: words split at any white space, each
/// number as `str::parse` reads it.
pub(crate) fn any_hunk_numbers(header: &str) -> Option<(u32, Option<u32>, u32, Option<u32>)> {
    let rest = header.strip_prefix("@@")?.trim_start_matches('@').trim_start();
    let mut words = rest.split_whitespace();
    let old = words.next()?.strip_prefix('-')?;
    let new = words.next()?.strip_prefix('+')?;
    let pair = |s: &str| -> Option<(u32, Option<u32>)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, Some(b.parse().ok()?))),
            None => Some((s.parse().ok()?, None)),
        }
    };
    let (a, b) = pair(old)?;
    let (c, d) = pair(new)?;
    Some((a, b, c, d))
}

/// Whether a line looks like a hunk header with numbers: `@@ -12,3 +12,4 @@`.
pub(crate) fn is_numbered_hunk_header(line: &str) -> bool {
    line.starts_with("@@ -") && hunk_numbers(line).is_some()
}

/// One file section being read.
#[derive(Default)]
struct Section {
    start_line: u32,
    end_line: u32,
    start: usize,
    end: usize,
    git: (Option<String>, Option<String>),
    old: Option<Option<String>>,
    new: Option<Option<String>>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    new_file: bool,
    deleted_file: bool,
    hunks: Vec<Hunk>,
    /// The `---`/`+++` pair was read.
    has_headers: bool,
    /// The last line read was a header that promises more (`diff --git`,
    /// `---`/`+++`, an `index` line of a file not created or deleted):
    /// a diff that ends there was cut off before its hunks.
    open_header: bool,
}

/// A diff region of the reply: where it starts and how lenient to be.
struct Region<'a> {
    text: &'a str,
    offset: usize,
    fenced: bool,
    /// A fenced region whose closing fence never came: the reply ends in it.
    unclosed: bool,
    /// For a bare diff, the reply's last non-blank line: a file section
    /// that reaches it and stops short of what its headers promise was cut
    /// off there. (In a closed fence, a short hunk is a model's miscount.)
    reply_end: Option<u32>,
    fallback_path: Option<String>,
}

impl Section {
    /// Why a section that the reply's end cut off reads as incomplete: no
    /// hunk after headers that promise one, or a last hunk with no lines or
    /// fewer than its header counts (trailing blank lines not counted).
    fn stops_short(&self) -> Option<&'static str> {
        let Some(hunk) = self.hunks.last() else {
            return self.open_header.then_some("it ends after its headers, before any hunk");
        };
        let written = hunk.lines.iter().rposition(|l| !(l.starts_with('~') && l[1..].trim().is_empty()));
        let lines = &hunk.lines[..written.map_or(0, |last| last + 1)];
        if lines.is_empty() {
            return Some("its last hunk has no lines");
        }
        let counted = |lines: &[ReplyText]| {
            let old = lines.iter().filter(|l| !l.starts_with('+')).count() as u32;
            let new = lines.iter().filter(|l| !l.starts_with('-')).count() as u32;
            (hunk.old_count.map(|count| old.cmp(&count)), hunk.new_count.map(|count| new.cmp(&count)))
        };
        let short = |(old, new): (Option<Ordering>, Option<Ordering>)| {
            old == Some(Ordering::Less) || new == Some(Ordering::Less)
        };
        if short(counted(lines)) {
            return Some("its last hunk has fewer lines than its header says");
        }
        // A complete hunk, then the next file's `--- a/PATH` alone: read as
        // one more removed line, it is the start of a header the cut ended.
        let (last, before) = lines.split_last().expect("not empty");
        let complete = (Some(Ordering::Equal), Some(Ordering::Equal));
        (last.starts_with("--- ") && counted(before) == complete).then_some("it ends in the next file's header")
    }

    /// The old and new paths: the `---`/`+++` headers, else the `diff --git`
    /// line; `/dev/null` sides, renames and the path before a fence applied.
    fn paths(&self, region: &Region<'_>) -> (Option<String>, Option<String>) {
        let (mut old, mut new) = match (self.old.clone(), self.new.clone()) {
            (Some(o), Some(n)) => strip_prefix_pair(o, n),
            _ => {
                let (a, b) = strip_prefix_pair(self.git.0.clone(), self.git.1.clone());
                (a, b)
            }
        };
        if self.new_file && self.old.is_none() {
            old = None;
        }
        if self.deleted_file && self.new.is_none() {
            new = None;
        }
        if let Some(from) = &self.rename_from {
            old = Some(from.clone());
        }
        if let Some(to) = &self.rename_to {
            new = Some(to.clone());
        }
        if old.is_none() && new.is_none() && !self.has_headers {
            old = region.fallback_path.clone();
            new = region.fallback_path.clone();
        }
        (old.map(clean), new.map(clean))
    }

    fn finish(mut self, region: &Region<'_>, map: &SourceMap, parsed: &mut Parsed<FilePatch>) {
        let span = map.span(self.start, self.end.max(self.start));
        let (old, new) = self.paths(region);
        let (kind, path, related) = match (&old, &new) {
            (None, None) => {
                let message = if self.has_headers {
                    "the diff's `---` and `+++` headers are both /dev/null".to_string()
                } else {
                    "the diff does not name the file it changes".to_string()
                };
                parsed.diagnostics.push(
                    Diagnostic::error(format!("{message} (reply line {})", self.start_line), Some(span)).with_hint(
                        "start each file's diff with `--- a/PATH` and `+++ b/PATH` lines, or put the path on the line before the fence",
                    ),
                );
                return;
            }
            (None, Some(n)) => (FileKind::Create, n.clone(), vec![]),
            (Some(o), None) => (FileKind::Delete, o.clone(), vec![]),
            (Some(o), Some(n)) if o != n => (FileKind::Rename, o.clone(), vec![n.clone()]),
            (Some(o), Some(_)) => (FileKind::Modify, o.clone(), vec![]),
        };
        let mut hunks = std::mem::take(&mut self.hunks);
        for hunk in &mut hunks {
            // Blank lines after a hunk are the reply's spacing, not context.
            while hunk.lines.last().is_some_and(|l| l.starts_with('~') && l[1..].trim().is_empty()) {
                hunk.lines.pop();
            }
        }
        if let Some(problem) = self.hunks_problem(kind, &path, &hunks, span) {
            parsed.diagnostics.push(problem);
            return;
        }
        let n = hunks.len();
        let plural = |n: usize| if n == 1 { "1 hunk".to_string() } else { format!("{n} hunks") };
        let summary = match kind {
            FileKind::Create => format!("create {path}"),
            FileKind::Delete => format!("delete {path}"),
            FileKind::Rename if n == 0 => format!("rename {path} to {}", related[0]),
            FileKind::Rename => format!("rename {path} to {} ({})", related[0], plural(n)),
            FileKind::Modify => format!("change {path} ({})", plural(n)),
        };
        let _ = region.fenced;
        parsed.edits.push(ParsedEdit {
            path: path.clone(),
            related_paths: related.clone(),
            span,
            summary,
            op: FilePatch {
                kind,
                path,
                to: related.into_iter().next(),
                reply_line: self.start_line,
                end_line: self.end_line,
                hunks,
            },
        });
    }

    /// Why the section's hunks cannot be applied: none (a mode-only change
    /// is a warning), or an empty one.
    fn hunks_problem(&self, kind: FileKind, path: &str, hunks: &[Hunk], span: Span) -> Option<Diagnostic> {
        if kind == FileKind::Modify && hunks.is_empty() {
            if !self.new_file && !self.deleted_file && self.git.0.is_some() {
                return Some(Diagnostic::warning(
                    format!(
                        "the diff of {path} at reply line {} changes nothing this tool can apply (mode only)",
                        self.start_line
                    ),
                    Some(span),
                ));
            }
            return Some(
                Diagnostic::error(
                    format!("the diff of {path} at reply line {} has no hunks", self.start_line),
                    Some(span),
                )
                .with_hint(
                    "after the `---`/`+++` headers, write `@@ ... @@` and the changed lines with `-`/`+`/space markers",
                ),
            );
        }
        for hunk in hunks {
            if hunk.lines.is_empty() {
                return Some(
                    Diagnostic::error(
                        format!("hunk {} of {path} at reply line {} is empty", hunk.number, hunk.reply_line),
                        Some(span),
                    )
                    .with_hint("give each `@@` header the lines it changes, or remove it"),
                );
            }
        }
        None
    }
}

fn parse_region(region: &Region<'_>, map: &SourceMap, parsed: &mut Parsed<FilePatch>) {
    let mut lines: Vec<(usize, &str)> = Vec::with_capacity(agent_apply_sdk::text::line_count(region.text));
    let mut offset = region.offset;
    for line in lines_with_endings(region.text) {
        lines.push((offset, strip_ending(line)));
        offset += line.len();
    }
    let first_line = map.line_of(region.offset);
    let mut reader = RegionReader { region, map, parsed, lines: &lines, first_line, section: None, in_hunk: false };
    let mut i = 0;
    while i < lines.len() {
        i += reader.line(i);
    }
    if let Some(done) = reader.section.take() {
        finish_last(done, region, map, reader.parsed);
    }
}

/// Reads a region's lines into file sections, one kind of line at a time.
struct RegionReader<'r, 'p> {
    region: &'r Region<'r>,
    map: &'r SourceMap,
    parsed: &'p mut Parsed<FilePatch>,
    /// Each line's offset in the reply and its text without the ending.
    lines: &'r [(usize, &'r str)],
    /// The reply line of `lines[0]`: line `i` is this plus `i`, known
    /// without a search of the source map per line.
    first_line: u32,
    section: Option<Section>,
    /// Inside a hunk's body.
    in_hunk: bool,
}

impl RegionReader<'_, '_> {
    /// Read line `i` (and the next, for a `---`/`+++` pair); how many lines it took.
    fn line(&mut self, i: usize) -> usize {
        let line = self.lines[i].1;
        let next = self.lines.get(i + 1).map(|l| l.1);
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let s = self.start_section(i);
            s.git = git_line_paths(rest);
            s.open_header = true;
            self.extend_to(i);
            self.in_hunk = false;
            return 1;
        }
        if line.starts_with("--- ") && next.is_some_and(|n| n.starts_with("+++ ")) {
            self.file_headers(i, &line[4..], &next.expect("checked")[4..]);
            return 2;
        }
        if line.starts_with("@@") {
            self.hunk_header(i);
            return 1;
        }
        if self.section.as_ref().is_some_and(|s| s.hunks.is_empty()) && !self.in_hunk && self.extended_header(i) {
            return 1;
        }
        self.body_line(i);
        1
    }

    /// The offset where line `i` ends (its ending included).
    fn end_of(&self, i: usize) -> usize {
        self.lines.get(i + 1).map_or(self.region.offset + self.region.text.len(), |l| l.0)
    }

    /// The 1-based reply line of line `i`.
    fn line_no(&self, i: usize) -> u32 {
        self.first_line + i as u32
    }

    /// The current section now reaches to the end of line `i`.
    fn extend_to(&mut self, i: usize) {
        let (end, end_line) = (self.end_of(i), self.line_no(i));
        let s = self.section.as_mut().expect("a section is open");
        s.end = end;
        s.end_line = end_line;
    }

    /// Finish the open section, if any, and start one at line `i`.
    fn start_section(&mut self, i: usize) -> &mut Section {
        if let Some(done) = self.section.take() {
            done.finish(self.region, self.map, self.parsed);
        }
        let (at, start_line) = (self.lines[i].0, self.line_no(i));
        self.section.insert(Section { start_line, start: at, end: at, ..Section::default() })
    }

    /// A `---`/`+++` pair at lines `i` and `i + 1`: a new file section,
    /// unless it completes the `diff --git` one just opened.
    fn file_headers(&mut self, i: usize, old: &str, new: &str) {
        let fresh = self.section.as_ref().is_none_or(|s| s.has_headers || !s.hunks.is_empty());
        if fresh {
            self.start_section(i);
        }
        let s = self.section.as_mut().expect("started");
        s.old = Some(header_path(old));
        s.new = Some(header_path(new));
        s.has_headers = true;
        s.open_header = true;
        self.extend_to(i + 1);
        self.in_hunk = false;
    }

    /// An `@@` line: a new hunk (its numbers warned about when unreadable).
    fn hunk_header(&mut self, i: usize) {
        let (at, line) = self.lines[i];
        let line_no = self.line_no(i);
        if self.section.is_none() {
            self.start_section(i);
        }
        let numbers = hunk_numbers(line);
        if numbers.is_none() && line.starts_with("@@ -") && line.len() > 4 && line.as_bytes()[4].is_ascii_digit() {
            self.parsed.diagnostics.push(
                Diagnostic::warning(
                    format!("the hunk header at reply line {line_no} has unreadable line numbers; they are ignored"),
                    Some(self.map.span(at, self.end_of(i))),
                )
                .with_hint("write hunk headers as `@@ -OLD,COUNT +NEW,COUNT @@`, or as a bare `@@ @@`"),
            );
        }
        let s = self.section.as_mut().expect("started");
        s.hunks.push(Hunk::new(s.hunks.len() + 1, line_no, line, numbers));
        s.open_header = false;
        self.extend_to(i);
        self.in_hunk = true;
    }

    /// A git extended header line (`rename from`, `new file mode`, `index`,
    /// ...) before the section's first hunk; false when line `i` is not one.
    fn extended_header(&mut self, i: usize) -> bool {
        let (at, line) = self.lines[i];
        let s = self.section.as_mut().expect("checked by the caller");
        if let Some(p) = line.strip_prefix("rename from ") {
            s.rename_from = Some(p.trim().to_string());
        } else if let Some(p) = line.strip_prefix("rename to ") {
            s.rename_to = Some(p.trim().to_string());
        } else if line.starts_with("new file mode") {
            s.new_file = true;
        } else if line.starts_with("deleted file mode") {
            s.deleted_file = true;
        } else if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
            let line_no = self.line_no(i);
            let span = self.map.span(at, self.end_of(i));
            self.parsed.diagnostics.push(
                Diagnostic::error(format!("reply line {line_no}: binary patches are not supported"), Some(span))
                    .with_hint("change only text files with this format"),
            );
        } else if line.starts_with("--- ") && !s.has_headers {
            // A `---` header whose `+++` never came: the reply's end cut it.
        } else if !EXTENDED_HEADERS.iter().any(|h| line.starts_with(h)) {
            return false;
        }
        let s = self.section.as_mut().expect("checked by the caller");
        // An empty file created or deleted ends at its `index` line.
        s.open_header = (line.starts_with("index ") && !(s.new_file || s.deleted_file)) || line.starts_with("--- ");
        self.extend_to(i);
        true
    }

    /// A line of a hunk's body; the first marked line after the headers (or
    /// in a fenced block of bare hunk lines) opens a hunk without an `@@`.
    fn body_line(&mut self, i: usize) {
        let line = self.lines[i].1;
        let first = line.as_bytes().first().copied();
        let marked = matches!(first, Some(b' ' | b'+' | b'-'));
        let open_bare = !self.in_hunk
            && marked
            && (self.section.as_ref().is_some_and(|s| s.has_headers && s.hunks.is_empty())
                || (self.region.fenced
                    && self.section.is_none()
                    && !line.starts_with("---")
                    && !line.starts_with("+++")));
        if open_bare {
            if self.section.is_none() {
                self.start_section(i);
            }
            let line_no = self.line_no(i);
            let s = self.section.as_mut().expect("started");
            s.hunks.push(Hunk::new(s.hunks.len() + 1, line_no, "", None));
            s.open_header = false;
            self.in_hunk = true;
        }
        if !self.in_hunk {
            return;
        }
        let hunk = self.section.as_mut().and_then(|s| s.hunks.last_mut()).expect("a hunk is open");
        match first {
            Some(b'\\') => self.no_newline_marker(i),
            Some(b' ' | b'+' | b'-') => hunk.lines.push(ReplyText::new(line)),
            None => hunk.lines.push(ReplyText::from("~".to_string())),
            Some(_) if self.region.fenced => hunk.lines.push(format!("~{line}").into()),
            Some(_) => {
                // Bare text: an unmarked line ends the diff (prose after it).
                self.in_hunk = false;
                return;
            }
        }
        self.extend_to(i);
    }

    /// `\ No newline at end of file`: about the hunk line before it.
    fn no_newline_marker(&mut self, i: usize) {
        let (at, line) = self.lines[i];
        let hunk = self.section.as_mut().and_then(|s| s.hunks.last_mut()).expect("a hunk is open");
        match hunk.lines.last().map(|l| l.as_bytes()[0]) {
            Some(b'-') => hunk.old_no_eol = true,
            Some(b'+') => hunk.new_no_eol = true,
            Some(_) => {
                hunk.old_no_eol = true;
                hunk.new_no_eol = true;
            }
            None => {
                let line_no = self.line_no(i);
                self.parsed.diagnostics.push(
                    Diagnostic::error(
                        format!("reply line {line_no}: `{}` before any line of the hunk", line.trim()),
                        Some(self.map.span(at, self.end_of(i))),
                    )
                    .with_hint("the `\\ No newline at end of file` marker goes right after the line it is about"),
                );
            }
        }
    }
}

/// Git extended header lines that carry nothing this format uses.
const EXTENDED_HEADERS: [&str; 7] =
    ["similarity index", "dissimilarity index", "index ", "old mode", "new mode", "copy from ", "copy to "];

/// Finish the last file section of a region; in a bare diff that runs to
/// the reply's end, one that stops short is reported as cut off, ahead of
/// what else is wrong with it.
fn finish_last(section: Section, region: &Region<'_>, map: &SourceMap, parsed: &mut Parsed<FilePatch>) {
    let cut = region.reply_end.filter(|&end| section.end_line >= end).and_then(|_| section.stops_short());
    let (span, first_line) = (map.span(section.start, section.end.max(section.start)), section.start_line);
    let (diagnostics, edits) = (parsed.diagnostics.len(), parsed.edits.len());
    section.finish(region, map, parsed);
    if let Some(why) = cut {
        let name = parsed.edits.get(edits).map_or_else(|| "the last file".to_string(), |e| e.path.clone());
        let inside = format!("inside the diff of {name} (reply line {first_line}): {why}");
        parsed.diagnostics.insert(diagnostics, Diagnostic::cut_off(inside, Some(span)));
    }
}

/// Whether text reads as a diff at all.
pub(crate) fn looks_like_diff(text: &str) -> bool {
    let mut minus = false;
    for line in lines_with_endings(text).map(strip_ending) {
        if line.starts_with("@@") || line.starts_with("diff --git ") {
            return true;
        }
        if line.starts_with("+++ ") && minus {
            return true;
        }
        minus = line.starts_with("--- ");
    }
    false
}

pub(crate) fn parse(reply: &str) -> Parsed<FilePatch> {
    let map = SourceMap::new(reply);
    let mut parsed = Parsed::default();
    let blocks = fenced_blocks(reply);
    let mut regions = Vec::new();
    for block in &blocks {
        if is_shell_info(block.info) {
            let span = map.span(block.start, block.end);
            parsed.commands.push(SuggestedCommand { command: block.body.trim_end().to_string(), span });
            continue;
        }
        // A marker holds a run of five `<` or `>`: most blocks have none,
        // and are not read line by line for one.
        let may_have_markers = holds_run(block.body, [b'<', b'>'], 5);
        let has_markers = may_have_markers && lines_with_endings(block.body).any(is_block_marker);
        if has_markers {
            continue;
        }
        if is_diff_info(block.info) || looks_like_diff(block.body) {
            let fallback_path =
                path_from_info(block.info).or_else(|| path_before(reply, block.start)).filter(|p| looks_like_path(p));
            regions.push(Region {
                text: block.body,
                offset: block.body_start,
                fenced: is_diff_info(block.info),
                unclosed: !block.closed,
                reply_end: None,
                fallback_path,
            });
        }
    }
    if regions.is_empty() {
        // A bare diff: the whole reply, outside any fence.
        let mut text = String::with_capacity(reply.len());
        let mut last = 0;
        for block in &blocks {
            text.push_str(&reply[last..block.start]);
            // Keep offsets aligned: blank out fenced text, newlines kept.
            text.extend(reply[block.start..block.end].bytes().map(|b| if b == b'\n' { '\n' } else { ' ' }));
            last = block.end;
        }
        text.push_str(&reply[last..]);
        let reply_end = Some(reply.trim_end().lines().count() as u32);
        let region = Region { text: &text, offset: 0, fenced: false, unclosed: false, reply_end, fallback_path: None };
        parse_region(&region, &map, &mut parsed);
    } else {
        for region in &regions {
            let before = parsed.edits.len();
            parse_region(region, &map, &mut parsed);
            if region.unclosed {
                let span = parsed.edits[before..].last().map_or(map.span(region.offset, reply.len()), |e| e.span);
                let inside = format!("inside the diff at reply line {}: its fence never closes", span.first_line);
                parsed.diagnostics.push(Diagnostic::cut_off(inside, Some(span)));
            }
        }
    }
    if parsed.edits.is_empty() && parsed.diagnostics.is_empty() {
        parsed.diagnostics.push(Diagnostic::error("no unified diff found in the reply", None).with_hint(
            "send changes as a unified diff in a ```diff fence: `--- a/PATH`, `+++ b/PATH`, then `@@ @@` hunks \
                 whose lines start with ` ` (unchanged), `-` (removed) or `+` (added)",
        ));
    }
    parsed
}
