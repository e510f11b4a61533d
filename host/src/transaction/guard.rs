//! The repository's side of the policy: the checks that need the index or
//! git's view of the repository (submodules, sparse entries, ignored files,
//! protected paths, conversions, operations in progress, locks held by other
//! git processes, the user's own changes). Each refuses before anything is
//! written.

use std::path::{Path, PathBuf};

use super::{GitRepo, Head, PathError, SnapshotError, TxError, check_path, convert, gitlock, worktree};

/// A git operation that is under way (merge, rebase, …), and how to settle it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InProgress {
    pub name: &'static str,
    /// The commands that finish or abort it.
    pub settle: &'static str,
}

impl InProgress {
    fn of(state: git2::RepositoryState) -> Option<InProgress> {
        use git2::RepositoryState as S;
        let (name, settle) = match state {
            S::Clean => return None,
            S::Merge => ("a merge", "`git merge --continue` or `git merge --abort`"),
            S::Revert | S::RevertSequence => ("a revert", "`git revert --continue` or `git revert --abort`"),
            S::CherryPick | S::CherryPickSequence => {
                ("a cherry-pick", "`git cherry-pick --continue` or `git cherry-pick --abort`")
            }
            S::Bisect => ("a bisect", "`git bisect reset`"),
            S::Rebase | S::RebaseInteractive | S::RebaseMerge => {
                ("a rebase", "`git rebase --continue` or `git rebase --abort`")
            }
            S::ApplyMailbox | S::ApplyMailboxOrRebase => ("`git am`", "`git am --continue` or `git am --abort`"),
        };
        Some(InProgress { name, settle })
    }
}

/// The touched paths that hold the user's own changes.
#[derive(Debug, Default)]
pub(super) struct WorkingStates {
    /// Working tree, index or mode differ from HEAD.
    pub dirty: Vec<String>,
    /// Staged content that differs from HEAD and from the working tree.
    pub partially_staged: Vec<String>,
}

impl GitRepo {
    /// Check `path` against the whole path policy: the lexical and file
    /// system rules ([`check_path`]), submodules, protected paths, and
    /// ignored files (refused unless `allow_ignored`).
    pub fn check_edit_path(&self, path: &str, allow_ignored: bool) -> Result<PathBuf, SnapshotError> {
        let full = self.check_confined(path)?;
        self.check_ignored(path, allow_ignored)?;
        Ok(full)
    }

    /// The policy without the ignored-file rule: what is checked again at
    /// the moment of writing.
    pub(super) fn check_confined(&self, path: &str) -> Result<PathBuf, PathError> {
        let full = self.check_contained(path)?;
        if let Some(reason) = self.protection.reason(path) {
            return Err(PathError::Protected { path: path.to_string(), reason: reason.to_string() });
        }
        Ok(full)
    }

    /// The submodule (an index entry of mode 160000) that is `path` or one
    /// of its parent directories, checked out or not.
    fn submodule_around(&self, path: &str) -> Option<String> {
        let index = self.repo.index().ok()?;
        let mut prefix = path;
        loop {
            if index.get_path(Path::new(prefix), 0).is_some_and(|e| e.mode == 0o160000) {
                return Some(prefix.to_string());
            }
            prefix = &prefix[..prefix.rfind('/')?];
        }
    }

    /// Check a path `read` is asked to show: the edit policy but for
    /// protection (reading a protected file changes nothing).
    pub fn check_read_path(&self, path: &str, allow_ignored: bool) -> Result<PathBuf, SnapshotError> {
        let full = self.check_contained(path)?;
        self.check_ignored(path, allow_ignored)?;
        Ok(full)
    }

    /// [`check_path`], not inside a submodule, and in the sparse checkout.
    fn check_contained(&self, path: &str) -> Result<PathBuf, PathError> {
        /// `GIT_INDEX_ENTRY_SKIP_WORKTREE`, in an entry's extended flags.
        const SKIP_WORKTREE: u16 = 1 << 14;
        let full = check_path(&self.root, path)?;
        if let Some(submodule) = self.submodule_around(path) {
            return Err(PathError::NestedRepository { path: path.to_string(), repo: submodule });
        }
        let index = self.repo.index().map_err(|_| PathError::Sparse { path: path.to_string() });
        if index?.get_path(Path::new(path), 0).is_some_and(|e| e.flags_extended & SKIP_WORKTREE != 0) {
            return Err(PathError::Sparse { path: path.to_string() });
        }
        Ok(full)
    }

    fn check_ignored(&self, path: &str, allow_ignored: bool) -> Result<(), SnapshotError> {
        if allow_ignored || self.tracked(path) {
            return Ok(());
        }
        match self.repo.is_path_ignored(path) {
            Ok(true) => Err(SnapshotError::Ignored { path: path.to_string() }),
            _ => Ok(()),
        }
    }

    fn tracked(&self, path: &str) -> bool {
        self.repo.index().ok().is_some_and(|index| index.get_path(Path::new(path), 0).is_some())
    }

    /// The paths among `paths` whose working-tree or staged content (or
    /// executable bit) differs from HEAD.
    pub fn dirty_paths(&self, head: &Head, paths: &[String]) -> Result<Vec<String>, TxError> {
        Ok(self.working_states(head, paths)?.dirty)
    }

    /// How each of `paths` stands against HEAD and the index.
    pub(super) fn working_states(&self, head: &Head, paths: &[String]) -> Result<WorkingStates, TxError> {
        let index = self.repo.index().map_err(TxError::git)?;
        // Entries written in the index file's last tick may hide a change
        // made in the same tick (git's "racy clean"): only older ones count.
        let index_written = std::fs::metadata(self.repo.path().join("index")).and_then(|m| m.modified()).ok();
        let mut states = WorkingStates::default();
        for path in paths {
            let committed = self.entry_in(head.commit, path);
            let entry = index.get_path(Path::new(path), 0);
            let staged = entry.as_ref().map(|e| e.id);
            let proven = entry.as_ref().filter(|e| stat_proves_clean(&self.root.join(path), e, index_written));
            let working = match proven {
                Some(entry) => Some(entry.id),
                None => self.working_blob(path)?,
            };
            let committed_id = committed.map(|(id, _)| id);
            let mode_changed = working.is_some()
                && committed.is_some()
                && self.executable_now(head.commit, path) != self.executable_in(head.commit, path);
            if staged != committed_id || working != committed_id || mode_changed {
                states.dirty.push(path.clone());
            }
            if staged != committed_id && working != staged {
                states.partially_staged.push(path.clone());
            }
        }
        Ok(states)
    }

    /// The blob `git add` would make of the working file at `path` (`None`:
    /// it does not exist), through git's conversions where it has some.
    fn working_blob(&self, path: &str) -> Result<Option<git2::Oid>, TxError> {
        match convert::conversion(&self.repo, path) {
            None => worktree::current_blob(&self.root, path),
            Some(_) => worktree::current(&self.root, path)?
                .map(|bytes| convert::clean(&self.root, path, &bytes, convert::Write::No))
                .transpose(),
        }
    }

    /// Refuse while a merge, rebase, cherry-pick, revert, bisect or `git am`
    /// is under way, or the index holds conflicts: an edit would be mixed
    /// into the operation (and a commit would mark the conflict resolved).
    pub fn refuse_unsettled(&self) -> Result<(), TxError> {
        if let Some(operation) = InProgress::of(self.repo.state()) {
            return Err(TxError::InProgress { operation });
        }
        let index = self.repo.index().map_err(TxError::git)?;
        if index.has_conflicts() {
            let mut paths: Vec<String> = index
                .conflicts()
                .map_err(TxError::git)?
                .filter_map(|c| c.ok())
                .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                .collect();
            paths.dedup();
            return Err(TxError::Conflicted { paths });
        }
        Ok(())
    }

    /// Refuse, before any object is written, while another git process
    /// holds the index or the branch: the run would fail halfway otherwise.
    pub(super) fn refuse_held_locks(&self, head: &Head) -> Result<(), TxError> {
        let dir = if head.reference == "HEAD" { self.repo.path() } else { self.repo.commondir() };
        gitlock::wait_until_free(&[self.repo.path().join("index.lock"), dir.join(format!("{}.lock", head.reference))])
    }
}

/// Whether the working file at `full` is, by its stat data, the file the
/// index `entry` was made from, so its blob is the entry's without reading
/// and hashing it (as `git status` decides). Only for entries older than
/// the index file itself.
#[cfg(unix)]
fn stat_proves_clean(full: &Path, entry: &git2::IndexEntry, index_written: Option<std::time::SystemTime>) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(meta) = std::fs::symlink_metadata(full) else { return false };
    let Some(index_written) = index_written else { return false };
    let entry_mtime = std::time::UNIX_EPOCH
        + std::time::Duration::new(u64::from(entry.mtime.seconds() as u32), entry.mtime.nanoseconds());
    meta.is_file()
        && entry_mtime < index_written
        && meta.size() as u32 == entry.file_size
        && meta.mtime() as i32 == entry.mtime.seconds()
        && meta.mtime_nsec() as u32 == entry.mtime.nanoseconds()
        && meta.ctime() as i32 == entry.ctime.seconds()
        && meta.ino() as u32 == entry.ino
        && (meta.mode() & 0o111 != 0) == (entry.mode & 0o111 != 0)
}

#[cfg(not(unix))]
fn stat_proves_clean(_: &Path, _: &git2::IndexEntry, _: Option<std::time::SystemTime>) -> bool {
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn stat_data_proves_an_untouched_file_clean_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "a\n").unwrap();
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(an_hour_ago).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let written = std::fs::metadata(dir.path().join(".git/index")).and_then(|m| m.modified()).ok();
        let entry = index.get_path(Path::new("a.txt"), 0).unwrap();
        assert!(stat_proves_clean(&file, &entry, written));
        // Written in the index's own tick: racy, so not proven.
        assert!(!stat_proves_clean(&file, &entry, Some(an_hour_ago)));
        std::fs::write(&file, "changed\n").unwrap();
        assert!(!stat_proves_clean(&file, &entry, written));
    }
}
