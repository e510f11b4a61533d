//! Lines that only an edit format writes: SEARCH/REPLACE markers, diff
//! headers, patch envelopes. Code almost never holds them, so a reply line
//! with one is part of an edit, and a file's new contents holding one are a
//! leftover of another format (`whole` refuses to write them, the host
//! reports reply lines holding one that no format read).

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::text::{leading_blanks, lines_found, lines_with_endings, strip_ending};

/// The format whose marker `line` is (`editblock`, `udiff`, `apply-patch`),
/// if it is one.
pub fn edit_marker(line: &str) -> Option<&'static str> {
    if may_be_marker(line) { marker_of(line) } else { None }
}

/// Whether `line` may be a marker: every marker starts with one of these
/// prefixes. Most lines are code, told apart here by their first bytes past
/// the blanks, with no trimming: `def`, `-x`, `*args` and `@decorator`
/// lines are common and are not worth a closer look.
fn may_be_marker(line: &str) -> bool {
    // Lines of spaces are common (the host blanks what a format read, to
    // look for markers in the rest): `leading_blanks` skips them in chunks.
    let bytes = line.as_bytes();
    let rest = &bytes[leading_blanks(bytes)..];
    let Some(&first) = rest.first() else { return false };
    match first {
        // Runs of five or more (`<<<<<<< SEARCH`, `------- SEARCH`), or
        // three (`--- a/`, `+++ b/`, `*** Begin Patch`).
        b @ (b'<' | b'>') => rest.starts_with(&[b; 5]),
        b'-' => rest.starts_with(b"---"),
        b'+' => rest.starts_with(b"+++"),
        b'*' => rest.starts_with(b"***"),
        b'@' => rest.starts_with(b"@@"),
        b'd' => rest.starts_with(b"diff --git "),
        // Unicode white space may come first: the careful way.
        b => b >= 0x80,
    }
}

fn marker_of(line: &str) -> Option<&'static str> {
    let line = strip_ending(line).trim();
    let run = |ch: char| {
        let count = line.chars().take_while(|&c| c == ch).count();
        (5..=9).contains(&count).then(|| line[count..].trim().trim_end_matches('>').trim_end())
    };
    let search = run('<').or_else(|| run('-')).is_some_and(|rest| rest.eq_ignore_ascii_case("SEARCH"));
    let replace = run('>').or_else(|| run('+')).is_some_and(|rest| rest.eq_ignore_ascii_case("REPLACE"));
    if search || replace {
        return Some("editblock");
    }
    let hunk = line.starts_with("@@ -") && line[3..].contains(" @@");
    if hunk || line.starts_with("diff --git ") || line.starts_with("--- a/") || line.starts_with("+++ b/") {
        return Some("udiff");
    }
    if ["*** Begin Patch", "*** Update File:", "*** Add File:", "*** Delete File:"].iter().any(|m| line.starts_with(m))
    {
        return Some("apply-patch");
    }
    None
}

/// Text that every marker line holds (see `marker_of`): a run of five `<`,
/// `>`, `-` or `+` holds three, diff and patch headers start with `---`,
/// `+++`, `@@` or `***`, and a git diff with its own header.
const MARKER_CORES: &[&str] = &["<<<<<", ">>>>>", "---", "+++", "@@", "***", "diff --git "];

/// Searchers for [`MARKER_CORES`], made once.
static FINDERS: LazyLock<Vec<Finder<'static>>> = LazyLock::new(|| MARKER_CORES.iter().map(Finder::new).collect());

/// The first line of `text` (1-based) holding an edit marker, with the
/// format that writes it.
///
/// Line by line: inside a component (where the formats call this) one
/// pass over the lines costs less than a SIMD search for each of
/// [`MARKER_CORES`] (whole's 10 MB reply: 0.85x the run's time).
pub fn first_marker(text: &str) -> Option<(u32, &'static str)> {
    lines_with_endings(text)
        .enumerate()
        .find_map(|(index, line)| edit_marker(line).map(|format| (index as u32 + 1, format)))
}

/// The lines of `text` that may hold an edit marker, in order, each once,
/// with where each starts: the lines holding a [`MARKER_CORES`] text. No
/// other line holds a marker, even with some of its bytes made spaces
/// (the host blanks what a format read, then looks at the rest).
pub fn marker_candidates(text: &str) -> Vec<(usize, &str)> {
    // Every core holds one of these bytes (`diff --git ` its `-`). The host
    // asks this of each stretch of a reply a format left unread, thousands
    // of short ones (a path line, a fence) that hold none: two SIMD passes
    // over a few bytes, where starting the seven searches cost a thousand
    // instructions a stretch.
    if !may_hold_marker(text.as_bytes()) {
        return Vec::new();
    }
    candidates_by_search(text)
}

/// Whether `bytes` hold one of the bytes every [`MARKER_CORES`] text has
/// one of (`< > - + @ *`; `diff --git ` its `-`). Bytes without one add
/// nothing to a marker: a line whose other bytes are blanked holds none.
pub fn may_hold_marker(bytes: &[u8]) -> bool {
    memchr::memchr3(b'<', b'>', b'-', bytes).is_some() || memchr::memchr3(b'+', b'@', b'*', bytes).is_some()
}

/// [`marker_candidates`] by the seven searches alone.
fn candidates_by_search(text: &str) -> Vec<(usize, &str)> {
    let mut lines: Vec<(usize, &str)> = FINDERS.iter().flat_map(|finder| lines_found(text, finder)).collect();
    lines.sort_unstable_by_key(|&(start, _)| start);
    lines.dedup_by_key(|&mut (start, _)| start);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_each_formats_markers() {
        for (line, format) in [
            ("<<<<<<< SEARCH", "editblock"),
            ("------- SEARCH", "editblock"),
            (">>>>>>> REPLACE\n", "editblock"),
            ("@@ -1,3 +1,4 @@", "udiff"),
            ("@@ -1 +1 @@ fn main", "udiff"),
            ("diff --git a/x b/x", "udiff"),
            ("--- a/src/x.rs", "udiff"),
            ("*** Begin Patch", "apply-patch"),
        ] {
            assert_eq!(edit_marker(line), Some(format), "{line:?}");
        }
    }

    #[test]
    fn code_is_not_a_marker() {
        for line in ["=======", "x <<<<<<< y", "-- comment", "@@ not a hunk", "--- ", "# *** note"] {
            assert_eq!(edit_marker(line), None, "{line:?}");
        }
        assert_eq!(first_marker("a\n<<<<<<< SEARCH\n"), Some((2, "editblock")));
        assert_eq!(edit_marker("\u{a0}\u{2003}<<<<<<< SEARCH"), Some("editblock"));
        // Common code is turned away by its first bytes.
        for line in ["def f():", "    -x", "*args", "@decorator", "+1", "<div>", ">>> prompt", "--flag", "** 2"] {
            assert!(!may_be_marker(line), "{line:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_text_without_a_cores_bytes_has_no_candidates(text in r"([a-z <>+@*\-\n]|diff --git |<<<<<|@@|\*\*\*){0,12}") {
            proptest::prop_assert_eq!(marker_candidates(&text), candidates_by_search(&text));
        }

        #[test]
        fn the_candidates_hold_every_marker_line(lines in proptest::collection::vec(proptest::sample::select(vec![
            "<<<<<<< SEARCH\n", "=======\n", ">>>>>>> REPLACE\n", "------- SEARCH\n", "+++++++ REPLACE\r\n",
            "@@ -1 +1 @@\n", "@@ not a hunk\n", "diff --git a/x b/x\n", "--- a/x\n", "+++ b/x\n",
            "*** Begin Patch\n", "*** note\n", "--- \n", "x <<<<<<< y\n", "  \u{a0}<<<<<<< SEARCH\n",
            "<<<< SEARCH\n", ">>>>>>>>>> REPLACE\n", "a --- b +++ c\n", "code\n", "\n", ">>>>>>> REPLACE",
        ]), 0..12)) {
            let text = lines.concat();
            let mut offset = 0;
            let marker_lines: Vec<(usize, &str)> = crate::text::lines_with_endings(&text)
                .map(|line| { offset += line.len(); (offset - line.len(), line) })
                .filter(|(_, line)| edit_marker(line).is_some())
                .collect();
            let candidates = marker_candidates(&text);
            proptest::prop_assert!(candidates.windows(2).all(|w| w[0].0 < w[1].0));
            let found: Vec<(usize, &str)> = candidates.into_iter().filter(|(_, line)| edit_marker(line).is_some()).collect();
            proptest::prop_assert_eq!(found, marker_lines);
        }

        #[test]
        fn the_quick_look_passes_every_marker(
            indent in 0usize..40,
            line in "[ \t\u{a0}]{0,2}[<>+@d*=a -]{0,9}(SEARCH|REPLACE|iff --git a/x| @@|a/x|b/x| Begin Patch)?[ >\r\n]{0,2}",
        ) {
            // Past any run of spaces, which is skipped a chunk at a time.
            let line = format!("{}{line}", " ".repeat(indent));
            if marker_of(&line).is_some() {
                proptest::prop_assert!(may_be_marker(&line));
            }
        }
    }
}
