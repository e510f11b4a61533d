//! Whether new contents for a file read as a snippet cut from it: a model
//! that quotes two lines of a function under the file's path meant to show
//! or change those lines, not to shrink the file to them. Written as the
//! whole file, such a snippet deletes the rest. One rule, shared by the
//! `whole` format (which refuses such a write) and the host (whose `auto`
//! choice does not read such a reply as whole files at all).

/// New contents that are a fragment of the old: how many non-blank lines
/// each has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// Non-blank lines of the new contents.
    pub lines: usize,
    /// Non-blank lines of the file they would replace.
    pub of: usize,
}

use crate::text::{line_count, lines_with_endings, trim};

/// Files shorter than this (non-blank lines) are never called a fragment's source.
const MIN_SOURCE: usize = 4;

/// `Some` when `new` reads as a snippet of `old`: at least half of its
/// non-blank lines are found in `old`, in order (a snippet is often edited),
/// while at least half of `old` would be dropped. Whitespace around lines
/// is ignored.
pub fn fragment_of(old: &str, new: &str) -> Option<Fragment> {
    // Most new contents are no shorter than half the file: found so by
    // counting the file's lines (SIMD, blank ones too: a bound) and the new
    // lines up to half of that, with nothing collected. On a 10 MB reply of
    // whole files this check was a third of the format's work.
    let at_most = line_count(old);
    if at_most < MIN_SOURCE || non_blank_lines(new).take(at_most / 2 + 1).count() * 2 > at_most {
        return None;
    }
    let of = non_blank_lines(old).count();
    if of < MIN_SOURCE {
        return None;
    }
    let lines = non_blank_lines(new).take(of / 2 + 1).count();
    if lines == 0 || lines * 2 > of {
        return None;
    }
    let old_lines: Vec<&str> = non_blank_lines(old).collect();
    let mut rest = old_lines.iter();
    let mut found = 0;
    for line in non_blank_lines(new) {
        let mut ahead = rest.clone();
        if ahead.any(|&old| old == line) {
            found += 1;
            rest = ahead;
        }
    }
    (found * 2 >= lines).then_some(Fragment { lines, of })
}

/// The lines of `text` that are not blank, trimmed (`str::lines` then
/// `str::trim`, by the SDK's faster equivalents: a line's `\r` is white
/// space to the trim either way).
fn non_blank_lines(text: &str) -> impl Iterator<Item = &str> {
    lines_with_endings(text).map(trim).filter(|line| !line.is_empty())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The rule as written first: every line collected, then compared.
    fn fragment_by_definition(old: &str, new: &str) -> Option<Fragment> {
        let old_lines: Vec<&str> = old.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let new_lines: Vec<&str> = new.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        if new_lines.is_empty() || old_lines.len() < MIN_SOURCE || new_lines.len() * 2 > old_lines.len() {
            return None;
        }
        let mut rest = old_lines.iter();
        let mut found = 0;
        for line in &new_lines {
            let mut ahead = rest.clone();
            if ahead.any(|old| old == line) {
                found += 1;
                rest = ahead;
            }
        }
        (found * 2 >= new_lines.len()).then_some(Fragment { lines: new_lines.len(), of: old_lines.len() })
    }

    /// Text of a few distinct lines, blank ones, white space around them
    /// (`\r` and Unicode spaces included) and line endings of both kinds.
    fn lines_of_text() -> impl Strategy<Value = String> {
        let line = prop::sample::select(vec!["a", "b", "c", "  a", "b\t", "", "   ", "\u{a0}c", "d\r"]);
        let ending = prop::sample::select(vec!["\n", "\r\n", "\r"]);
        prop::collection::vec((line, ending), 0..24)
            .prop_map(|lines| lines.into_iter().map(|(line, ending)| format!("{line}{ending}")).collect())
    }

    proptest! {
        #[test]
        fn the_early_exit_gives_what_the_definition_gives(old in lines_of_text(), new in lines_of_text()) {
            prop_assert_eq!(fragment_of(&old, &new), fragment_by_definition(&old, &new));
        }
    }

    const FILE: &str = "import os\n\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef main():\n    print(load('x'))\n";

    #[test]
    fn a_few_lines_of_the_file_in_order_are_a_fragment() {
        assert_eq!(
            fragment_of(FILE, "def main():\n    print(load(sys.argv[1]))\n"),
            Some(Fragment { lines: 2, of: 6 })
        );
        // New lines are not.
        assert_eq!(fragment_of(FILE, "def run():\n    return 0\n"), None);
    }

    #[test]
    fn a_rewrite_of_most_of_the_file_or_a_tiny_file_is_not() {
        assert_eq!(fragment_of(FILE, &FILE.replace("'x'", "'y'")), None);
        assert_eq!(fragment_of("a\nb\n", "a\n"), None);
        assert_eq!(fragment_of(FILE, ""), None);
    }
}
