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

/// Files shorter than this (non-blank lines) are never called a fragment's source.
const MIN_SOURCE: usize = 4;

/// `Some` when `new` reads as a snippet of `old`: at least half of its
/// non-blank lines are found in `old`, in order (a snippet is often edited),
/// while at least half of `old` would be dropped. Whitespace around lines
/// is ignored.
pub fn fragment_of(old: &str, new: &str) -> Option<Fragment> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
