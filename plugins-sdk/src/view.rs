//! Views of a file for a model to read: chosen line ranges, merged, with `...`
//! between the gaps.

use crate::text::{line_count, split_bom};
use crate::types::LineRange;

/// The version tag a view prints (`@3fa9c1`): 6 hex digits of the FNV-1a
/// hash of the whole content. An edit that quotes it proves which version
/// it was written against; the host keeps that version (`read` records it)
/// so a stale edit can be rebased onto the file as it is now.
pub fn version_tag(content: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in content.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:06x}", hash >> 40)
}

/// Whether `tag` (as an edit quoted it, `@` and case aside; at least 4
/// digits) is the version tag of `content`.
pub fn tag_matches(tag: &str, content: &str) -> bool {
    let tag = tag.trim().trim_start_matches('@').to_ascii_lowercase();
    tag.len() >= 4 && version_tag(content).starts_with(&tag)
}

/// The first line of a view: `PATH @TAG (N lines)`.
pub fn view_header(path: &str, content: &str) -> String {
    let (_, body) = split_bom(content);
    let count = line_count(body);
    let noun = if count == 1 { "line" } else { "lines" };
    format!("{path} @{} ({count} {noun})\n", version_tag(content))
}

/// Clamp `ranges` to a file of `line_count` lines, sort them and merge those
/// that overlap or touch. An empty list means the whole file.
pub fn merge_ranges(ranges: &[LineRange], line_count: u32) -> Vec<LineRange> {
    if line_count == 0 {
        return Vec::new();
    }
    if ranges.is_empty() {
        return vec![LineRange::new(1, line_count)];
    }
    let mut sorted: Vec<LineRange> = ranges
        .iter()
        .map(|r| LineRange::new(r.start.max(1), r.end.min(line_count)))
        .filter(|r| r.start <= r.end)
        .collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut merged: Vec<LineRange> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match merged.last_mut() {
            Some(last) if range.start <= last.end.saturating_add(1) => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// Render the lines of `content` in `ranges` (see [`merge_ranges`]), each
/// through `line(number, text)`, one per output line, with a `...` line for
/// every gap (before, between and after the ranges).
pub fn render_ranges(content: &str, ranges: &[LineRange], line: impl Fn(u32, &str) -> String) -> String {
    let (_, body) = split_bom(content);
    let lines = crate::text::lines_without_endings(body);
    let merged = merge_ranges(ranges, lines.len() as u32);
    let mut out = String::new();
    let mut next = 1;
    for range in &merged {
        if range.start > next {
            out.push_str("...\n");
        }
        for number in range.start..=range.end {
            out.push_str(&line(number, lines[number as usize - 1]));
            out.push('\n');
        }
        next = range.end + 1;
    }
    if !merged.is_empty() && next <= lines.len() as u32 {
        out.push_str("...\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_overlapping_and_touching_ranges() {
        let r = |s, e| LineRange::new(s, e);
        assert_eq!(merge_ranges(&[r(10, 20), r(5, 9), r(30, 40), r(35, 50)], 45), vec![r(5, 20), r(30, 45)]);
        assert_eq!(merge_ranges(&[], 3), vec![r(1, 3)]);
        assert_eq!(merge_ranges(&[r(9, 12)], 3), vec![]);
    }

    #[test]
    fn renders_gaps_as_dots() {
        let text = "a\nb\nc\nd\ne\n";
        let view = render_ranges(text, &[LineRange::new(2, 2), LineRange::new(4, 4)], |n, l| format!("{n}|{l}"));
        assert_eq!(view, "...\n2|b\n...\n4|d\n...\n");
        assert_eq!(render_ranges("x\r\ny", &[], |_, l| l.into()), "x\ny\n");
    }

    #[test]
    fn version_tags_name_content_and_match_when_quoted_loosely() {
        let tag = version_tag("a\nb\n");
        assert_eq!(tag.len(), 6);
        assert_ne!(tag, version_tag("a\nb"), "the final newline is part of the version");
        assert!(tag_matches(&format!("@{}", tag.to_uppercase()), "a\nb\n"));
        assert!(tag_matches(&tag[..4], "a\nb\n"));
        assert!(!tag_matches(&tag[..3], "a\nb\n"), "too short to mean anything");
        assert!(!tag_matches(&tag, "a\nc\n"));
        assert_eq!(view_header("f", "a\nb\n"), format!("f @{tag} (2 lines)\n"));
        assert_eq!(view_header("f", "a"), format!("f @{} (1 line)\n", version_tag("a")));
    }
}
