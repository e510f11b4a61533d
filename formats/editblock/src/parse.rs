//! Reading SEARCH/REPLACE blocks out of a model's reply.

use agent_apply_sdk::fence::{is_shell_info, opening_info};
use agent_apply_sdk::message;
use agent_apply_sdk::paths::{path_from_info, path_from_line};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::source::IndexedLines;
use agent_apply_sdk::text::{lines_holding, same_text, strip_ending, trim, trim_end, trim_start};

use crate::Block;

/// What a reply line is, as far as the block grammar cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Search,
    Divider,
    Replace,
}

/// `<<<<<<< SEARCH` (5–9 `<`, a stray `>` after it tolerated) or Cline's
/// `------- SEARCH`; `=======`; `>>>>>>> REPLACE` or `+++++++ REPLACE`.
#[inline]
pub(crate) fn marker(line: &str) -> Option<Marker> {
    // Every line of the reply is asked; most start with none of the marker
    // characters, and are turned down here, in the caller, before any
    // trimming of their end (a call per line, with the frame the rest
    // needs, was a third of the asking).
    let line = agent_apply_sdk::text::trim_start(line);
    if !matches!(line.as_bytes().first(), Some(b'<' | b'-' | b'=' | b'>' | b'+')) {
        return None;
    }
    marker_after_blanks(line)
}

/// The markers as the instructions write them.
const CANONICAL_MARKERS: [(&str, Marker); 3] =
    [("<<<<<<< SEARCH", Marker::Search), ("=======", Marker::Divider), (">>>>>>> REPLACE", Marker::Replace)];

/// [`marker`] of a line without its leading blanks, which starts with a
/// marker character.
#[inline(never)]
fn marker_after_blanks(line: &str) -> Option<Marker> {
    let line = strip_ending(line);
    // Most marker lines are written as the instructions show them: those
    // are known by one compare, before any trimming or counting.
    for (written, marker) in CANONICAL_MARKERS {
        if same_text(line, written) {
            return Some(marker);
        }
    }
    // The SDK's trims, and the run counted in bytes: ASCII byte by byte,
    // where `str`'s decode each char. Every marker is a run of one ASCII
    // character, so a byte count is its char count.
    let line = trim_end(line);
    let first = *line.as_bytes().first()?;
    let count = line.bytes().take_while(|&b| b == first).count();
    if !(5..=9).contains(&count) {
        return None;
    }
    let rest = trim(&line[count..]);
    match first {
        b'<' | b'-' => trim_end(rest.trim_end_matches('>')).eq_ignore_ascii_case("SEARCH").then_some(Marker::Search),
        b'=' => rest.is_empty().then_some(Marker::Divider),
        b'>' | b'+' => rest.eq_ignore_ascii_case("REPLACE").then_some(Marker::Replace),
        _ => None,
    }
}

/// Which markers `reply` holds: (SEARCH, divider, REPLACE). Each is a run
/// of five or more of one character, so only the lines holding such a run
/// are read, not every line of a megabyte reply.
pub(crate) fn markers_in(reply: &str) -> (bool, bool, bool) {
    let holds = |run: &str, wanted: Marker| lines_holding(reply, run).any(|(_, line)| marker(line) == Some(wanted));
    (
        holds("<<<<<", Marker::Search) || holds("-----", Marker::Search),
        holds("=====", Marker::Divider),
        holds(">>>>>", Marker::Replace) || holds("+++++", Marker::Replace),
    )
}

/// A fence line: its character, length and info string.
fn fence(line: &str) -> Option<(u8, usize, &str)> {
    let info = opening_info(line)?;
    let trimmed = trim_start(strip_ending(line));
    let ch = trimmed.as_bytes()[0];
    let len = trimmed.bytes().take_while(|&b| b == ch).count();
    Some((ch, len, info))
}

struct OpenFence<'a> {
    ch: u8,
    len: usize,
    info: &'a str,
    start: usize,
    body_start: usize,
    depth: usize,
    had_block: bool,
}

/// A block being read.
struct Pending<'a> {
    path: Option<String>,
    marker_line: usize,
    start: usize,
    /// The block's lines, without their endings: slices of the reply.
    body: Vec<&'a str>,
    /// Indexes into `body` of `=======` lines.
    dividers: Vec<usize>,
}

/// How many non-blank lines above a block may hold its path.
const PATH_LOOKBACK: usize = 3;

/// The blocks of a reply, diagnostics for broken ones, and shell blocks
/// that hold no block as suggested commands.
pub(crate) fn parse(reply: &str, summaries: bool) -> Parsed<Block> {
    let mut reader = Reader::new(reply, summaries);
    let mut index = 0;
    while index < reader.lines.len() {
        index = if reader.pending.is_some() { reader.in_block(index) } else { reader.outside_block(index) };
    }
    reader.end_of_reply();
    reader.parsed
}

/// How many blocks the reply may hold, to size the edits once: grown by
/// doubling, a reply of 20,000 blocks had the old and new vectors side by
/// side, megabytes of the plugin's memory that never shrinks. It counts the
/// `SEARCH` marker lines (a lowercase marker's block just grows the vector
/// as before), and no more than a block per three lines, so a reply of
/// markers alone reserves no more than its blocks could need.
pub(crate) fn blocks_at_most(lines: &IndexedLines<'_>, reply: &str) -> usize {
    let marker_line = |at: usize| lines.line(lines.index_at(at + 1) - 1);
    let markers = memchr::memmem::find_iter(reply.as_bytes(), "SEARCH")
        .filter(|&at| marker(marker_line(at)) == Some(Marker::Search))
        .count();
    markers.min(lines.len() / 3)
}

/// The reply read line by line: the block and fence open at the current
/// line, and what has been found so far.
struct Reader<'a> {
    reply: &'a str,
    parsed: Parsed<Block>,
    /// The reply's lines, with their endings and offsets; spans come from its map.
    lines: IndexedLines<'a>,
    fence_open: Option<OpenFence<'a>>,
    pending: Option<Pending<'a>>,
    /// The path of the last block that named one: later blocks without a
    /// path line edit the same file.
    last_path: Option<String>,
    /// Lines at or before this index belong to an earlier block: no path lookback past it.
    floor: usize,
    paths: PathMemo<'a>,
    block_number: usize,
    /// The vectors of the last block read, emptied for the next: a block
    /// grew its own from nothing, three times for ten lines.
    spare: (Vec<&'a str>, Vec<usize>),
    /// Whether the host shows the edits' summaries (else they are left empty).
    summaries: bool,
}

impl<'a> Reader<'a> {
    fn new(reply: &'a str, summaries: bool) -> Self {
        let lines = IndexedLines::new(reply);
        Reader {
            reply,
            parsed: Parsed { edits: Vec::with_capacity(blocks_at_most(&lines, reply)), ..Parsed::default() },
            lines,
            fence_open: None,
            pending: None,
            last_path: None,
            floor: 0,
            paths: PathMemo::default(),
            block_number: 0,
            spare: Default::default(),
            summaries,
        }
    }

    /// Line `index` inside an open block. Returns the next line to read.
    fn in_block(&mut self, index: usize) -> usize {
        let (offset, line) = (self.lines.offset(index), self.lines.line(index));
        match marker(line) {
            Some(Marker::Replace) => {
                let mut block = self.pending.take().expect("pending");
                self.block_number += 1;
                let end = offset + line.len();
                let (number, summaries) = (self.block_number, self.summaries);
                finish(&mut self.parsed, self.lines.map(), &mut block, (end, index + 1), number, summaries);
                self.spare = (block.body, block.dividers);
                self.floor = index + 1;
            }
            Some(Marker::Search) => {
                // The previous block never ended; report it and start over here.
                let block = self.pending.take().expect("pending");
                self.block_number += 1;
                unterminated(&mut self.parsed, self.lines.map(), &block, self.block_number, Some(index + 1), false);
                self.spare = (block.body, block.dividers);
                self.floor = index;
                return index;
            }
            kind => {
                let block = self.pending.as_mut().expect("a block is open");
                if kind == Some(Marker::Divider) {
                    block.dividers.push(block.body.len());
                }
                block.body.push(strip_ending(line));
            }
        }
        index + 1
    }

    /// Line `index` outside any block: a SEARCH marker opens one; other
    /// lines only move fences. Returns the next line to read.
    fn outside_block(&mut self, index: usize) -> usize {
        match marker(self.lines.line(index)) {
            Some(Marker::Search) => self.open_block(index),
            Some(Marker::Replace) => {
                self.stray_replace(index);
                self.track_fence(index);
            }
            _ => self.track_fence(index),
        }
        index + 1
    }

    /// A SEARCH marker on line `index` opens a block, for the path named
    /// above it or else the last block's.
    fn open_block(&mut self, index: usize) {
        let path = path_above(&self.lines, index, self.floor, self.fence_open.as_ref(), &mut self.paths)
            .or_else(|| self.last_path.clone());
        if let Some(path) = &path {
            self.last_path = Some(path.clone());
        }
        if let Some(f) = self.fence_open.as_mut() {
            f.had_block = true;
        }
        let start = self.lines.offset(index);
        let (mut body, mut dividers) = std::mem::take(&mut self.spare);
        body.clear();
        dividers.clear();
        self.pending = Some(Pending { path, marker_line: index + 1, start, body, dividers });
    }

    fn stray_replace(&mut self, index: usize) {
        self.parsed.diagnostics.push(
            Diagnostic::error(
                format!("reply line {}: a REPLACE marker with no SEARCH block open", index + 1),
                Some(self.lines.map().lines_span(index as u32 + 1, index as u32 + 1)),
            )
            .with_hint("each block is `<<<<<<< SEARCH`, the old lines, `=======`, the new lines, `>>>>>>> REPLACE`"),
        );
    }

    /// Fence bookkeeping outside blocks: open a fence, count fences nested
    /// in it, or close it (a shell block that held no edit block is a
    /// suggested command).
    fn track_fence(&mut self, index: usize) {
        let (offset, line) = (self.lines.offset(index), self.lines.line(index));
        let Some((ch, len, info)) = fence(line) else { return };
        match self.fence_open.as_mut() {
            None => {
                self.fence_open = Some(OpenFence {
                    ch,
                    len,
                    info,
                    start: offset,
                    body_start: offset + line.len(),
                    depth: 0,
                    had_block: false,
                })
            }
            Some(open) if open.ch == ch => {
                if info.is_empty() && len >= open.len {
                    if open.depth > 0 {
                        open.depth -= 1;
                    } else {
                        let open = self.fence_open.take().expect("open");
                        self.close_fence(open, offset, offset + line.len());
                    }
                } else if !info.is_empty() && len == open.len {
                    open.depth += 1;
                }
            }
            Some(_) => {}
        }
    }

    /// `open` closes on the line from byte `at` to `end`.
    fn close_fence(&mut self, open: OpenFence<'_>, at: usize, end: usize) {
        if open.had_block || !is_shell_info(open.info) {
            return;
        }
        let command = self.reply[open.body_start..at].trim_end().to_string();
        if !command.is_empty() {
            self.parsed.commands.push(SuggestedCommand { command, span: self.lines.map().span(open.start, end) });
        }
    }

    /// A block still open at the end of the reply.
    fn end_of_reply(&mut self) {
        let Some(block) = self.pending.take() else { return };
        self.block_number += 1;
        // A block whose fence closed only lacks its marker; one that runs to
        // the end of the reply with its fence open was cut off.
        let fence_closed = self.fence_open.as_ref().is_some_and(|open| {
            let last = block.body.iter().rev().find(|l| !trim(l).is_empty());
            last.and_then(|l| fence(l))
                .is_some_and(|(ch, len, info)| ch == open.ch && len >= open.len && info.is_empty())
        });
        unterminated(&mut self.parsed, self.lines.map(), &block, self.block_number, None, !fence_closed);
    }
}

/// The path named on the lines just above a SEARCH marker (or in the info
/// string of the fence the marker sits in), looking no further than `floor`.
fn path_above<'a>(
    lines: &IndexedLines<'a>,
    index: usize,
    floor: usize,
    fence: Option<&OpenFence<'a>>,
    paths: &mut PathMemo<'a>,
) -> Option<String> {
    let mut looked = 0;
    let mut i = index;
    while i > floor && looked < PATH_LOOKBACK {
        i -= 1;
        let line = strip_ending(lines.line(i));
        if trim(line).is_empty() {
            continue;
        }
        if let Some(info) = opening_info(line) {
            if let Some(path) = paths.of_info(info) {
                return Some(path);
            }
            continue;
        }
        if marker(line).is_some() {
            break;
        }
        if let Some(path) = paths.of_line(line) {
            return Some(path);
        }
        looked += 1;
    }
    fence.and_then(|f| paths.of_info(f.info))
}

/// The last line and info string a path was read from, and what was read:
/// the blocks of one file repeat the same lines above them, and reading a
/// path out of a line again cost each block thousands of instructions.
#[derive(Default)]
struct PathMemo<'a> {
    line: Option<(&'a str, Option<String>)>,
    info: Option<(&'a str, Option<String>)>,
}

impl<'a> PathMemo<'a> {
    fn of_line(&mut self, line: &'a str) -> Option<String> {
        remembered(&mut self.line, line, path_from_line)
    }

    fn of_info(&mut self, info: &'a str) -> Option<String> {
        remembered(&mut self.info, info, path_from_info)
    }
}

fn remembered<'a>(
    last: &mut Option<(&'a str, Option<String>)>,
    text: &'a str,
    read: fn(&str) -> Option<String>,
) -> Option<String> {
    match last {
        Some((seen, path)) if same_text(seen, text) => path.clone(),
        _ => last.insert((text, read(text))).1.clone(),
    }
}

fn finish(
    parsed: &mut Parsed<Block>,
    map: &SourceMap,
    block: &mut Pending<'_>,
    (end, last_line): (usize, usize),
    number: usize,
    summaries: bool,
) {
    let span = map.span(block.start, end);
    let Some(path) = block.path.take() else {
        parsed.diagnostics.push(
            Diagnostic::error(format!("block {number} at reply line {} names no file", block.marker_line), Some(span))
                .with_hint("write the file's path alone on the line before the block (or before its opening fence)"),
        );
        return;
    };
    if block.dividers.is_empty() {
        parsed.diagnostics.push(
            Diagnostic::error(
                format!(
                    "block {number} for {path} at reply line {}: expected a `=======` line between SEARCH and REPLACE before reply line {last_line}",
                    block.marker_line
                ),
                Some(span),
            )
            .with_hint("each block is `<<<<<<< SEARCH`, the old lines, `=======`, the new lines, `>>>>>>> REPLACE`"),
        );
        return;
    }
    let split = |at: usize| (ReplyText::joined(&block.body[..at]), ReplyText::joined(&block.body[at + 1..]));
    let primary = block.dividers[(block.dividers.len() - 1) / 2];
    let (search, replace) = split(primary);
    let alternatives = block.dividers.iter().filter(|&&d| d != primary).map(|&d| split(d)).collect();
    let search_lines = primary;
    let replace_lines = block.body.len() - primary - 1;
    let summary = if !summaries {
        String::new()
    } else if search.trim().is_empty() {
        message!("create or append (", LineCount(replace_lines), ")")
    } else {
        message!("replace ", LineCount(search_lines), " with ", replace_lines)
    };
    parsed.edits.push(ParsedEdit {
        path,
        related_paths: Vec::new(),
        span,
        summary,
        op: Block { number, reply_line: block.marker_line as u32, search, replace, alternatives },
    });
}

fn unterminated(
    parsed: &mut Parsed<Block>,
    map: &SourceMap,
    block: &Pending<'_>,
    number: usize,
    next: Option<usize>,
    cut_off: bool,
) {
    let end = match next {
        Some(line) => map.line_start(line as u32),
        None => map.line_start(u32::MAX),
    };
    let expected = if block.dividers.is_empty() { "`=======` and then `>>>>>>> REPLACE`" } else { "`>>>>>>> REPLACE`" };
    let place = match next {
        Some(line) => format!("before the next SEARCH marker at reply line {line}"),
        None => "before the end of the reply".to_string(),
    };
    let path = block.path.as_deref().map(|p| format!(" for {p}")).unwrap_or_default();
    if cut_off {
        let inside = format!("inside block {number}{path} (reply line {}): it has no {expected}", block.marker_line);
        parsed.diagnostics.push(Diagnostic::cut_off(inside, Some(map.span(block.start, end))));
        return;
    }
    parsed.diagnostics.push(
        Diagnostic::error(
            format!(
                "block {number}{path} at reply line {} is not terminated: expected {expected} {place}",
                block.marker_line
            ),
            Some(map.span(block.start, end)),
        )
        .with_hint("end every block with a `>>>>>>> REPLACE` line"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marker reading as first written: runs counted in chars, `str`'s trims.
    fn marker_by_chars(line: &str) -> Option<Marker> {
        let line = strip_ending(line).trim_end();
        let run = |ch: char| {
            let count = line.chars().take_while(|&c| c == ch).count();
            (5..=9).contains(&count).then(|| line[count..].trim())
        };
        let word = |rest: &str, word: &str| rest.trim_end_matches('>').trim_end().eq_ignore_ascii_case(word);
        if run('<').or_else(|| run('-')).is_some_and(|rest| word(rest, "SEARCH")) {
            return Some(Marker::Search);
        }
        if run('=') == Some("") {
            return Some(Marker::Divider);
        }
        run('>').or_else(|| run('+')).filter(|rest| rest.eq_ignore_ascii_case("REPLACE")).map(|_| Marker::Replace)
    }

    proptest::proptest! {
        #[test]
        fn markers_are_read_as_by_chars(
            run in "[<>=+-]", count in 1usize..11, other in "[<>=+-]?",
            tail in "[ \u{3000}]{0,2}(SEARCH|search|REPLACE|Replace|x|<|)[> \u{e9}]{0,3}\r?\n?",
        ) {
            let line = format!("{}{other}{tail}", run.repeat(count));
            proptest::prop_assert_eq!(marker_after_blanks(&line), marker_by_chars(&line));
        }
    }
}
