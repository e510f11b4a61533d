//! Changed line ranges, for programs (the diffs people read are in text.rs).

use std::ops::Range;

use schemars::JsonSchema;
use serde::Serialize;

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

/// The changed line ranges between `old` and `new`, by imara-diff's Myers
/// diff, whose heuristics bound its cost: on a 19,000-line file with a
/// thousand changed places it takes 6 ms where the histogram diff took
/// 35 ms (a 10 MB reply's `--json` report spent most of its time here).
pub fn range_changes(old: &str, new: &str) -> Vec<RangeChange> {
    line_hunks(old, new)
        .into_iter()
        .map(|(before, after)| RangeChange {
            old_start: before.start as usize + 1,
            removed: before.len(),
            new_start: after.start as usize + 1,
            added: after.len(),
        })
        .collect()
}

/// The changed hunks between two texts, as line ranges (0-based, end
/// exclusive) of the old and the new text. Also the rebase's three-way
/// merge's view of each side.
pub fn line_hunks(old: &str, new: &str) -> Vec<(Range<u32>, Range<u32>)> {
    let input = imara_diff::intern::InternedInput::new(old, new);
    let mut hunks = Vec::new();
    imara_diff::diff(imara_diff::Algorithm::Myers, &input, |before: Range<u32>, after: Range<u32>| {
        hunks.push((before, after))
    });
    hunks
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
