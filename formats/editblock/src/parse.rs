//! Reading SEARCH/REPLACE blocks out of a model's reply.

use agent_apply_sdk::fence::{is_shell_info, opening_info};
use agent_apply_sdk::paths::{path_from_info, path_from_line};
use agent_apply_sdk::prelude::*;
use agent_apply_sdk::text::{lines_with_endings, strip_ending};

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
pub(crate) fn marker(line: &str) -> Option<Marker> {
    let line = strip_ending(line).trim();
    let run = |ch: char| {
        let count = line.chars().take_while(|&c| c == ch).count();
        (5..=9).contains(&count).then(|| line[count..].trim())
    };
    let word = |rest: &str, word: &str| {
        let rest = rest.trim_end_matches('>').trim_end();
        rest.eq_ignore_ascii_case(word)
    };
    if let Some(rest) = run('<').or_else(|| run('-'))
        && word(rest, "SEARCH")
    {
        return Some(Marker::Search);
    }
    if run('=') == Some("") {
        return Some(Marker::Divider);
    }
    if let Some(rest) = run('>').or_else(|| run('+'))
        && rest.eq_ignore_ascii_case("REPLACE")
    {
        return Some(Marker::Replace);
    }
    None
}

/// A fence line: its character, length and info string.
fn fence(line: &str) -> Option<(u8, usize, &str)> {
    let info = opening_info(line)?;
    let trimmed = strip_ending(line).trim_start();
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
struct Pending {
    path: Option<String>,
    marker_line: usize,
    start: usize,
    body: Vec<String>,
    /// Indexes into `body` of `=======` lines.
    dividers: Vec<usize>,
}

/// How many non-blank lines above a block may hold its path.
const PATH_LOOKBACK: usize = 3;

pub(crate) fn parse(reply: &str) -> Parsed<Block> {
    let map = SourceMap::new(reply);
    let mut parsed = Parsed::default();
    let lines: Vec<(usize, &str)> = {
        let mut offset = 0;
        lines_with_endings(reply)
            .map(|l| {
                let at = offset;
                offset += l.len();
                (at, l)
            })
            .collect()
    };
    let mut fence_open: Option<OpenFence<'_>> = None;
    let mut pending: Option<Pending> = None;
    let mut last_path: Option<String> = None;
    // Lines at or before this index belong to an earlier block: no path lookback past it.
    let mut floor = 0usize;
    let mut block_number = 0usize;

    let mut index = 0;
    while index < lines.len() {
        let (offset, line) = lines[index];
        let kind = marker(line);
        if let Some(block) = pending.as_mut() {
            match kind {
                Some(Marker::Replace) => {
                    let block = pending.take().expect("pending");
                    block_number += 1;
                    let end = offset + line.len();
                    finish(&mut parsed, &map, block, end, block_number, index + 1);
                    floor = index + 1;
                    index += 1;
                    continue;
                }
                Some(Marker::Search) => {
                    // The previous block never ended; report it and start over here.
                    let block = pending.take().expect("pending");
                    block_number += 1;
                    unterminated(&mut parsed, &map, &block, block_number, Some(index + 1), false);
                    floor = index;
                    continue;
                }
                Some(Marker::Divider) => {
                    block.dividers.push(block.body.len());
                    block.body.push(strip_ending(line).to_string());
                }
                None => block.body.push(strip_ending(line).to_string()),
            }
            index += 1;
            continue;
        }
        if kind == Some(Marker::Search) {
            let path = path_above(&lines, index, floor, fence_open.as_ref()).or_else(|| last_path.clone());
            if let Some(path) = &path {
                last_path = Some(path.clone());
            }
            if let Some(f) = fence_open.as_mut() {
                f.had_block = true;
            }
            pending =
                Some(Pending { path, marker_line: index + 1, start: offset, body: Vec::new(), dividers: Vec::new() });
            index += 1;
            continue;
        }
        if matches!(kind, Some(Marker::Replace)) {
            parsed.diagnostics.push(
                Diagnostic::error(
                    format!("reply line {}: a REPLACE marker with no SEARCH block open", index + 1),
                    Some(map.lines_span(index as u32 + 1, index as u32 + 1)),
                )
                .with_hint(
                    "each block is `<<<<<<< SEARCH`, the old lines, `=======`, the new lines, `>>>>>>> REPLACE`",
                ),
            );
        }
        // Fence bookkeeping outside blocks.
        if let Some((ch, len, info)) = fence(line) {
            match fence_open.as_mut() {
                None => {
                    fence_open = Some(OpenFence {
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
                            let open = fence_open.take().expect("open");
                            if !open.had_block && is_shell_info(open.info) {
                                let command = reply[open.body_start..offset].trim_end().to_string();
                                if !command.is_empty() {
                                    parsed.commands.push(SuggestedCommand {
                                        command,
                                        span: map.span(open.start, offset + line.len()),
                                    });
                                }
                            }
                        }
                    } else if !info.is_empty() && len == open.len {
                        open.depth += 1;
                    }
                }
                Some(_) => {}
            }
        }
        index += 1;
    }
    if let Some(block) = pending.take() {
        block_number += 1;
        // A block whose fence closed only lacks its marker; one that runs to
        // the end of the reply with its fence open was cut off.
        let fence_closed = fence_open.as_ref().is_some_and(|open| {
            let last = block.body.iter().rev().find(|l| !l.trim().is_empty());
            last.and_then(|l| fence(l))
                .is_some_and(|(ch, len, info)| ch == open.ch && len >= open.len && info.is_empty())
        });
        unterminated(&mut parsed, &map, &block, block_number, None, !fence_closed);
    }
    parsed
}

/// The path named on the lines just above a SEARCH marker (or in the info
/// string of the fence the marker sits in), looking no further than `floor`.
fn path_above(lines: &[(usize, &str)], index: usize, floor: usize, fence: Option<&OpenFence<'_>>) -> Option<String> {
    let mut looked = 0;
    let mut i = index;
    while i > floor && looked < PATH_LOOKBACK {
        i -= 1;
        let line = strip_ending(lines[i].1);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(info) = opening_info(line) {
            if let Some(path) = path_from_info(info) {
                return Some(path);
            }
            continue;
        }
        if marker(line).is_some() {
            break;
        }
        if let Some(path) = path_from_line(line) {
            return Some(path);
        }
        looked += 1;
    }
    fence.and_then(|f| path_from_info(f.info))
}

fn quote(line: &str) -> String {
    let line = line.trim();
    let short: String = line.chars().take(60).collect();
    if short.len() < line.len() { format!("{short}…") } else { short }
}

fn finish(parsed: &mut Parsed<Block>, map: &SourceMap, block: Pending, end: usize, number: usize, last_line: usize) {
    let span = map.span(block.start, end);
    let Some(path) = block.path else {
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
    let split = |at: usize| {
        let join = |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        (join(&block.body[..at]), join(&block.body[at + 1..]))
    };
    let primary = block.dividers[(block.dividers.len() - 1) / 2];
    let (search, replace) = split(primary);
    let alternatives = block.dividers.iter().filter(|&&d| d != primary).map(|&d| split(d)).collect();
    let search_lines = lines_with_endings(&search).count();
    let replace_lines = lines_with_endings(&replace).count();
    let summary = if search.trim().is_empty() {
        format!("create or append ({replace_lines} lines)")
    } else {
        format!("replace {search_lines} lines with {replace_lines}")
    };
    let first = search.lines().find(|l| !l.trim().is_empty()).map(quote).unwrap_or_default();
    parsed.edits.push(ParsedEdit {
        path,
        related_paths: Vec::new(),
        span,
        summary,
        op: Block { number, reply_line: block.marker_line as u32, first, search, replace, alternatives },
    });
}

fn unterminated(
    parsed: &mut Parsed<Block>,
    map: &SourceMap,
    block: &Pending,
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
