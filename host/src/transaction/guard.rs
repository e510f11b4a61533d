//! The repository's side of the policy: the checks that need the index or
//! git's view of the repository (submodules, sparse entries, ignored files,
//! protected paths, conversions, operations in progress, locks held by other
//! git processes, the user's own changes). Each refuses before anything is
//! written.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use super::index_file::{EntryInfo, IndexFile, Stamp};
use super::{GitRepo, Head, PathError, SnapshotError, TxError, check_path, convert, gitlock, worktree};

/// The index as the run reads it: the file parsed directly where it can
/// be ([`IndexFile`]), else libgit2's index.
pub(super) enum IndexView {
    File {
        /// `None`: the repository has no index file yet.
        file: Option<IndexFile>,
        /// The repository opened again, with an index of `file`'s
        /// `.gitattributes` entries alone ([`GitRepo::conversion`]).
        attributes: OnceCell<Option<git2::Repository>>,
        git_dir: PathBuf,
    },
    /// libgit2's index, and the index file's stamp taken before reading it.
    Libgit2(git2::Index, Option<Stamp>),
}

impl IndexView {
    pub(super) fn load(repo: &git2::Repository) -> Result<IndexView, git2::Error> {
        match IndexFile::read(&repo.path().join("index")) {
            Ok(file) => Ok(IndexView::File { file, attributes: OnceCell::new(), git_dir: repo.path().to_path_buf() }),
            Err(_) => {
                let stamp = std::fs::metadata(repo.path().join("index")).ok().map(|meta| Stamp::of(&meta));
                repo.index().map(|index| IndexView::Libgit2(index, stamp))
            }
        }
    }

    fn attributes_repo(&self) -> Option<&git2::Repository> {
        let IndexView::File { file, attributes, git_dir } = self else { return None };
        let open = || {
            let repo = git2::Repository::open(git_dir).ok()?;
            let mut index = git2::Index::new().ok()?;
            for entry in file.as_ref().map(IndexFile::attribute_entries).unwrap_or_default() {
                index.add(&entry).ok()?;
            }
            repo.set_index(&mut index).ok()?;
            Some(repo)
        };
        attributes.get_or_init(open).as_ref()
    }

    /// The index file read directly, if it was.
    pub(super) fn file(&self) -> Option<&IndexFile> {
        match self {
            IndexView::File { file, .. } => file.as_ref(),
            IndexView::Libgit2(..) => None,
        }
    }

    /// The version of the index file this view read (`None`: none was read).
    fn stamp(&self) -> Option<Stamp> {
        match self {
            IndexView::File { file, .. } => file.as_ref().map(IndexFile::stamp),
            IndexView::Libgit2(_, stamp) => *stamp,
        }
    }

    /// `path`'s entry at stage 0.
    fn entry(&self, path: &str) -> Option<EntryInfo> {
        match self {
            IndexView::File { file, .. } => file.as_ref()?.entry(path),
            IndexView::Libgit2(index, _) => index.get_path(Path::new(path), 0).map(|e| EntryInfo {
                mode: e.mode,
                id: e.id,
                ctime: (e.ctime.seconds() as u32, e.ctime.nanoseconds()),
                mtime: (e.mtime.seconds() as u32, e.mtime.nanoseconds()),
                ino: e.ino,
                size: e.file_size,
                flags_extended: e.flags_extended,
            }),
        }
    }

    fn conflicted_paths(&self) -> Result<Vec<String>, git2::Error> {
        match self {
            IndexView::File { file, .. } => Ok(file.as_ref().map(IndexFile::conflicted_paths).unwrap_or_default()),
            IndexView::Libgit2(index, _) if index.has_conflicts() => {
                let mut paths: Vec<String> = index
                    .conflicts()?
                    .filter_map(|c| c.ok())
                    .filter_map(|c| c.our.or(c.their).or(c.ancestor))
                    .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                    .collect();
                paths.dedup();
                Ok(paths)
            }
            IndexView::Libgit2(..) => Ok(Vec::new()),
        }
    }
}

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
        let index = self.index().ok()?;
        let mut prefix = path;
        loop {
            if index.entry(prefix).is_some_and(|e| e.mode == 0o160000) {
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
        let index = self.index().map_err(|_| PathError::Sparse { path: path.to_string() });
        if index?.entry(path).is_some_and(|e| e.flags_extended & SKIP_WORKTREE != 0) {
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

    /// Why git converts `path` ([`convert::conversion`]). libgit2 reads
    /// `.gitattributes` files from the index as well as from the working
    /// tree, and loads the whole index for that (a third of a one-edit
    /// commit at 100,000 files): where the index was read directly, the
    /// lookup goes through a second handle on the repository whose index
    /// holds only the index's `.gitattributes` entries.
    pub(super) fn conversion(&self, path: &str) -> Option<String> {
        let view = self.index().ok();
        match view.as_deref().and_then(IndexView::attributes_repo) {
            Some(repo) => convert::conversion(repo, path),
            None => convert::conversion(&self.repo, path),
        }
    }

    fn tracked(&self, path: &str) -> bool {
        self.index().ok().is_some_and(|index| index.entry(path).is_some())
    }

    /// The paths among `paths` whose working-tree or staged content (or
    /// executable bit) differs from HEAD.
    pub fn dirty_paths(&self, head: &Head, paths: &[String]) -> Result<Vec<String>, TxError> {
        Ok(self.working_states(head, paths)?.dirty)
    }

    /// How each of `paths` stands against HEAD and the index.
    pub(super) fn working_states(&self, head: &Head, paths: &[String]) -> Result<WorkingStates, TxError> {
        let index = self.index().map_err(TxError::git)?;
        // Judged against the version of the index the entries came from.
        let index_written = index.stamp();
        let mut states = WorkingStates::default();
        for path in paths {
            let committed = self.entry_in(head.commit, path);
            let entry = index.entry(path);
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

    /// The blob of the working file at `path` when the index's stat data
    /// proves the file is the one its entry was made from (as `git status`
    /// decides, without reading or hashing the file); `None` when nothing
    /// proves it (no entry, a racily clean entry, other stat data). For a
    /// path git converts, the entry's blob is the cleaned content's. `len`
    /// is the length the caller read the file at: an entry of another size
    /// proves nothing about what it read.
    pub fn blob_proven_by_stat(&self, path: &str, len: usize) -> Option<git2::Oid> {
        let index = self.index().ok()?;
        let entry = index.entry(path).filter(|e| e.size as usize == len)?;
        stat_proves_clean(&self.root.join(path), &entry, index.stamp()).then_some(entry.id)
    }

    /// The blob `git add` would make of the working file at `path` (`None`:
    /// it does not exist), through git's conversions where it has some.
    fn working_blob(&self, path: &str) -> Result<Option<git2::Oid>, TxError> {
        match self.conversion(path) {
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
        let paths = self.index().and_then(|index| index.conflicted_paths()).map_err(TxError::git)?;
        if !paths.is_empty() {
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
fn stat_proves_clean(full: &Path, entry: &EntryInfo, index_written: Option<Stamp>) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(meta) = std::fs::symlink_metadata(full) else { return false };
    let Some(index_written) = index_written else { return false };
    meta.is_file()
        && !index_written.is_racy(entry.mtime)
        && meta.size() as u32 == entry.size
        && (meta.mtime() as u32, meta.mtime_nsec() as u32) == entry.mtime
        && meta.ctime() as u32 == entry.ctime.0
        && meta.ino() as u32 == entry.ino
        && (meta.mode() & 0o111 != 0) == (entry.mode & 0o111 != 0)
}

#[cfg(not(unix))]
fn stat_proves_clean(_: &Path, _: &EntryInfo, _: Option<Stamp>) -> bool {
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
        let index_file = dir.path().join(".git/index");
        let view = IndexView::load(&repo).unwrap();
        let (entry, written) = (view.entry("a.txt").unwrap(), view.stamp());
        assert!(stat_proves_clean(&file, &entry, written));
        // Written in the index's own tick: racy, so not proven.
        std::fs::File::options().write(true).open(&index_file).unwrap().set_modified(an_hour_ago).unwrap();
        let racy = Some(Stamp::of(&std::fs::metadata(&index_file).unwrap()));
        assert!(!stat_proves_clean(&file, &entry, racy));
        std::fs::write(&file, "changed\n").unwrap();
        assert!(!stat_proves_clean(&file, &entry, written));
    }

    /// Attributes from `.gitattributes` in the working tree, in nested
    /// directories, and in the index alone (a file deleted from the tree
    /// but still staged) all decide a conversion, as libgit2 reading the
    /// whole index decides it.
    #[test]
    fn attributes_come_from_the_tree_and_from_the_index_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let repo = git2::Repository::init(root).unwrap();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join(".gitattributes"), "*.crlf eol=crlf\n").unwrap();
        std::fs::write(root.join("sub/.gitattributes"), "*.id ident\n").unwrap();
        for file in ["a.txt", "a.crlf", "sub/deep/b.id", "sub/c.txt"] {
            std::fs::write(root.join(file), "x\n").unwrap();
        }
        let mut index = repo.index().unwrap();
        index.add_all(["*"], git2::IndexAddOption::DEFAULT, None).unwrap();
        index.write().unwrap();
        // Staged, then deleted from the tree: only the index holds it.
        std::fs::remove_file(root.join("sub/.gitattributes")).unwrap();
        let tx = GitRepo::open(git2::Repository::open(root).unwrap()).unwrap();
        assert!(matches!(*tx.index().unwrap(), IndexView::File { .. }));
        let expected: Vec<Option<String>> = ["a.txt", "a.crlf", "sub/deep/b.id", "sub/c.txt"]
            .iter()
            .map(|path| convert::conversion(&tx.repo, path))
            .collect();
        assert_eq!(expected[..3], [None, Some("the `eol` attribute".into()), Some("the `ident` attribute".into())]);
        for (path, expected) in ["a.txt", "a.crlf", "sub/deep/b.id", "sub/c.txt"].iter().zip(&expected) {
            assert_eq!(&tx.conversion(path), expected, "{path}");
        }
    }
}
