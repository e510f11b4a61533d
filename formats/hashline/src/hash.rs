//! Line hashes and the `LINE:HASH|content` view.
//!
//! A line's hash is xxHash32 (seed 0) of its UTF-8 text with the line ending
//! and every whitespace character removed, as oh-my-pi's published hashline
//! tools compute it. Shown with `n` hex digits it is the hash modulo `16^n`:
//! the last `n` digits of the full 8-digit value, so the default 2 digits are
//! the hash modulo 256.

use crate::NewLines;
use xxhash_rust::xxh32::xxh32;

/// The shortest and longest hash a view may show.
pub const MIN_HASH_LEN: usize = 2;
pub const MAX_HASH_LEN: usize = 8;

/// Whitespace as JavaScript's `\s` defines it (what the published format
/// strips): Unicode `White_Space` without U+0085, plus the BOM U+FEFF.
pub fn is_hash_whitespace(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// [`is_hash_whitespace`] for an ASCII byte: `\v` and `\f` count, as in
/// JavaScript (`u8::is_ascii_whitespace` leaves out `\v`).
fn is_ascii_hash_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The full 32-bit hash of a line (its ending, if any, is ignored).
pub fn line_hash(line: &str) -> u32 {
    let line = line.strip_suffix('\n').unwrap_or(line);
    // Most lines are short ASCII: squeezed on the stack, byte by byte, with
    // no walk over chars and no allocation.
    let mut squeezed = [0u8; 256];
    if line.len() <= squeezed.len() && line.is_ascii() {
        let mut len = 0;
        for &byte in line.as_bytes() {
            squeezed[len] = byte;
            len += usize::from(!is_ascii_hash_whitespace(byte));
        }
        return xxh32(&squeezed[..len], 0);
    }
    if !line.contains(is_hash_whitespace) {
        return xxh32(line.as_bytes(), 0);
    }
    let squeezed: String = line.chars().filter(|&c| !is_hash_whitespace(c)).collect();
    xxh32(squeezed.as_bytes(), 0)
}

/// `hash` shown with `len` lowercase hex digits (`len` is clamped to 1-8).
pub fn hex(hash: u32, len: usize) -> String {
    let len = len.clamp(1, MAX_HASH_LEN);
    let full = format!("{hash:08x}");
    full[MAX_HASH_LEN - len..].to_string()
}

/// Whether the hex digits `shown` (lowercase, 1-8 of them) are the tail of
/// `hash`.
pub fn matches(hash: u32, shown: &str) -> bool {
    // The digits read as a number, not the hash written out to compare:
    // every anchor of a reply is checked, some several times.
    let lowercase_hex = shown.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let tail = |len: usize| if len == MAX_HASH_LEN { hash } else { hash & ((1 << (4 * len)) - 1) };
    !shown.is_empty()
        && shown.len() <= MAX_HASH_LEN
        && lowercase_hex
        && u32::from_str_radix(shown, 16).is_ok_and(|value| value == tail(shown.len()))
}

/// One line of the view: `12:a3|text`.
pub fn view_line(number: u32, line: &str, len: usize) -> String {
    format!("{number}:{}|{line}", hex(line_hash(line), len))
}

/// Length of a `N:hh|` prefix (optionally after `>>>` and spaces) that a
/// model copied from a view, if `line` starts with one.
pub fn copied_prefix_len(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    let skip_spaces = |i: &mut usize| {
        while *i < bytes.len() && (bytes[*i] == b' ' || bytes[*i] == b'\t') {
            *i += 1;
        }
    };
    skip_spaces(&mut i);
    if bytes[i..].starts_with(b">>>") {
        i += 3;
        skip_spaces(&mut i);
    }
    let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    i += digits;
    skip_spaces(&mut i);
    if bytes.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    skip_spaces(&mut i);
    let hexes = bytes[i..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if !(MIN_HASH_LEN..=MAX_HASH_LEN).contains(&hexes) {
        return None;
    }
    i += hexes;
    (bytes.get(i) == Some(&b'|')).then_some(i + 1)
}

/// Lines without the `N:hh|` prefixes a model copied from a view, but only
/// when most lines (more than half) carry one; otherwise `None`.
pub fn strip_copied_prefixes<'a>(lines: impl Iterator<Item = &'a str> + Clone) -> Option<NewLines> {
    let (carrying, count) = lines
        .clone()
        .fold((0, 0), |(carrying, count), l| (carrying + usize::from(copied_prefix_len(l).is_some()), count + 1));
    if carrying == 0 || carrying * 2 <= count {
        return None;
    }
    Some(lines.map(|l| copied_prefix_len(l).map_or(l, |n| &l[n..])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Matching reads the digits as `hex` writes them: lowercase, the
        /// hash's last digits, leading zeros and all; nothing else matches.
        #[test]
        fn matching_is_comparing_with_the_hash_written_out(
            hash in proptest::prelude::any::<u32>(),
            shown in "[0-9a-fA-F+ -]{0,9}",
            len in 1usize..=8,
        ) {
            proptest::prop_assert_eq!(matches(hash, &shown), !shown.is_empty() && shown.len() <= 8 && hex(hash, shown.len()) == shown);
            let written = hex(hash, len);
            proptest::prop_assert!(matches(hash, &written), "{} {}", hash, written);
            // The same digits in capitals, or behind a sign, are not the hash.
            let capitals = written.to_uppercase();
            proptest::prop_assert_eq!(matches(hash, &capitals), capitals == written);
            let signed = format!("+{}", &written[1..]);
            proptest::prop_assert!(!matches(hash, &signed) || written.starts_with('+'));
        }
    }

    /// The hash as the format defines it: every whitespace char removed.
    fn reference(line: &str) -> u32 {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let squeezed: String = line.chars().filter(|&c| !is_hash_whitespace(c)).collect();
        xxh32(squeezed.as_bytes(), 0)
    }

    #[test]
    fn the_ascii_fast_path_hashes_as_the_definition_does() {
        let long = format!("    {}  end", "x = 1; ".repeat(60));
        for line in
            ["", "    return x\n", "\tif a:\r", "a\x0bb\x0cc", "  \u{a0}nbsp", "\u{feff}bom", "  …  ", long.as_str()]
        {
            assert_eq!(line_hash(line), reference(line), "{line:?}");
        }
        for byte in 0u8..128 {
            assert_eq!(is_ascii_hash_whitespace(byte), is_hash_whitespace(byte as char), "{byte:#x}");
        }
    }
}
