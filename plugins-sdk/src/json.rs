//! JSON values in a reply, as harnesses pass tool calls and as models write
//! JSON edits: the whole reply (one value, an array, JSON Lines, values in a
//! row), or, in prose, the values of fenced blocks and bare `{` objects that
//! start a line. Each value comes back as its slice of the reply, so callers
//! can deserialize it (borrowing) and point spans at it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::ReplyText;
use crate::fence::{fenced_blocks, is_shell_info};

mod node;
pub use node::{ArrayItems, Kind, Node, NodeError, space_len};

/// How many bare (unfenced) `{` lines of prose are tried as JSON: each try
/// may read to the end of the reply, so the cost stays linear.
const MAX_BARE_ATTEMPTS: usize = 64;

/// A JSON value found in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonText<'a> {
    /// The value's text, a slice of the reply.
    pub text: &'a str,
    /// Byte offset of `text` in the reply.
    pub start: usize,
}

/// A JSON string as the reply wrote it, quotes and escapes included,
/// unescaped when read. A format that keeps thousands of a reply's JSON
/// strings (tool calls' `old_string`s, JSON edits' new lines) then holds
/// slices of the reply ([`ReplyText`]) instead of unescaped copies, which
/// for a 10 MB reply were megabytes of the plugin's memory for the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonString(ReplyText);

impl JsonString {
    /// `raw`, the text of a JSON value (a [`serde_json::value::RawValue`]'s),
    /// when the value is a string.
    pub fn from_raw(raw: &str) -> Option<Self> {
        raw.starts_with('"').then(|| JsonString(ReplyText::new(raw)))
    }

    /// How many bytes the string takes as written, quotes included: at
    /// least as many as it has unescaped (room to make for its text).
    pub fn written_len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty (written `""`: an escape is text).
    pub fn is_empty(&self) -> bool {
        self.written_len() == 2
    }

    /// The string, unescaped: borrowed when it has no escapes. `Err` when
    /// the text is no JSON string (a payload altered on its way back).
    pub fn decoded(&self) -> Result<Cow<'_, str>, String> {
        unescaped(&self.0)
    }

    /// How many lines the string has unescaped ([`crate::text::line_count`]),
    /// counted in the text as written: no unescaped copy is made. A line
    /// ends at each `\n` escape (or `\u000a`); JSON has no raw newline in
    /// a string.
    pub fn line_count(&self) -> usize {
        let raw = self.0.as_bytes();
        let body = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
        let (mut newlines, mut ends_with_newline, mut at) = (0, false, 0);
        while let Some(found) = body.get(at..).and_then(|rest| memchr::memchr(b'\\', rest)) {
            let escape = at + found;
            // Whether the escape is a newline, and how long it is.
            let (newline, width) = match body.get(escape + 1) {
                Some(b'n') => (true, 2),
                Some(b'u') => {
                    (body.get(escape + 2..escape + 6).is_some_and(|hex| hex.eq_ignore_ascii_case(b"000a")), 6)
                }
                _ => (false, 2),
            };
            newlines += usize::from(newline);
            at = escape + width;
            ends_with_newline = newline && at >= body.len();
        }
        if at < body.len() {
            ends_with_newline = false;
        }
        newlines + usize::from(!body.is_empty() && !ends_with_newline)
    }

    /// The lines of the string unescaped, without their endings (as
    /// [`crate::text::lines_with_endings`] and `strip_ending` give them),
    /// read in place when its only escapes are `\n`: the pieces of the text
    /// as written between them. `None` for any other escape. Most new texts
    /// a model writes are such strings, and a reply of thousands was
    /// unescaped into a copy of each only to look at its lines.
    pub fn plain_lines(&self) -> Option<PlainLines<'_>> {
        let raw: &str = &self.0;
        let body = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
        let bytes = body.as_bytes();
        let (mut at, mut escapes) = (0, 0);
        while let Some(found) = memchr::memchr(b'\\', &bytes[at..]) {
            if bytes.get(at + found + 1) != Some(&b'n') {
                return None;
            }
            at += found + 2;
            escapes += 1;
        }
        // Every `\` now starts a `\n`: each line ends at one, and the next
        // starts past its `n`. Found by `memchr` (SIMD in a component too),
        // not `split('\\')`, whose search reads four bytes at a time there.
        let text = body.strip_suffix("\\n");
        let left = if body.is_empty() { 0 } else { escapes + 1 - usize::from(text.is_some()) };
        let text = text.unwrap_or(body);
        Some(PlainLines { text, ends: memchr::memchr_iter(b'\\', text.as_bytes()), start: 0, left })
    }
}

/// The lines of a [`JsonString`] read in place ([`JsonString::plain_lines`]),
/// counted as the escapes were checked: a caller sizes what it builds of
/// them without reading the text again.
#[derive(Debug, Clone)]
pub struct PlainLines<'a> {
    text: &'a str,
    /// The `\` of each `\n` in `text`.
    ends: memchr::Memchr<'a>,
    /// Where the next line starts.
    start: usize,
    /// How many lines are still to come.
    left: usize,
}

impl<'a> Iterator for PlainLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let end = self.ends.next().unwrap_or(self.text.len());
        let line = &self.text[self.start..end];
        self.start = end + 2;
        Some(line)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for PlainLines<'_> {}

/// Whether key `k` is `name` once without case, `_` or `-` (`old_string`,
/// `oldString` and `old-string` are `oldstring`), compared without building
/// that form: a reply of thousands of edits names a few keys in each. For
/// formats that take an object's keys as models spell them.
#[inline]
pub fn key_is(k: &str, name: &str) -> bool {
    // Byte by byte for the ASCII keys calls have (the same answer: an ASCII
    // letter lowercases to one ASCII letter); a key shorter than the name
    // cannot be it.
    if k.is_ascii() {
        let mut normal = k.bytes().filter(|b| *b != b'_' && *b != b'-').map(|b| b.to_ascii_lowercase());
        return k.len() >= name.len() && name.bytes().all(|c| normal.next() == Some(c)) && normal.next().is_none();
    }
    let mut normal = k.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase);
    name.chars().all(|c| normal.next() == Some(c)) && normal.next().is_none()
}

/// The JSON string `raw` (quotes included) unescaped: borrowed when it has
/// no escapes. `Err` when `raw` is no JSON string, or one whose `\\u`
/// escapes make no characters (a lone surrogate), as serde_json reads it.
/// The runs between escapes are copied whole into a string sized once:
/// serde's reader grew its buffer as it went, for each of a large reply's
/// thousands of new texts.
pub fn unescaped(raw: &str) -> Result<Cow<'_, str>, String> {
    let unreadable = |what: &str| format!("a JSON string is not one: {what}");
    let body = match raw.as_bytes() {
        [b'"', .., b'"'] if raw.len() >= 2 => &raw[1..raw.len() - 1],
        _ => return Err(unreadable("it is not in quotes")),
    };
    let bytes = body.as_bytes();
    let mut out: Option<String> = None;
    let (mut at, mut copied) = (0, 0);
    loop {
        at += plain_run(&bytes[at..]);
        match bytes.get(at) {
            None => break,
            Some(b'\\') => {
                let out = out.get_or_insert_with(|| String::with_capacity(body.len()));
                out.push_str(&body[copied..at]);
                let (c, width) = escape(&bytes[at..]).map_err(unreadable)?;
                out.push(c);
                at += width;
                copied = at;
            }
            Some(b'"') => return Err(unreadable("a quote inside it is not escaped")),
            Some(_) => return Err(unreadable("control character (\\u0000-\\u001F) found while parsing a string")),
        }
    }
    Ok(match out {
        None => Cow::Borrowed(body),
        Some(mut out) => {
            out.push_str(&body[copied..]);
            Cow::Owned(out)
        }
    })
}

/// The character of the escape `bytes` starts with (at its `\\`) and how
/// many bytes it takes: a `\\u` escape of a surrogate must be the first of a
/// pair.
fn escape(bytes: &[u8]) -> Result<(char, usize), &'static str> {
    let hex = |at: usize| {
        let digits = bytes.get(at..at + 4).ok_or("EOF while parsing a string")?;
        digits.iter().try_fold(0, |code, &b| Some(code * 16 + char::from(b).to_digit(16)?)).ok_or("invalid escape")
    };
    let simple = match bytes.get(1) {
        None => return Err("EOF while parsing a string"),
        Some(b'u') => None,
        Some(b'"') => Some('"'),
        Some(b'\\') => Some('\\'),
        Some(b'/') => Some('/'),
        Some(b'b') => Some('\u{8}'),
        Some(b'f') => Some('\u{c}'),
        Some(b'n') => Some('\n'),
        Some(b'r') => Some('\r'),
        Some(b't') => Some('\t'),
        Some(_) => return Err("invalid escape"),
    };
    if let Some(c) = simple {
        return Ok((c, 2));
    }
    let first = hex(2)?;
    match first {
        0xD800..=0xDBFF => {
            if bytes.get(6..8) != Some(b"\\u") {
                return Err("lone leading surrogate in hex escape");
            }
            let second = hex(8)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err("lone leading surrogate in hex escape");
            }
            let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            Ok((char::from_u32(code).expect("a surrogate pair makes a character"), 12))
        }
        0xDC00..=0xDFFF => Err("lone trailing surrogate in hex escape"),
        _ => Ok((char::from_u32(first).expect("outside the surrogates"), 6)),
    }
}

/// How many bytes at the start of `bytes` a JSON string holds as they are:
/// no quote, backslash or control character. Sixteen bytes at a time by
/// SIMD compares where the target has them (wasm `simd128` included: a
/// tool call's strings are most of a 10 MB reply), then eight at a time:
/// each test marks a byte's high bit, and the lowest mark is always a true
/// one (a false one only follows a true one, through a borrow), so the
/// first such byte is where the marks start.
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // High bit of each byte that is zero, or below `n` (n <= 0x80).
    let below = |word: u64, n: u64| word.wrapping_sub(ONES * n) & !word;
    let mut at = 0;
    #[cfg(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")))]
    while let Some(chunk) = bytes.get(at..at + 16) {
        let marks = specials_in_16(chunk.try_into().expect("sixteen bytes"));
        if marks != 0 {
            return at + marks.trailing_zeros() as usize;
        }
        at += 16;
    }
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let marks = (below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1)
            | below(word, 0x20))
            & HIGHS;
        if marks != 0 {
            return at + (marks.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..].iter().take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20).count()
}

/// The quotes, backslashes and control characters of 16 bytes, bit `i` for
/// byte `i`.
#[cfg(target_arch = "x86_64")]
fn specials_in_16(chunk: &[u8; 16]) -> u16 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of `chunk`.
    unsafe {
        let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        // Unsigned `byte <= 0x1f`: the byte is its own minimum with 0x1f.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u16
    }
}

/// The quotes, backslashes and control characters of 16 bytes, bit `i` for
/// byte `i`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn specials_in_16(chunk: &[u8; 16]) -> u16 {
    use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128_load, v128_or};
    // SAFETY: the load reads the 16 bytes of `chunk`; wasm loads need no alignment.
    let bytes = unsafe { v128_load(chunk.as_ptr().cast()) };
    let quote = u8x16_eq(bytes, u8x16_splat(b'"'));
    let backslash = u8x16_eq(bytes, u8x16_splat(b'\\'));
    let control = u8x16_lt(bytes, u8x16_splat(0x20));
    u8x16_bitmask(v128_or(v128_or(quote, backslash), control))
}

/// JSON that was meant as such (the reply is JSON, or a ```json block) but
/// does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonProblem {
    /// Byte offset of the error in the reply.
    pub at: usize,
    /// Byte offset where the unreadable text ends (its block's end).
    pub end: usize,
    /// What is wrong; `at` says where.
    pub message: String,
    /// The reply ends inside the value (no closing fence came after it):
    /// a reply cut off mid-edit rather than JSON written wrong.
    pub cut_off: bool,
}

/// Every JSON value of a reply, and what could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsonFound<'a> {
    /// The values, in reply order.
    pub values: Vec<JsonText<'a>>,
    /// JSON meant as such that does not parse.
    pub problems: Vec<JsonProblem>,
}

/// The JSON values of `reply`. A reply whose first character opens an
/// object or array is read as JSON through and through (one value, an
/// array, JSON Lines); otherwise each fenced block holding JSON (shell
/// blocks aside) and each bare `{` that starts a line outside the blocks.
/// Problems are reported for the JSON reply and for blocks marked `json`
/// (or unmarked); a bare `{` line that is not JSON is prose.
pub fn json_values(reply: &str) -> JsonFound<'_> {
    let mut found = JsonFound::default();
    if opens_json(reply) {
        read_stream(reply, 0..reply.len(), Meant::Yes { ends_reply: true }, &mut found);
        return found;
    }
    let mut blocks = Vec::new();
    for fence in fenced_blocks(reply) {
        blocks.push(fence.start..fence.end);
        if is_shell_info(fence.info) || !opens_json(fence.body) {
            continue;
        }
        let lang = fence.info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
        let meant = match lang.as_str() {
            "" | "json" | "jsonl" | "jsonc" | "json5" | "ndjson" => Meant::Yes { ends_reply: !fence.closed },
            _ => Meant::No,
        };
        read_stream(reply, fence.body_start..fence.body_end, meant, &mut found);
    }
    let mut attempts = 0;
    let mut line_start = 0;
    while line_start < reply.len() && attempts < MAX_BARE_ATTEMPTS {
        let line_end =
            memchr::memchr(b'\n', &reply.as_bytes()[line_start..]).map_or(reply.len(), |i| line_start + i + 1);
        let at = line_start + (reply[line_start..line_end].len() - reply[line_start..line_end].trim_start().len());
        let taken = |ranges: &[std::ops::Range<usize>]| ranges.iter().any(|r| r.contains(&at));
        let mut next = line_end;
        if reply[at..].starts_with('{') && !taken(&blocks) {
            attempts += 1;
            if let Ok(length) = Node::skip_prefix(&reply[at..]) {
                let end = at + length;
                found.values.push(JsonText { text: &reply[at..end], start: at });
                next = end.max(line_end);
            }
        }
        line_start = next;
    }
    found.values.sort_by_key(|v| v.start);
    found
}

/// Whether [`json_values`] reads `reply` as JSON through and through: its
/// first character (after white space) opens an object or an array.
pub fn is_json_reply(reply: &str) -> bool {
    opens_json(reply)
}

/// What [`json_values`] finds in a JSON reply ([`is_json_reply`]) from byte
/// `start` on, where one of its values (or white space before one) starts:
/// the values from there, and the problem that ends them. For a reader that
/// reads such a reply's values in one pass and, at the first it cannot
/// read, goes on as [`json_values`] would have from there.
pub fn json_values_from(reply: &str, start: usize) -> JsonFound<'_> {
    let mut found = JsonFound::default();
    read_stream(reply, start..reply.len(), Meant::Yes { ends_reply: true }, &mut found);
    found
}

/// Whether `text` starts (after whitespace) with `{` or `[`.
fn opens_json(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
}

/// Whether text was meant as JSON (its problems are reported), and whether
/// the reply ends in it (running out of text there is a cut).
#[derive(Clone, Copy)]
enum Meant {
    Yes { ends_reply: bool },
    No,
}

/// Read the values of `reply[range]` in a row; the first error ends it.
/// Each is read once to find where it ends; its reader reads it again.
fn read_stream<'a>(reply: &'a str, range: std::ops::Range<usize>, meant: Meant, found: &mut JsonFound<'a>) {
    let (start, end) = (range.start, range.end);
    let body = &reply[range];
    let mut at = 0;
    loop {
        at += space_len(&body[at..]);
        if at == body.len() {
            break;
        }
        match Node::skip_prefix(&body[at..]) {
            Ok(length) => {
                found.values.push(JsonText { text: &body[at..at + length], start: start + at });
                at += length;
            }
            Err(error) => {
                if let Meant::Yes { ends_reply } = meant {
                    let message = error.message.to_string();
                    found.problems.push(JsonProblem {
                        at: start + at + error.at,
                        end,
                        message,
                        cut_off: ends_reply && error.is_eof(),
                    });
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character lowercased on its own, `_` and `-` left out.
    fn by_chars(k: &str, name: &str) -> bool {
        k.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).eq(name.chars())
    }

    proptest::proptest! {
        #[test]
        fn keys_match_as_their_lowercased_characters_do(k in "[a-zA-Z_\\-İ]{0,12}", name in "[a-z]{0,10}") {
            proptest::prop_assert_eq!(key_is(&k, &name), by_chars(&k, &name));
            for spelled in [name.to_uppercase(), format!("{name}_"), format!("-{name}x")] {
                proptest::prop_assert_eq!(key_is(&spelled, &name), by_chars(&spelled, &name), "{}", spelled);
            }
        }
    }

    fn texts<'a>(found: &JsonFound<'a>) -> Vec<&'a str> {
        found.values.iter().map(|v| v.text).collect()
    }

    #[test]
    fn a_json_reply_is_one_value_an_array_or_json_lines() {
        assert_eq!(texts(&json_values(" {\"a\": 1}\n")), ["{\"a\": 1}"]);
        assert_eq!(texts(&json_values("[1, {\"b\": 2}]")), ["[1, {\"b\": 2}]"]);
        let lines = "{\"a\": 1}\n{\"b\": 2}\n";
        let found = json_values(lines);
        assert_eq!(texts(&found), ["{\"a\": 1}", "{\"b\": 2}"]);
        assert_eq!(found.values[1].start, 9);
    }

    #[test]
    fn a_json_reply_read_from_any_of_its_values_on_is_what_the_whole_read_finds_there() {
        let replies = [
            "{\"a\": 1}\n[2, {\"b\": 3}]\n\"s\" 4 {\"c\": {\"d\\u00e9\": []}}\n",
            "[{\"a\": 1}]\n{\"b\": 2}\n{\"c\": [1, \n",
            "{\"a\": 1} {\"b\" 2} {\"c\": 3}",
        ];
        for reply in replies {
            assert!(is_json_reply(reply));
            let whole = json_values(reply);
            for (i, value) in whole.values.iter().enumerate() {
                let from = json_values_from(reply, value.start);
                assert_eq!(from.values, whole.values[i..], "{reply:?} from {}", value.start);
                assert_eq!(from.problems, whole.problems, "{reply:?} from {}", value.start);
            }
            let last_end = whole.values.last().map_or(0, |v| v.start + v.text.len());
            assert_eq!(json_values_from(reply, last_end).problems, whole.problems, "{reply:?}");
        }
        assert!(!is_json_reply("Here: {\"a\": 1}"));
    }

    #[test]
    fn prose_gives_fenced_and_bare_values() {
        let reply =
            "Intro.\n```json\n{\"a\": 1}\n```\n```bash\n{\"no\": 1}\n```\nThen:\n  {\"b\": [2]} trailing\n{not json\n";
        let found = json_values(reply);
        assert_eq!(texts(&found), ["{\"a\": 1}", "{\"b\": [2]}"]);
        assert_eq!(&reply[found.values[1].start..][..3], "{\"b");
        assert!(found.problems.is_empty(), "a bare `{{` line that is not JSON is prose");
    }

    #[test]
    fn broken_json_meant_as_json_is_a_problem_with_its_position() {
        let reply = "Here:\n```json\n{\"a\": 1,\n \"b\" 2}\n```\n```python\n{'x': 1}\n```\n";
        let found = json_values(reply);
        assert!(found.values.is_empty());
        assert_eq!(found.problems.len(), 1, "a python block is not meant as JSON");
        let problem = &found.problems[0];
        assert!(problem.message.starts_with("expected `:`"), "{}", problem.message);
        assert_eq!(&reply[problem.at..problem.at + 1], "2");
        let found = json_values("{\"a\": 1}\n{oops}\n");
        assert_eq!(texts(&found), ["{\"a\": 1}"]);
        assert_eq!(found.problems.len(), 1);
        assert!(!found.problems[0].cut_off);
    }

    #[test]
    fn json_the_reply_ends_in_is_cut_off_and_a_closed_fence_is_not() {
        for reply in ["{\"a\": 1}\n{\"b\": \"x", "Here:\n```json\n{\"b\": [\n", "[{\"a\": 1},\n"] {
            let found = json_values(reply);
            assert!(found.problems.len() == 1 && found.problems[0].cut_off, "{reply:?}: {found:?}");
        }
        let found = json_values("Here:\n```json\n{\"b\": [\n```\n");
        assert!(found.problems.len() == 1 && !found.problems[0].cut_off, "{found:?}");
    }

    #[test]
    fn a_json_string_is_kept_as_written_and_unescaped_when_read() {
        let plain = JsonString::from_raw(r#""plain""#).unwrap();
        assert!(matches!(plain.decoded(), Ok(Cow::Borrowed("plain"))));
        let escaped = JsonString::from_raw(r#""a\nb \"q\" \u00e9""#).unwrap();
        assert_eq!(escaped.decoded().unwrap(), "a\nb \"q\" \u{e9}");
        assert_eq!(JsonString::from_raw("12"), None);
        assert_eq!(JsonString::from_raw("[\"x\"]"), None);
        // A payload's JSON round trip keeps the text as written.
        let back: JsonString = serde_json::from_str(&serde_json::to_string(&escaped).unwrap()).unwrap();
        assert_eq!(back.decoded().unwrap(), escaped.decoded().unwrap());
        // An altered payload is an error, not a panic.
        let altered: JsonString = serde_json::from_str(r#""\"unterminated""#).unwrap();
        assert!(altered.decoded().is_err());
    }

    #[test]
    fn a_json_strings_lines_are_counted_as_written() {
        let cases = [
            r#""""#,
            r#""a""#,
            r#""a\n""#,
            r#""a\nb""#,
            r#""\n\n""#,
            r#""a\\n""#,
            r#""a\\\n""#,
            r#""x\u000a""#,
            r#""x\u000Ay""#,
            r#""x\u0009\t\r\n\"""#,
            r#""\ud83d\ude00\n""#,
        ];
        for raw in cases {
            let json = JsonString::from_raw(raw).unwrap();
            let want = crate::text::line_count(&json.decoded().unwrap());
            assert_eq!(json.line_count(), want, "{raw}");
        }
        // Cut short (an altered payload): counted, not a panic.
        assert_eq!(JsonString::from_raw(r#""ab\u00""#).unwrap().line_count(), 1);
    }

    #[test]
    fn surrogates_unescape_in_pairs_only_as_serde_json_reads_them() {
        let cases = [
            r#""\ud83d\ude00""#,
            r#""\uD800\uDC00""#,
            r#""\udbff\udfff""#,
            r#""\ud800""#,
            r#""\ud800x""#,
            r#""\ud800\n""#,
            r#""\ud800\u0041""#,
            r#""\ud800\ud800""#,
            r#""\udc00""#,
            r#""\udfff""#,
            r#""\ue000\uffff\u0000""#,
            r#""\u00""#,
            r#""\u00gg""#,
            r#""\"#,
        ];
        for raw in cases {
            let theirs = serde_json::from_str::<String>(raw);
            assert_eq!(unescaped(raw).as_deref().ok(), theirs.as_deref().ok(), "{raw}");
        }
    }

    #[test]
    fn a_plain_run_ends_at_a_special_byte_wherever_it_stands() {
        for len in 0..70 {
            for special in ["\"", "\\", "\u{0}", "\u{1f}", ""] {
                let text = "é".repeat(len / 2) + &"a".repeat(len % 2) + special + "aaaaaaaaaaaaaaaaaaaa\"";
                let want = text.bytes().take_while(|&b| b != b'"' && b != b'\\' && b >= 0x20).count();
                assert_eq!(plain_run(text.as_bytes()), want, "{text:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn a_plain_run_stops_at_the_first_quote_backslash_or_control(text in "[a\"\\\\\u{1}\u{1f}\u{7f}\u{e9}\u{1F600} ]{0,80}") {
            let want = text.bytes().take_while(|&b| b != b'"' && b != b'\\' && b >= 0x20).count();
            proptest::prop_assert_eq!(plain_run(text.as_bytes()), want);
        }

        #[test]
        fn a_string_unescapes_as_serde_json_reads_it(text in "[a\\\\\"\n\t\u{1}\u{e9}\u{1F600} ]{0,16}") {
            let raw = serde_json::to_string(&text).unwrap();
            proptest::prop_assert_eq!(unescaped(&raw).unwrap(), text.as_str());
        }

        #[test]
        fn a_text_unescapes_exactly_when_serde_json_reads_it(raw in "\"([a\"/bfnrtu\\\\dD089Ac\u{1}\u{e9}]{0,14})\"?") {
            let theirs = serde_json::from_str::<String>(&raw);
            let ours = unescaped(&raw);
            proptest::prop_assert_eq!(ours.as_deref().ok(), theirs.as_deref().ok(), "{:?}", raw);
        }

        #[test]
        fn lines_read_in_place_are_those_of_the_unescaped_text(text in "[a\\\\\n\r\"\u{e9} ]{0,30}", plain in "[ab\n\u{e9} ]{0,30}") {
            // Read in place exactly when `\n` is the only escape, and then
            // the lines of the unescaped text.
            for text in [text, plain] {
                let raw = serde_json::to_string(&text).unwrap();
                let json = JsonString::from_raw(&raw).unwrap();
                let want: Vec<&str> = crate::text::lines_with_endings(&text).map(crate::text::strip_ending).collect();
                let only_newlines = !raw[1..raw.len() - 1].replace("\\n", "").contains('\\');
                match json.plain_lines() {
                    Some(lines) => {
                        proptest::prop_assert!(only_newlines, "{:?}", raw);
                        proptest::prop_assert_eq!(lines.len(), want.len(), "counted: {:?}", raw);
                        proptest::prop_assert_eq!(lines.collect::<Vec<_>>(), want, "{:?}", raw);
                    }
                    None => proptest::prop_assert!(!only_newlines, "{:?}", raw),
                }
            }
        }

        #[test]
        fn the_lines_counted_as_written_are_those_of_the_unescaped_text(text in "[a\\\\\\n\r\t\"\u{e9}\u{1F600} ]{0,40}") {
            let raw = serde_json::to_string(&text).unwrap();
            let json = JsonString::from_raw(&raw).unwrap();
            proptest::prop_assert_eq!(json.line_count(), crate::text::line_count(&text));
        }
    }
}
