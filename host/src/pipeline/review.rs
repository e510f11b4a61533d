//! What a person needs to choose a reply's edits one by one before any is
//! written (`--interactive`): which edits there is a choice about, and what
//! each changes on top of the ones accepted before it. No terminal here:
//! the CLI asks, then [`Prepared::apply`] writes the accepted ones.

use agent_apply_sdk::types::{Change, Edit, EditStatus, FailureKind, File, Outcome};

use super::{Prepared, change_paths};
use crate::Error;
use crate::report::unified_diff;

/// What one edit does on top of the edits accepted before it.
#[derive(Debug, Clone)]
pub struct EditPreview {
    /// The edit's verdict there: it may fail without an edit that was
    /// rejected before it (its text was that edit's).
    pub outcome: Outcome,
    /// A unified diff (plain text) of what the edit changes; empty when it
    /// fails.
    pub diff: String,
}

impl Prepared<'_> {
    /// The reply's edits, in reply order.
    pub fn edits(&self) -> &[Edit] {
        &self.parsed.edits
    }

    /// Every edit's outcome when all of them are tried together.
    pub fn outcomes(&self) -> &[Outcome] {
        &self.tried.outcomes
    }

    /// Whether nothing of the reply can be written whatever is chosen: an
    /// edit failed or the reply could not be read, and the run is not
    /// `--partial` (all or nothing).
    pub fn fails_whole(&self) -> bool {
        !self.partial && (self.malformed || self.tried.outcomes.iter().any(|o| o.status == EditStatus::Failed))
    }

    /// The edits a person may accept or reject, in reply order: those that
    /// apply and change something. None when the reply [fails
    /// whole](Self::fails_whole).
    pub fn reviewable(&self) -> Vec<usize> {
        if self.fails_whole() {
            return Vec::new();
        }
        let changes = |o: &Outcome| o.status == EditStatus::Applied && o.kind != Some(FailureKind::AlreadyApplied);
        self.tried.outcomes.iter().filter(|o| changes(o)).map(|o| o.edit as usize).collect()
    }

    /// What the edit at index `edit` changes on top of the `accepted` edits
    /// before it that touch the same files (as they will be written if the
    /// edit is accepted too).
    pub fn preview(&mut self, edit: usize, accepted: &[usize]) -> Result<EditPreview, Error> {
        let touches = |other: usize| {
            let edits = &self.parsed.edits;
            paths(&edits[other]).any(|path| paths(&edits[edit]).any(|mine| mine == path))
        };
        let mut with: Vec<usize> = accepted.iter().copied().filter(|&i| i < edit && touches(i)).collect();
        let earlier = self.try_edits(&with)?.changes;
        with.push(edit);
        let tried = self.try_edits(&with)?;
        let outcome = tried.outcomes[edit].clone();
        let diff = match outcome.status {
            EditStatus::Failed => String::new(),
            EditStatus::Applied => diff_between(&self.plan.snapshots, &earlier, &tried.changes),
        };
        Ok(EditPreview { outcome, diff })
    }
}

fn paths(edit: &Edit) -> impl Iterator<Item = &String> {
    std::iter::once(&edit.path).chain(&edit.related_paths)
}

/// A unified diff from the files as `before` leaves them to the files as
/// `after` leaves them (both on `snapshots`).
fn diff_between(snapshots: &[File], before: &[Change], after: &[Change]) -> String {
    let mut diff = String::new();
    let mut shown: Vec<&str> = Vec::new();
    for change in after {
        let (old_path, new_path, new) = match change {
            Change::Write(file) => (&file.path, &file.path, Some(file.content.as_str())),
            Change::Delete(path) => (path, path, None),
            Change::Rename(rename) => (&rename.from, &rename.to, Some(rename.content.as_str())),
        };
        let old = content(snapshots, before, old_path);
        if old != new || old_path != new_path {
            diff += &unified_diff(old_path, new_path, old, new);
        }
        shown.extend([old_path.as_str(), new_path.as_str()]);
    }
    // A path the earlier edits changed and this set leaves as it was.
    for path in before.iter().flat_map(change_paths) {
        if !shown.contains(&path.as_str()) {
            let (old, new) = (content(snapshots, before, path), content(snapshots, after, path));
            if old != new {
                diff += &unified_diff(path, path, old, new);
            }
            shown.push(path);
        }
    }
    diff
}

/// What `changes` leave at `path` (`None`: no file), on `snapshots`.
fn content<'a>(snapshots: &'a [File], changes: &'a [Change], path: &str) -> Option<&'a str> {
    for change in changes {
        match change {
            Change::Write(file) if file.path == path => return Some(&file.content),
            Change::Delete(deleted) if deleted == path => return None,
            Change::Rename(rename) if rename.to == path => return Some(&rename.content),
            Change::Rename(rename) if rename.from == path => return None,
            _ => {}
        }
    }
    snapshots.iter().find(|f| f.path == path).map(|f| f.content.as_str())
}
