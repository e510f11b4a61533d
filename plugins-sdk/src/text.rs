//! Lines that keep their endings, and a file's text style (BOM, CRLF or LF,
//! final newline), so edits change exactly the bytes they mean to.

use memchr::memmem::Finder;

/// The byte-order mark some editors put at the start of UTF-8 files.
pub const BOM: char = '\u{feff}';

/// Split `text` into lines, each keeping its ending (`\n` or `\r\n`); the last
/// line has no ending when the text does not end with a newline. Empty text has
/// no lines. Concatenating the lines gives back `text` exactly.
#[inline]
pub fn lines_with_endings(text: &str) -> LinesWithEndings<'_> {
    LinesWithEndings { text, start: 0, block: 0, newlines: newline_mask(text.as_bytes(), 0) }
}

/// The byte offsets of the non-overlapping occurrences of `needle` in
/// `haystack`, by memchr's SIMD substring search: several times faster than
/// `str::match_indices` on the large files a format searches once per edit.
pub fn find_all<'h>(haystack: &'h str, needle: &str) -> impl Iterator<Item = usize> + 'h {
    memchr::memmem::find_iter(haystack.as_bytes(), needle.as_bytes()).into_owned()
}

/// The lines of `text` that hold `needle` (which holds no line break),
/// each once, with the offset where each starts; lines keep their endings,
/// as [`lines_with_endings`] gives them. Found by a SIMD search for
/// `needle`, not line by line: a format looking for a rare marker in a
/// megabyte reply reads only the lines around each occurrence.
pub fn lines_holding<'t>(text: &'t str, needle: &str) -> impl Iterator<Item = (usize, &'t str)> + 't {
    debug_assert!(!needle.contains('\n'), "a needle across lines: {needle:?}");
    let finder = Finder::new(needle).into_owned();
    let mut from = 0;
    std::iter::from_fn(move || next_line_holding(text, &mut from, &finder))
}

/// [`lines_holding`] with a finder made once, for needles searched in many texts.
pub(crate) fn lines_found<'t>(text: &'t str, finder: &Finder<'_>) -> impl Iterator<Item = (usize, &'t str)> {
    let mut from = 0;
    std::iter::from_fn(move || next_line_holding(text, &mut from, finder))
}

/// The next line of `text` at or past `*from` (a line start) that holds
/// what `finder` looks for; `*from` moves past it.
fn next_line_holding<'t>(text: &'t str, from: &mut usize, finder: &Finder<'_>) -> Option<(usize, &'t str)> {
    let bytes = text.as_bytes();
    if *from >= bytes.len() {
        return None;
    }
    let at = *from + finder.find(&bytes[*from..])?;
    let start = memchr::memrchr(b'\n', &bytes[*from..at]).map_or(*from, |i| *from + i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
    *from = end;
    Some((start, &text[start..end]))
}

/// Byte offset of `inner`, a slice of `outer`, in `outer` (clamped to it):
/// where a value a format read from the reply stands in the reply.
#[inline]
pub fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize).min(outer.len())
}

/// Whether `needle` occurs in `haystack`, by memchr's SIMD substring
/// search. A format's `detect` looks for a few words in the whole reply,
/// and `str::contains` (a two-way search) cost a 10 MB reply's detection
/// more than the format's own reading of it.
pub fn contains(haystack: &str, needle: &str) -> bool {
    memchr::memmem::find(haystack.as_bytes(), needle.as_bytes()).is_some()
}

/// Whether `text` holds `len` of one of the `bytes` in a row (`<<<<<` or
/// `>>>>>` for a merge-style marker): one SIMD pass for both bytes, each
/// hit looked at, where a substring search per run read the text twice and
/// cost a 10 MB diff's parse 7% in a component.
pub fn holds_run(text: &str, bytes: [u8; 2], len: usize) -> bool {
    let text = text.as_bytes();
    memchr::memchr2_iter(bytes[0], bytes[1], text)
        .any(|at| text.get(at..at + len).is_some_and(|run| run.iter().all(|&b| b == text[at])))
}

/// How many lines [`lines_with_endings`] gives, counted without splitting.
pub fn line_count(text: &str) -> usize {
    newline_count(text) + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The lines of `text` without their endings, in a vector sized once:
/// collected from [`lines_with_endings`], it grew by doubling, and a file's
/// lines were copied several times over (in a component, into memory it
/// keeps).
pub fn lines_without_endings(text: &str) -> Vec<&str> {
    let mut lines = Vec::with_capacity(line_count(text));
    lines.extend(lines_with_endings(text).map(strip_ending));
    lines
}

/// `lines`, each ended with `\n`.
pub fn joined_lines<L: AsRef<str>>(lines: &[L]) -> String {
    let mut text = String::with_capacity(lines.iter().map(|l| l.as_ref().len() + 1).sum());
    for line in lines {
        text.push_str(line.as_ref());
        text.push('\n');
    }
    text
}

/// `n` lines in words, for messages: "1 line", "3 lines".
pub fn lines_label(n: usize) -> String {
    LineCount(n).to_string()
}

/// `1 line`, `3 lines`: [`lines_label`] written straight into a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCount(pub usize);

impl std::fmt::Display for LineCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            1 => f.write_str("1 line"),
            n => write!(f, "{n} lines"),
        }
    }
}

/// `line 4` or `lines 4-9`: the lines from the first to the last (1-based,
/// both included), written straight into a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan(pub u32, pub u32);

impl std::fmt::Display for LineSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            LineSpan(first, last) if first == last => write!(f, "line {first}"),
            LineSpan(first, last) => write!(f, "lines {first}-{last}"),
        }
    }
}

/// How many `\n` bytes `text` holds (SIMD-counted: formats count them up
/// to each match, in files of megabytes).
pub fn newline_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
}

/// The iterator of [`lines_with_endings`]. Source lines are short (a few
/// dozen bytes), so a search started afresh for each `\n` costs more than
/// the line: the text is read in blocks of [`BLOCK`] bytes instead, each
/// turned into a bit mask of its `\n` bytes (SIMD compares where the target
/// has them, wasm `simd128` included), and each line ends at the next bit.
#[derive(Debug, Clone)]
pub struct LinesWithEndings<'a> {
    text: &'a str,
    /// Where the next line starts.
    start: usize,
    /// Where the block `newlines` maps starts.
    block: usize,
    /// The block's `\n` bytes at or past `start`, bit `i` for `block + i`.
    newlines: u64,
}

impl<'a> Iterator for LinesWithEndings<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        while self.newlines == 0 {
            if !self.next_block() {
                return self.last_line();
            }
        }
        let end = self.block + self.newlines.trailing_zeros() as usize + 1;
        self.newlines &= self.newlines - 1;
        // SAFETY: `start` and `end` are 0 or just past a `\n`, which is
        // ASCII, so both are char boundaries of `text`, and `start <= end`.
        let line = unsafe { self.text.get_unchecked(self.start..end) };
        self.start = end;
        Some(line)
    }
}

impl<'a> LinesWithEndings<'a> {
    /// Map the next block; false past the end of the text.
    fn next_block(&mut self) -> bool {
        self.block += BLOCK;
        if self.block >= self.text.len() {
            self.block = self.text.len();
            return false;
        }
        self.newlines = newline_mask(self.text.as_bytes(), self.block);
        true
    }

    /// What is left once no `\n` is: the last line when the text does not
    /// end with one, then nothing.
    fn last_line(&mut self) -> Option<&'a str> {
        let line = &self.text[self.start..];
        self.start = self.text.len();
        (!line.is_empty()).then_some(line)
    }
}

/// How many bytes [`newline_mask`] maps at once.
pub(crate) const BLOCK: usize = 64;

/// The `\n` bytes of `bytes[at..at + BLOCK]` (fewer at the end), bit `i`
/// for `bytes[at + i]`.
pub(crate) fn newline_mask(bytes: &[u8], at: usize) -> u64 {
    let block = bytes.get(at..).unwrap_or_default();
    match block.first_chunk::<BLOCK>() {
        Some(full) => full.chunks_exact(16).enumerate().fold(0, |mask, (i, chunk)| {
            mask | u64::from(newlines_in_16(chunk.try_into().expect("16 bytes"))) << (16 * i)
        }),
        None => newline_bits(block),
    }
}

/// The `\n` bytes of `bytes` (at most 64), bit `i` for `bytes[i]`, a byte
/// at a time: a block's tail, and the 16-byte chunks where no SIMD is.
fn newline_bits(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().fold(0, |mask, (i, &b)| mask | u64::from(b == b'\n') << i)
}

/// The `\n` bytes of 16 bytes, bit `i` for byte `i`.
#[cfg(target_arch = "x86_64")]
fn newlines_in_16(chunk: &[u8; 16]) -> u16 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of `chunk`.
    unsafe {
        let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\n' as i8))) as u16
    }
}

/// The `\n` bytes of 16 bytes, bit `i` for byte `i`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn newlines_in_16(chunk: &[u8; 16]) -> u16 {
    use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128_load};
    // SAFETY: the load reads the 16 bytes of `chunk`; wasm loads need no alignment.
    let bytes = unsafe { v128_load(chunk.as_ptr().cast()) };
    u8x16_bitmask(u8x16_eq(bytes, u8x16_splat(b'\n')))
}

/// The `\n` bytes of 16 bytes, bit `i` for byte `i`.
#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
fn newlines_in_16(chunk: &[u8; 16]) -> u16 {
    newline_bits(chunk) as u16
}

/// `a == b`, eight bytes at a time. Inside a wasm component `==` on text
/// calls the C library's `memcmp`, which compares a byte at a time; the
/// matching compares lines by the thousand.
#[inline]
pub fn same_text(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same_text`] of bytes.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    // Word by word, split off rather than through `chunks_exact` (whose
    // bookkeeping cost as much as the compares), and the last word read
    // where it ends, overlapping the one before: no byte loop for the tail.
    let (Some(last_a), Some(last_b)) = (a.last_chunk::<8>(), b.last_chunk::<8>()) else {
        return short_same(a, b);
    };
    let (mut rest_a, mut rest_b) = (a, b);
    while rest_a.len() > 8
        && let (Some((word_a, tail_a)), Some((word_b, tail_b))) =
            (rest_a.split_first_chunk::<8>(), rest_b.split_first_chunk::<8>())
    {
        if u64::from_le_bytes(*word_a) != u64::from_le_bytes(*word_b) {
            return false;
        }
        (rest_a, rest_b) = (tail_a, tail_b);
    }
    u64::from_le_bytes(*last_a) == u64::from_le_bytes(*last_b)
}

/// [`same_text`] of two texts of the same length, under eight bytes.
fn short_same(a: &[u8], b: &[u8]) -> bool {
    match (a.first_chunk::<4>(), a.last_chunk::<4>(), b.first_chunk::<4>(), b.last_chunk::<4>()) {
        (Some(first_a), Some(last_a), Some(first_b), Some(last_b)) => {
            u32::from_le_bytes(*first_a) == u32::from_le_bytes(*first_b)
                && u32::from_le_bytes(*last_a) == u32::from_le_bytes(*last_b)
        }
        _ => a.iter().zip(b).all(|(x, y)| x == y),
    }
}

/// `text.trim()`, without decoding characters when the text starts and ends
/// in ASCII, as code mostly does: the formats trim every line of megabyte
/// replies and files.
#[inline]
pub fn trim(text: &str) -> &str {
    trim_end(trim_start(text))
}

/// `text.trim_end()`, byte by byte while the text ends in ASCII: lines are
/// compared without their trailing blanks.
#[inline]
pub fn trim_end(text: &str) -> &str {
    let bytes = text.as_bytes();
    let end = bytes.iter().rposition(|&b| !is_blank(b)).map_or(0, |i| i + 1);
    if end > 0 && bytes[end - 1] >= 0x80 {
        // Unicode white space may stand before the ASCII blanks.
        return text.trim_end();
    }
    &text[..end]
}

/// `text.trim_start()`, byte by byte while the text starts in ASCII: every
/// line of a reply or file is asked where it starts.
#[inline]
pub fn trim_start(text: &str) -> &str {
    let start = leading_blanks(text.as_bytes());
    match text.as_bytes().get(start) {
        Some(&byte) if byte < 0x80 => &text[start..],
        None => "",
        Some(_) => text.trim_start(),
    }
}

/// How many ASCII blanks `bytes` starts with. Indentation is mostly spaces:
/// they are skipped eight at a time.
#[inline]
pub(crate) fn leading_blanks(bytes: &[u8]) -> usize {
    // Most lines of a reply or file start with text, or a diff's marker.
    if bytes.first().is_some_and(|&b| !is_blank(b)) {
        return 0;
    }
    let mut start = 0;
    while let Some(chunk) = bytes[start..].first_chunk::<8>()
        && *chunk == [b' '; 8]
    {
        start += 8;
    }
    start + bytes[start..].iter().position(|&b| !is_blank(b)).unwrap_or(bytes.len() - start)
}

/// Whether `byte` is one of the ASCII characters `char::is_whitespace`
/// takes: tab to carriage return, and space.
#[inline]
pub(crate) fn is_blank(byte: u8) -> bool {
    matches!(byte, b'\t'..=b'\r' | b' ')
}

/// A line without its `\n` or `\r\n`.
#[inline]
pub fn strip_ending(line: &str) -> &str {
    // By bytes: `strip_suffix` with a `char` goes through the pattern
    // machinery, and every line of every file passes here.
    let bytes = line.as_bytes();
    let bytes = if let [rest @ .., b'\n'] = bytes { rest } else { bytes };
    let bytes = if let [rest @ .., b'\r'] = bytes { rest } else { bytes };
    // SAFETY: only ASCII bytes were taken off the end, so the rest ends on
    // a char boundary of `line`.
    unsafe { line.get_unchecked(..bytes.len()) }
}

/// The ending of a line: `"\r\n"`, `"\n"` or `""`.
pub fn ending_of(line: &str) -> &str {
    &line[strip_ending(line).len()..]
}

/// `content` with line ranges replaced. Each splice is a range of line
/// indexes (0-based, counted after any BOM, in order, not overlapping) and
/// the lines (without endings) that take its place. Untouched lines are
/// copied as they are, bytes and endings; new lines end with `eol`. The
/// result ends with a line ending exactly when `final_newline` (unless it is
/// empty). Unchanged stretches are copied whole, and nothing but the result
/// is allocated: files can be megabytes, and in a wasm plugin every
/// allocation is fresh linear memory.
pub fn splice_lines<'a, L: AsRef<str> + 'a>(
    content: &str,
    splices: impl IntoIterator<Item = (std::ops::Range<usize>, &'a [L])>,
    eol: &str,
    final_newline: bool,
) -> String {
    let (_, body) = split_bom(content);
    // The byte offset of line `line`, moved forward only.
    let (mut line, mut offset) = (0, 0);
    let seek = |target: usize| {
        while line < target && offset < body.len() {
            offset = memchr::memchr(b'\n', &body.as_bytes()[offset..]).map_or(body.len(), |i| offset + i + 1);
            line += 1;
        }
        offset
    };
    splice_at(content, splices, eol, final_newline, seek)
}

/// [`splice_lines`], told where each line starts: `line_start(i)` is the
/// byte offset of line `i` in the content after any BOM (its length past the
/// last line), asked for ascending `i`.
pub(crate) fn splice_at<'a, L: AsRef<str> + 'a>(
    content: &str,
    splices: impl IntoIterator<Item = (std::ops::Range<usize>, &'a [L])>,
    eol: &str,
    final_newline: bool,
    line_start: impl FnMut(usize) -> usize,
) -> String {
    ByteSplices::new(content, splices, eol, line_start).render(final_newline)
}

/// Line splices turned into byte ranges of the content after any BOM, with
/// the size of the result: the result is then allocated once at its full
/// size (grown by doubling, a file's copy was made twice over, and in a
/// wasm plugin the space it left behind stays in linear memory), and what
/// told where lines start can be freed before it is. It keeps the content
/// and the ending it was sized for, so it renders with those.
pub(crate) struct ByteSplices<'c, 'a, L> {
    content: &'c str,
    eol: &'c str,
    splices: Vec<(usize, usize, &'a [L])>,
    size: usize,
}

impl<'c, 'a, L: AsRef<str> + 'a> ByteSplices<'c, 'a, L> {
    pub(crate) fn new(
        content: &'c str,
        splices: impl IntoIterator<Item = (std::ops::Range<usize>, &'a [L])>,
        eol: &'c str,
        mut line_start: impl FnMut(usize) -> usize,
    ) -> Self {
        let mut size = content.len();
        let splices = splices
            .into_iter()
            .map(|(range, lines)| {
                let start = line_start(range.start);
                let end = line_start(range.end).max(start);
                size = size - (end - start) + lines.iter().map(|l| l.as_ref().len() + eol.len()).sum::<usize>();
                (start, end, lines)
            })
            .collect();
        ByteSplices { content, eol, splices, size }
    }

    /// The content with the splices made (see [`splice_lines`]).
    pub(crate) fn render(self, final_newline: bool) -> String {
        let ByteSplices { content, eol, splices, size } = self;
        let (bom, body) = split_bom(content);
        let eol_len = eol.len();
        // Room for an ending after an unterminated last line, and a final one.
        let mut out = String::with_capacity(size + 2 * eol_len);
        if bom {
            out.push(BOM);
        }
        let empty = out.len();
        // A one-byte ending is pushed, not copied: in a component each copy is
        // a call out of the compiled code.
        let lf = eol == "\n";
        let mut copied = 0;
        for (start, end, lines) in splices {
            out.push_str(&body[copied..start]);
            // Only a last line lacks its ending; new lines after it need one.
            if !lines.is_empty() && out.len() > empty && !out.ends_with('\n') {
                out.push_str(eol);
            }
            for new in lines {
                out.push_str(new.as_ref());
                if lf { out.push('\n') } else { out.push_str(eol) }
            }
            copied = end;
        }
        out.push_str(&body[copied..]);
        if out.len() > empty {
            if !final_newline && out.ends_with('\n') {
                out.pop();
                if out.ends_with('\r') {
                    out.pop();
                }
            } else if final_newline && !out.ends_with('\n') {
                out.push_str(eol);
            }
        }
        out
    }
}

/// `text` without a leading BOM, and whether it had one.
#[inline]
pub fn split_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// A line-ending convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl Eol {
    /// The bytes of this ending.
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        }
    }
}

/// How a file writes its text: what an edit must keep when it rewrites lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextStyle {
    /// The file starts with a UTF-8 byte-order mark.
    pub bom: bool,
    /// The ending most of its lines use (LF on a tie).
    pub eol: Eol,
    /// The file ends with a line ending. An empty file counts as ending with
    /// one, since nothing says otherwise.
    pub final_newline: bool,
}

impl Default for TextStyle {
    /// The style of a new file: no BOM, LF, a final newline.
    fn default() -> Self {
        TextStyle { bom: false, eol: Eol::Lf, final_newline: true }
    }
}

impl TextStyle {
    /// The style of existing content.
    pub fn detect(content: &str) -> Self {
        let (bom, body) = split_bom(content);
        // Most files hold no `\r`: one memchr says so, and their lines
        // need not be counted.
        let bytes = body.as_bytes();
        let crlf_mostly = memchr::memchr(b'\r', bytes).is_some_and(|first| {
            let crlf = memchr::memmem::find_iter(&bytes[first..], b"\r\n").count();
            crlf * 2 > memchr::memchr_iter(b'\n', bytes).count()
        });
        TextStyle {
            bom,
            eol: if crlf_mostly { Eol::CrLf } else { Eol::Lf },
            final_newline: body.is_empty() || body.ends_with('\n'),
        }
    }

    /// `text`, written in any style, rewritten in this one: BOM added or
    /// removed, every line ending made this style's, the final newline added
    /// or removed. Empty text stays empty (but for the BOM).
    pub fn restyle(&self, text: &str) -> String {
        let (_, body) = split_bom(text);
        if self.eol != Eol::Lf || memchr::memchr(b'\r', body.as_bytes()).is_some() {
            return self.restyle_lines(body);
        }
        // Every line ends in `\n` already: only the BOM and the final newline change.
        let mut out = String::with_capacity(body.len() + 4);
        if self.bom {
            out.push(BOM);
        }
        out.push_str(body);
        if !self.final_newline {
            if out.ends_with('\n') {
                out.pop();
            }
        } else if !body.is_empty() && !body.ends_with('\n') {
            out.push('\n');
        }
        out
    }

    /// [`TextStyle::restyle`] of text without a BOM, line by line.
    fn restyle_lines(&self, body: &str) -> String {
        let mut out = String::with_capacity(body.len() + body.len() / 32 + 4);
        if self.bom {
            out.push(BOM);
        }
        let mut lines = lines_with_endings(body).peekable();
        while let Some(line) = lines.next() {
            out.push_str(strip_ending(line));
            if lines.peek().is_some() || self.final_newline {
                out.push_str(self.eol.as_str());
            }
        }
        out
    }

    /// Join lines (without endings) in this style.
    pub fn join<'a>(&self, lines: impl IntoIterator<Item = &'a str>) -> String {
        let mut out = String::new();
        if self.bom {
            out.push(BOM);
        }
        let mut lines = lines.into_iter().peekable();
        while let Some(line) = lines.next() {
            out.push_str(line);
            if lines.peek().is_some() || self.final_newline {
                out.push_str(self.eol.as_str());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_run_is_found_wherever_it_stands_and_only_a_whole_one() {
        for at in 0..40 {
            for (run, holds) in [("<<<<<", true), (">>>>>", true), ("<<<<", false), ("<<>><<", false), ("<<<<>", false)]
            {
                let text = "x".repeat(at) + run + "->";
                assert_eq!(holds_run(&text, [b'<', b'>'], 5), holds, "{text:?}");
                assert_eq!(holds_run(&text, [b'<', b'>'], 5), contains(&text, "<<<<<") || contains(&text, ">>>>>"));
            }
        }
    }

    #[test]
    fn lines_keep_their_endings() {
        let lines: Vec<_> = lines_with_endings("a\r\nb\nc").collect();
        assert_eq!(lines, ["a\r\n", "b\n", "c"]);
        assert_eq!(lines.iter().map(|l| strip_ending(l)).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(lines.iter().map(|l| ending_of(l)).collect::<Vec<_>>(), ["\r\n", "\n", ""]);
        assert_eq!(lines_with_endings("").count(), 0);
        for text in ["", "a", "a\n", "a\r\nb", "\n\n"] {
            assert_eq!(line_count(text), lines_with_endings(text).count(), "{text:?}");
        }
    }

    /// What [`splice_lines`] must give, built the slow, obvious way: every
    /// line as (text, ending), new lines with `eol`, then joined.
    fn splice_by_lines(
        content: &str,
        splices: &[(std::ops::Range<usize>, Vec<String>)],
        eol: &str,
        last: bool,
    ) -> String {
        let (bom, body) = split_bom(content);
        let lines: Vec<&str> = lines_with_endings(body).collect();
        let mut out: Vec<(String, String)> = Vec::new();
        let mut next = 0;
        for (range, new) in splices {
            let old = |l: &&str| (strip_ending(l).to_string(), ending_of(l).to_string());
            out.extend(lines[next..range.start.min(lines.len())].iter().map(old));
            out.extend(new.iter().map(|l| (l.clone(), eol.to_string())));
            next = range.end.min(lines.len()).max(next);
        }
        out.extend(lines[next..].iter().map(|l| (strip_ending(l).to_string(), ending_of(l).to_string())));
        let mut text = if bom { BOM.to_string() } else { String::new() };
        let count = out.len();
        for (i, (line, ending)) in out.into_iter().enumerate() {
            text += &line;
            if i + 1 < count || last {
                text += if ending.is_empty() { eol } else { &ending };
            }
        }
        text
    }

    #[test]
    fn splicing_after_a_last_line_without_ending_starts_a_new_line() {
        assert_eq!(splice_lines("a\nb", [(2..2, &["c"][..])], "\n", false), "a\nb\nc");
        assert_eq!(splice_lines("a\r\nb", [(1..2, &["B", "c"][..])], "\r\n", true), "a\r\nB\r\nc\r\n");
        assert_eq!(splice_lines("\u{feff}a\n", [(0..1, &[] as &[&str])], "\n", true), "\u{feff}");
    }

    proptest! {
        #[test]
        fn splicing_copies_untouched_lines_byte_for_byte(
            bom in any::<bool>(),
            lines in proptest::collection::vec(("[ab ]{0,3}", prop_oneof!["\n", "\r\n"]), 0..12),
            drop_last_ending in any::<bool>(),
            cuts in proptest::collection::vec((0usize..14, 0usize..3, proptest::collection::vec("[xy]{0,2}", 0..3)), 0..4),
            crlf in any::<bool>(),
            last in any::<bool>(),
        ) {
            let mut content: String = lines.iter().map(|(l, e)| format!("{l}{e}")).collect();
            if drop_last_ending && !lines.is_empty() {
                let ending = lines.last().unwrap().1.len();
                content.truncate(content.len() - ending);
            }
            if bom {
                content.insert(0, BOM);
            }
            let n = line_count(split_bom(&content).1);
            let mut splices: Vec<(std::ops::Range<usize>, Vec<String>)> = Vec::new();
            let mut at = 0;
            let mut cuts = cuts;
            cuts.sort_by_key(|c| c.0);
            for (start, len, new) in cuts {
                let start = start.min(n).max(at);
                let end = (start + len).min(n);
                splices.push((start..end, new));
                at = end;
            }
            let eol = if crlf { "\r\n" } else { "\n" };
            let fast = splice_lines(&content, splices.iter().map(|(r, l)| (r.clone(), l.as_slice())), eol, last);
            let expected = splice_by_lines(&content, &splices, eol, last);
            prop_assert_eq!(&fast, &expected);
            // A haystack of the content knows where its lines start.
            let hay = crate::matching::Haystack::of(&content);
            let known = hay.splice_lines(&content, splices.iter().map(|(r, l)| (r.clone(), l.as_slice())), eol, last);
            prop_assert_eq!(known, expected);
        }
    }

    #[test]
    fn finds_every_occurrence_and_counts_newlines() {
        assert_eq!(find_all("abcabcab", "abc").collect::<Vec<_>>(), vec![0, 3]);
        // Non-overlapping, as `str::match_indices`.
        assert_eq!(find_all("aaaa", "aa").collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(find_all("abc", "x").count(), 0);
        assert_eq!(newline_count("a\nb\r\nc"), 2);
        assert_eq!(newline_count(""), 0);
    }

    #[test]
    fn detects_styles() {
        assert_eq!(TextStyle::detect("a\r\nb\r\n"), TextStyle { bom: false, eol: Eol::CrLf, final_newline: true });
        assert_eq!(TextStyle::detect("\u{feff}a\nb"), TextStyle { bom: true, eol: Eol::Lf, final_newline: false });
        assert_eq!(TextStyle::detect(""), TextStyle::default());
        // Mixed endings: the style of most lines; a lone `\r` ends none.
        assert_eq!(TextStyle::detect("a\r\nb\r\nc\n").eol, Eol::CrLf);
        assert_eq!(TextStyle::detect("a\r\nb\nc\n").eol, Eol::Lf);
        assert_eq!(TextStyle::detect("a\rb\rc\n").eol, Eol::Lf);
    }

    #[test]
    fn restyles_model_text_into_the_file_style() {
        let crlf_no_final = TextStyle::detect("\u{feff}x\r\ny");
        assert_eq!(crlf_no_final.restyle("a\nb\n"), "\u{feff}a\r\nb");
        assert_eq!(TextStyle::default().restyle("\u{feff}a\r\nb"), "a\nb\n");
        assert_eq!(TextStyle::default().restyle(""), "");
    }

    proptest! {
        #[test]
        fn restyling_in_its_own_style_is_identity(body in "([a-z \t]{0,6}(\r\n|\n)){0,6}[a-z]{0,3}", bom: bool) {
            // Uniform-ending content: restyling into its own style changes nothing.
            let uniform = body.replace("\r\n", "\n");
            for eol in ["\n", "\r\n"] {
                let text = format!("{}{}", if bom { "\u{feff}" } else { "" }, uniform.replace('\n', eol));
                prop_assert_eq!(TextStyle::detect(&text).restyle(&text), text.clone());
            }
        }

        #[test]
        fn restyling_needs_the_line_walk_only_for_carriage_returns(
            text in "\u{feff}?[a\r\n]{0,12}", bom: bool, crlf: bool, final_newline: bool,
        ) {
            let style = TextStyle { bom, eol: if crlf { Eol::CrLf } else { Eol::Lf }, final_newline };
            prop_assert_eq!(style.restyle(&text), style.restyle_lines(split_bom(&text).1));
        }

        #[test]
        fn same_text_is_equality(a in "[ab]{0,40}", flip in 0usize..44) {
            // Equal texts, and texts one byte apart anywhere in a word or
            // the tail; lengths that differ.
            let mut b = a.clone().into_bytes();
            if let Some(byte) = b.get_mut(flip) {
                *byte = if *byte == b'a' { b'b' } else { b'a' };
            }
            let b = String::from_utf8(b).expect("ascii");
            prop_assert_eq!(same_text(&a, &b), a == b);
            prop_assert!(same_text(&a, &a.clone()));
            let longer = format!("{a}a");
            prop_assert!(!same_text(&a, &longer));
        }

        #[test]
        fn strip_ending_is_strip_suffix_by_chars(text in "([a\r\u{e9}]{0,70}\n){0,4}[a\r\u{e9}]{0,70}") {
            // `\r` anywhere, a last line with no `\n`, and two-byte chars.
            for line in lines_with_endings(&text) {
                let by_chars = line.strip_suffix('\n').unwrap_or(line);
                prop_assert_eq!(strip_ending(line), by_chars.strip_suffix('\r').unwrap_or(by_chars));
            }
        }

        #[test]
        fn trim_is_str_trim(text in "( {0,20}[ \t\n\x0b\x0c\ra\u{a0}\u{2003}é]{0,8}){0,3}") {
            prop_assert_eq!(trim(&text), text.trim());
            prop_assert_eq!(trim_start(&text), text.trim_start());
            prop_assert_eq!(trim_end(&text), text.trim_end());
        }

        #[test]
        fn lines_holding_are_the_lines_that_hold_the_needle(text in "[ab\r\n]{0,40}", needle in "[ab]{0,3}") {
            let mut offset = 0;
            let one_by_one: Vec<(usize, &str)> = lines_with_endings(&text)
                .map(|line| { offset += line.len(); (offset - line.len(), line) })
                .filter(|(_, line)| line.contains(needle.as_str()))
                .collect();
            prop_assert_eq!(lines_holding(&text, &needle).collect::<Vec<_>>(), one_by_one);
        }

        #[test]
        fn a_line_span_names_one_line_or_a_range(first in 0u32..99, len in 0u32..3) {
            let expected = if len == 0 { format!("line {first}") } else { format!("lines {first}-{}", first + len) };
            prop_assert_eq!(LineSpan(first, first + len).to_string(), expected);
        }

        #[test]
        fn lines_concatenate_back(text in "[a-z\r\n]{0,40}") {
            prop_assert_eq!(lines_with_endings(&text).collect::<String>(), text);
        }

        /// Read in blocks, the lines are still `split_inclusive`'s: lines
        /// shorter and longer than a block, ends on and across block edges.
        #[test]
        fn lines_are_split_inclusive(text in "([a-zé\r]{0,70}\n{0,3}){0,9}") {
            let expected: Vec<&str> = text.split_inclusive('\n').collect();
            prop_assert_eq!(lines_with_endings(&text).collect::<Vec<_>>(), expected);
        }
    }
}
