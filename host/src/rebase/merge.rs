//! Git's three-way file merge, in memory, and the regions of the current
//! file that conflict with an edit.
//!
//! git2 0.20 wraps no buffer-to-buffer merge (only `merge_file_from_index`,
//! which needs the three versions written to the object database, and a dry
//! run writes nothing), so `git_merge_file` is called through the sys crate
//! git2 itself is built on: the same xdiff merge as `git merge-file`.

use std::ops::Range;

use libgit2_sys as raw;

use crate::report::line_hunks;

/// The outcome of merging `base → edited` into `base → current`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// No conflict: the merged text.
    Clean(String),
    /// The two sides change the same (or adjacent) lines.
    Conflict,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("git's three-way file merge failed: {0}")]
    Git(String),
    #[error("git's three-way file merge produced text that is not UTF-8")]
    NotUtf8,
}

/// Merge the changes `base → edited` into `current`, as
/// `git merge-file current base edited` does.
pub fn merge3(base: &str, current: &str, edited: &str) -> Result<Merged, MergeError> {
    // libgit2 is initialized lazily by git2's safe calls; this one is cheap
    // and touches nothing.
    let _ = git2::Oid::hash_object(git2::ObjectType::Blob, b"");
    let labels = [c"base", c"current", c"edited"];
    // SAFETY: the inputs borrow `base`, `current` and `edited`, which outlive
    // the call; the labels are static C strings; the result is freed once,
    // after its bytes were copied.
    unsafe {
        let mut inputs: [raw::git_merge_file_input; 3] = std::mem::zeroed();
        for (input, text) in inputs.iter_mut().zip([base, current, edited]) {
            check(raw::git_merge_file_input_init(input, 1))?;
            input.ptr = text.as_ptr().cast();
            input.size = text.len();
        }
        let mut options: raw::git_merge_file_options = std::mem::zeroed();
        check(raw::git_merge_file_options_init(&mut options, 1))?;
        options.ancestor_label = labels[0].as_ptr();
        options.our_label = labels[1].as_ptr();
        options.their_label = labels[2].as_ptr();
        let mut result: raw::git_merge_file_result = std::mem::zeroed();
        check(raw::git_merge_file(&mut result, &inputs[0], &inputs[1], &inputs[2], &options))?;
        let clean = result.automergeable != 0;
        let bytes = if result.ptr.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(result.ptr.cast::<u8>(), result.len).to_vec()
        };
        raw::git_merge_file_result_free(&mut result);
        if !clean {
            return Ok(Merged::Conflict);
        }
        String::from_utf8(bytes).map(Merged::Clean).map_err(|_| MergeError::NotUtf8)
    }
}

fn check(code: std::ffi::c_int) -> Result<(), MergeError> {
    if code >= 0 {
        return Ok(());
    }
    let message = git2::Error::last_error(code).message().to_string();
    Err(MergeError::Git(message))
}

/// A region a conflicting merge could not settle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Lines of the base (0-based, end exclusive) that both sides changed.
    pub base: Range<u32>,
    /// The same region in the current file, 1-based and inclusive (an
    /// emptied region shows the line after it).
    pub current: (u32, u32),
}

impl Conflict {
    /// Whether an edit of base lines `start..=end` (1-based; `end = start - 1`
    /// for an insertion) meets this region, adjacency included.
    pub fn meets(&self, start: u32, end: u32) -> bool {
        let (from, to) = (start.saturating_sub(1), end.max(start.saturating_sub(1)));
        self.base.start <= to && from <= self.base.end
    }
}

/// The regions of a conflicting merge: each change `base → current` whose
/// base lines meet or touch a change `base → edited`, as git's merge counts
/// adjacent changes as one conflict.
pub fn conflicts(base: &str, current: &str, edited: &str) -> Vec<Conflict> {
    let ours = line_hunks(base, current);
    let theirs = line_hunks(base, edited);
    let lines = current.lines().count().max(1) as u32;
    let mut regions: Vec<Conflict> = Vec::new();
    for (base_range, current_range) in &ours {
        let meets = theirs.iter().any(|(b, _)| b.start <= base_range.end && base_range.start <= b.end);
        if !meets {
            continue;
        }
        let start = (current_range.start + 1).min(lines);
        let end = current_range.end.max(start).min(lines);
        match regions.last_mut() {
            Some(last) if last.current.1 + 1 >= start => {
                last.current.1 = last.current.1.max(end);
                last.base.end = base_range.end;
            }
            _ => regions.push(Conflict { base: base_range.clone(), current: (start, end) }),
        }
    }
    regions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separate_changes_merge_cleanly() {
        let base = "a\nb\nc\nd\ne\n";
        let current = "top\na\nb\nc\nd\ne\n";
        let edited = "a\nb\nc\nD\ne\n";
        assert_eq!(merge3(base, current, edited).unwrap(), Merged::Clean("top\na\nb\nc\nD\ne\n".into()));
    }

    #[test]
    fn the_same_line_changed_twice_conflicts_and_names_its_current_lines() {
        let base = "a\nb\nc\nd\ne\n";
        let current = "a\nb\nC1\nC2\nd\ne\n";
        let edited = "a\nb\nX\nd\ne\n";
        assert_eq!(merge3(base, current, edited).unwrap(), Merged::Conflict);
        let regions = conflicts(base, current, edited);
        assert_eq!(regions, vec![Conflict { base: 2..3, current: (3, 4) }]);
        assert!(regions[0].meets(3, 3) && regions[0].meets(4, 3) && !regions[0].meets(1, 1));
    }

    #[test]
    fn no_final_newline_is_kept() {
        assert_eq!(merge3("a\nb", "z\na\nb", "a\nB").unwrap(), Merged::Clean("z\na\nB".into()));
    }
}
