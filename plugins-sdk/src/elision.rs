//! Placeholders models write instead of code: `// ... existing code ...`,
//! `# rest of the file unchanged`, a bare `...`. Writing one into a file would
//! delete the code it stands for, so formats that take whole text refuse them.
//!
//! The one detector every format shares. A placeholder-looking line that also
//! stands in the original (the file, or the text an edit replaces) is the
//! file's own content, never an elision: use [`elisions_not_in`] whenever the
//! original is known.

use crate::text::{lines_with_endings, strip_ending, trim, trim_start};

/// A placeholder found in some text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elision {
    /// 1-based line number.
    pub line: u32,
    /// The line as written, without its ending.
    pub text: String,
}

const COMMENT_OPENERS: &[&str] = &["//", "#", "--", "/*", "<!--", ";", "%", "*", "{/*", "'"];
const COMMENT_CLOSERS: &[&str] = &["*/}", "*/", "-->"];

/// Phrases that, at the start of a comment, mean "code left out here".
/// `same as ...` and `everything else ...` are placeholders only as the
/// whole comment (see [`WHOLE_COMMENT_PHRASES`]): "Same as above, but
/// sorted" is a real comment.
const PLACEHOLDER_PHRASES: &[&str] = &[
    "rest of",
    "existing code",
    "existing imports",
    "existing methods",
    "existing functions",
    "remaining code",
    "remaining methods",
    "previous code",
    "code unchanged",
    "unchanged code",
    "code omitted",
    "omitted for brevity",
    "other code",
    "other methods",
    "other functions",
    "keep existing",
    "keep everything else",
    "implementation unchanged",
    "remaining functions",
    "remaining imports",
];

/// Phrases that are a placeholder only when nothing but `unchanged`-like
/// words follow them.
const WHOLE_COMMENT_PHRASES: &[&str] =
    &["same as before", "same as above", "everything else", "as before", "unchanged", "snip", "snipped"];

/// Words that may trail a placeholder phrase ("... unchanged", "here").
const TRAILING_WORDS: &[&str] = &["unchanged", "the same", "as is", "here", "goes here", "omitted", "stays the same"];

/// Words that make a comment a placeholder wherever they stand in it, when
/// it is short: "remaining functions omitted for brevity".
const ELIDING_WORDS: &[&str] = &["omitted for brevity", "for brevity", "left out", "elided", "snipped"];

/// A comment this long or longer is prose, whatever it starts with.
const MAX_PLACEHOLDER_WORDS: usize = 10;

/// The comment text of `line`, if the whole line is one comment.
fn comment_text(line: &str) -> Option<&str> {
    let opener = COMMENT_OPENERS.iter().find(|o| line.starts_with(**o))?;
    let mut body = &line[opener.len()..];
    for closer in COMMENT_CLOSERS {
        if let Some(rest) = body.trim_end().strip_suffix(closer) {
            body = rest;
            break;
        }
    }
    Some(body.trim())
}

fn is_dots(text: &str) -> bool {
    text.starts_with("...") || text.starts_with('…')
}

/// Whether a trimmed line is an elision placeholder. `after_block_opener`
/// says the previous code line ended with `:`, where a bare `...` is a real
/// Python statement (a stub body), not a placeholder.
pub fn is_placeholder(trimmed: &str, after_block_opener: bool) -> bool {
    may_be_placeholder(trimmed) && placeholder(trimmed, after_block_opener)
}

/// Whether a trimmed line may be a placeholder: dots, `…` or a comment
/// opener come first. Most lines are code, told apart here by one byte.
fn may_be_placeholder(trimmed: &str) -> bool {
    matches!(
        trimmed.as_bytes().first(),
        Some(b'.' | 0xE2 | b'/' | b'#' | b'-' | b';' | b'%' | b'*' | b'{' | b'\'' | b'<')
    )
}

fn placeholder(trimmed: &str, after_block_opener: bool) -> bool {
    if trimmed == "..." || trimmed == "…" {
        return !after_block_opener;
    }
    // `... rest of code ...` written as plain text (not JS spread `...args`).
    if trimmed.starts_with("... ") || trimmed.starts_with("…") {
        return true;
    }
    let Some(comment) = comment_text(trimmed) else { return false };
    if comment.is_empty() {
        return false;
    }
    let lower = comment.to_lowercase();
    let words = lower.trim_start_matches(['.', '…', ' ', '(', '[', '<']);
    let bare = words.trim_end_matches(['.', '…', ' ', ')', ']', '>', ':']);
    if bare.split_whitespace().count() >= MAX_PLACEHOLDER_WORDS {
        return false;
    }
    let starts_with_phrase = PLACEHOLDER_PHRASES.iter().any(|p| words.starts_with(p));
    let whole_phrase = WHOLE_COMMENT_PHRASES.iter().any(|p| {
        bare.strip_prefix(p).is_some_and(|tail| {
            let tail = tail.trim_matches([' ', ',', '-']);
            tail.is_empty() || TRAILING_WORDS.contains(&tail)
        })
    });
    let eliding = ELIDING_WORDS.iter().any(|w| bare.contains(w));
    (is_dots(&lower) && (words.is_empty() || lower.ends_with("...") || lower.ends_with('…')))
        || starts_with_phrase
        || whole_phrase
        || eliding
}

/// Every placeholder line in `text`.
pub fn find_elisions(text: &str) -> Vec<Elision> {
    find_elisions_in_lines(lines_with_endings(text).map(strip_ending))
}

/// Every placeholder among `lines` (each without its ending): what
/// [`find_elisions`] finds in them joined, without joining them (a format
/// checks every edit's replacement, and most have none).
pub fn find_elisions_in_lines<'l>(lines: impl IntoIterator<Item = &'l str>) -> Vec<Elision> {
    let mut found = Vec::new();
    // The last line with text, from its first visible character. Whether it
    // opens a block is asked only for a line that may be a placeholder:
    // every line's end was trimmed for it, a third of this loop's time.
    let mut previous = "";
    for (index, line) in lines.into_iter().enumerate() {
        // Most lines are told apart by their first character: only those
        // that may be a placeholder are trimmed at both ends.
        let start = trim_start(line);
        if start.is_empty() {
            continue;
        }
        if may_be_placeholder(start) {
            let after_block_opener = crate::text::trim_end(previous).ends_with(':');
            if placeholder(trim(start), after_block_opener) {
                found.push(Elision { line: index as u32 + 1, text: line.to_string() });
            }
        }
        previous = start;
    }
    found
}

/// The placeholders of `text` that are not content of the original: a line
/// that also stands (trimmed) among `original` lines is what the file
/// already holds, a Python `...` stub body or a comment that reads like a
/// placeholder, and writing it again deletes nothing.
pub fn elisions_not_in<'o>(text: &str, original: impl IntoIterator<Item = &'o str>) -> Vec<Elision> {
    elisions_in_lines_not_in(lines_with_endings(text).map(strip_ending), original)
}

/// [`elisions_not_in`] of `lines` (each without its ending), not joined.
pub fn elisions_in_lines_not_in<'l, 'o>(
    lines: impl IntoIterator<Item = &'l str>,
    original: impl IntoIterator<Item = &'o str>,
) -> Vec<Elision> {
    let mut found = find_elisions_in_lines(lines);
    if found.is_empty() {
        return found;
    }
    let mut standing: std::collections::HashSet<String> = found.iter().map(|e| e.text.trim().to_string()).collect();
    let mut content = std::collections::HashSet::new();
    for line in original {
        if let Some(text) = standing.take(line.trim()) {
            content.insert(text);
        }
    }
    found.retain(|e| !content.contains(e.text.trim()));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_usual_placeholders() {
        for line in [
            "// ... existing code ...",
            "# ... rest of the file unchanged ...",
            "# rest of the file unchanged",
            "// existing code here",
            "/* ... */",
            "<!-- ... -->",
            "...",
            "…",
            "... rest of code ...",
            "    # ...",
            "-- ... other functions",
            "{/* ... existing JSX ... */}",
            "# … (unchanged)",
            "# [snip]",
            "# remaining functions omitted for brevity",
            "# <rest of code>",
            "# Keep everything else the same",
            "// same as above",
            "# everything else unchanged",
        ] {
            assert_eq!(find_elisions(line).len(), 1, "{line:?} is a placeholder");
        }
    }

    #[test]
    fn leaves_real_code_alone() {
        for line in [
            "// keep the rest of the buffer unchanged",
            "const all = [...items];",
            "...args,",
            "x = y[1:...]",
            "# TODO: handle errors",
            "// see https://example.com/a...b",
            "..Default::default()",
            "# Same as above, but sorted by name so the output is stable",
            "# Same as above, but for the async client.",
            "# unchanged inputs are skipped by the cache, which keeps the second run fast and cheap",
            "# unchanged inputs are skipped",
            "# snippet from the docs",
        ] {
            assert!(find_elisions(line).is_empty(), "{line:?} is code");
        }
    }

    #[test]
    fn placeholder_looking_lines_of_the_original_are_content() {
        let new = "def f() -> int:\n    \"\"\"Doc.\"\"\"\n    ...\n# rest of code\n";
        assert_eq!(find_elisions(new).len(), 2);
        let found = elisions_not_in(new, "x: int = ...\n    ...\n".lines());
        assert_eq!(found.iter().map(|e| e.line).collect::<Vec<_>>(), [4]);
    }

    #[test]
    fn python_stub_body_is_code() {
        assert!(find_elisions("class P(Protocol):\n    def f(self) -> int:\n        ...\n").is_empty());
        assert_eq!(find_elisions("import os\n...\n")[0].line, 2);
    }

    proptest::proptest! {
        #[test]
        fn the_quick_look_passes_every_placeholder(
            line in "(\\.\\.\\.|…|//|#|--|/\\*|<!--|;|%|\\*|\\{/\\*|'|[a-z(]{1,3})?[ .…]{0,2}(rest of|existing code|same as above|snip|unchanged|omitted for brevity|x)?[ .…)\\]>*/-]{0,3}",
            after: bool,
        ) {
            if placeholder(&line, after) {
                proptest::prop_assert!(may_be_placeholder(&line), "{:?}", line);
            }
        }
    }

    /// The loop as first written: every line's end trimmed to know whether
    /// the next line follows a block opener.
    fn found_trimming_every_line(lines: &[String]) -> Vec<Elision> {
        let mut found = Vec::new();
        let mut after_block_opener = false;
        for (index, line) in lines.iter().enumerate() {
            let start = line.trim_start();
            if start.is_empty() {
                continue;
            }
            if is_placeholder(start.trim(), after_block_opener) {
                found.push(Elision { line: index as u32 + 1, text: line.clone() });
            }
            after_block_opener = start.trim_end().ends_with(':');
        }
        found
    }

    proptest::proptest! {
        #[test]
        fn the_block_opener_is_the_last_line_with_text(
            lines in proptest::collection::vec(
                "(\\.\\.\\.|…|  \\.\\.\\.|\u{3000}\\.\\.\\.|def f\\(\\):|if x: \t|x: \u{3000}|# rest of code|:|  |\t|\u{3000}|x = 1|)",
                0..12,
            ),
        ) {
            proptest::prop_assert_eq!(
                find_elisions_in_lines(lines.iter().map(String::as_str)),
                found_trimming_every_line(&lines)
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn lines_are_read_as_their_joined_text_is(
            lines in proptest::collection::vec(
                "(\\.\\.\\.|# \\.\\.\\. rest of code|// existing code|def f\\(\\):|x = 1|  …| *\\.\\.\\.|)",
                0..12,
            ),
            original in proptest::collection::vec("(\\.\\.\\.|x = 1|// existing code|)", 0..4),
        ) {
            let joined = crate::text::joined_lines(&lines);
            let of_lines = elisions_in_lines_not_in(lines.iter().map(String::as_str), original.iter().map(String::as_str));
            let of_text = elisions_not_in(&joined, original.iter().map(String::as_str));
            proptest::prop_assert_eq!(of_lines, of_text);
        }
    }
}
