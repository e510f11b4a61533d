//! Diffs for people (unified, coloured) and changed ranges for programs.

use std::ops::Range;

use schemars::JsonSchema;
use serde::Serialize;
use similar::TextDiff;

/// One changed range of a file: lines `old_start..old_start+removed` became
/// `new_start..new_start+added` (1-based; a count of 0 is an insertion or
/// deletion point).
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct RangeChange {
    pub old_start: usize,
    pub removed: usize,
    pub new_start: usize,
    pub added: usize,
}

/// The changed ranges between two versions of a file.
/// The changed line ranges between `old` and `new`, by histogram diff:
/// near-linear on source files, where a Myers diff is quadratic in the
/// number of changes (a reply with a thousand edits to a file took seconds).
pub fn range_changes(old: &str, new: &str) -> Vec<RangeChange> {
    let input = imara_diff::intern::InternedInput::new(old, new);
    let mut changes = Vec::new();
    imara_diff::diff(imara_diff::Algorithm::Histogram, &input, |before: Range<u32>, after: Range<u32>| {
        changes.push(RangeChange {
            old_start: before.start as usize + 1,
            removed: before.len(),
            new_start: after.start as usize + 1,
            added: after.len(),
        })
    });
    changes
}

/// A unified diff of one file, `None` meaning absent.
pub fn unified_diff(old_path: &str, new_path: &str, old: Option<&str>, new: Option<&str>) -> String {
    // Shown diffs are minimal unless that takes long; then merely correct.
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(300);
    let diff = TextDiff::configure().deadline(deadline).diff_lines(old.unwrap_or(""), new.unwrap_or(""));
    let old_header = if old.is_some() { format!("a/{old_path}") } else { "/dev/null".into() };
    let new_header = if new.is_some() { format!("b/{new_path}") } else { "/dev/null".into() };
    diff.unified_diff().context_radius(3).header(&old_header, &new_header).missing_newline_hint(true).to_string()
}

/// `diff` with ANSI colours for file headers, added, removed and hunk-header
/// lines (as `git diff --color` shows them).
pub fn colorize_diff(diff: &str) -> String {
    use anstyle::{AnsiColor, Style};
    let mut out = String::with_capacity(diff.len() + diff.len() / 8);
    for line in diff.split_inclusive('\n') {
        let style = if line.starts_with("+++") || line.starts_with("---") {
            Style::new().bold()
        } else if line.starts_with('+') {
            AnsiColor::Green.on_default()
        } else if line.starts_with('-') {
            AnsiColor::Red.on_default()
        } else if line.starts_with("@@") {
            AnsiColor::Cyan.on_default()
        } else {
            Style::new()
        };
        let (text, newline) = line.strip_suffix('\n').map_or((line, ""), |text| (text, "\n"));
        out += &format!("{style}{text}{style:#}{newline}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_changes_list_each_changed_range() {
        let old = "a\nb\nc\nd\ne\n";
        let new = "a\nB\nc\nd\nx\ny\ne\n";
        assert_eq!(
            range_changes(old, new),
            vec![
                RangeChange { old_start: 2, removed: 1, new_start: 2, added: 1 },
                RangeChange { old_start: 5, removed: 0, new_start: 5, added: 2 },
            ]
        );
        assert_eq!(range_changes("", "new\n"), vec![RangeChange { old_start: 1, removed: 0, new_start: 1, added: 1 }]);
    }
}
