//! The transaction: from a plugin's whole-file changes to a commit, all or
//! nothing. Paths are checked against the policy, snapshots are read, the new
//! tree is built from HEAD's with only the changed paths (cost grows with the
//! change), checks run in a sandbox, the branch moves by compare-and-swap, and
//! the working tree and index follow for the changed paths, under a journal
//! that a killed run's successor finishes.

mod commit;
mod convert;
pub mod fault;
mod gitlock;
mod guard;
mod index_file;
mod journal;
mod lock;
mod objects;
mod parallel;
mod paths;
pub mod process_tree;
pub mod protect;
mod sandbox;
mod snapshot;
mod trial;
mod undo;
mod worktree;

use std::path::{Path, PathBuf};

use git2::{FileMode, Oid, Repository};

pub use commit::{ChecksFailed, CommitRequest, Committed, DirtyPolicy};
pub use convert::{conversion, smudge};
pub use guard::InProgress;
use journal::Journal;
pub use journal::Recovery;
use lock::RepoLock;
pub use paths::{PathError, check_path, lexical_normal};
pub use sandbox::CheckResult;
pub use snapshot::{SnapshotError, binary_changes, planned_paths, read_text, text_within};
pub use undo::Undone;

/// The 12-character abbreviation of a commit id shown to people.
pub fn short_id(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// The trailer that marks an agent commit (`Agent-Apply: <format>`).
pub const TRAILER: &str = "Agent-Apply";
/// The trailer on the commit that saves the user's own changes first.
pub const USER_TRAILER: &str = "Agent-Apply-User-Changes";

/// What can go wrong between a plugin's changes and a commit.
#[derive(Debug, thiserror::Error)]
pub enum TxError {
    /// libgit2 failed; the error keeps its class and code for the caller.
    #[error("{}", .0.message())]
    Git(#[source] git2::Error),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the journal {} is unreadable: {reason}", path.display())]
    Journal { path: PathBuf, reason: String },
    #[error("another git agent-apply is running in this repository (lock {})", lock.display())]
    Busy { lock: PathBuf },
    #[error("{} exists: another git process is using the repository", lock.display())]
    Locked { lock: PathBuf },
    #[error(
        "{reference} moved while the edits were being applied (it was {expected}, now {found}); nothing was changed"
    )]
    Moved { reference: String, expected: String, found: String },
    #[error("{path} changed while the edits were being applied; nothing was changed")]
    FileChanged { path: String },
    #[error("{} {} uncommitted changes, and the dirty-file policy is `refuse`", paths.join(", "), if paths.len() == 1 { "has" } else { "have" })]
    Dirty { paths: Vec<String> },
    #[error("the sandbox for checks failed: {0}")]
    Sandbox(String),
    #[error("a plugin tried to change {path}, which no edit of the reply names")]
    UnplannedChange { path: String },
    #[error("{0}")]
    Refused(String),
    #[error("{} is in progress in this repository; edits would mix into it", operation.name)]
    InProgress { operation: InProgress },
    #[error("the index has unresolved conflicts in {}", paths.join(", "))]
    Conflicted { paths: Vec<String> },
    #[error(
        "{} {} staged changes and different unstaged changes; committing either would lose the other",
        paths.join(", "), if paths.len() == 1 { "has" } else { "have" }
    )]
    PartiallyStaged { paths: Vec<String> },
    #[error("{} is a bare repository: edits need a working tree", path.display())]
    Bare { path: PathBuf },
    #[error("git could not convert {path} between the working tree and the repository: {conversion}")]
    Converted { path: String, conversion: String },
}

impl TxError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        TxError::Io { path: path.to_path_buf(), source }
    }

    pub fn git(error: git2::Error) -> Self {
        TxError::Git(error)
    }
}

/// Where HEAD pointed when the run started.
#[derive(Debug, Clone)]
pub struct Head {
    /// `refs/heads/NAME`, or `HEAD` when detached.
    pub reference: String,
    /// `None` on an unborn branch.
    pub commit: Option<Oid>,
}

/// A git repository to apply edits in.
pub struct GitRepo {
    repo: Repository,
    root: PathBuf,
    /// This worktree's run state (journal, locks): a linked worktree has
    /// its own, so a run there is never finished from another checkout.
    state_dir: PathBuf,
    /// State shared by every worktree of the repository: the checks' sandbox.
    shared_dir: PathBuf,
    protection: protect::Protection,
    /// The index as read for this run's checks (loaded on first use, and
    /// forgotten when the run writes the index).
    index: std::cell::RefCell<Option<guard::IndexView>>,
}

impl GitRepo {
    /// The repository around `start`.
    pub fn discover(start: &Path) -> Result<GitRepo, TxError> {
        GitRepo::open(discover_repository(start).map_err(TxError::git)?)
    }

    /// The transaction over an already opened repository.
    pub fn open(repo: Repository) -> Result<GitRepo, TxError> {
        let root = repo.workdir().ok_or_else(|| TxError::Bare { path: repo.path().to_path_buf() })?.to_path_buf();
        let state_dir = repo.path().join("agent-apply");
        let shared_dir = repo.commondir().join("agent-apply");
        let protection = Self::protection_of(&repo, &root, &[], &[]).expect("the built-in globs are valid");
        Ok(GitRepo { repo, root, state_dir, shared_dir, protection, index: Default::default() })
    }

    /// Protect `extra` (globs) beside the built-in protected paths, and lift
    /// the protection of what `allow` matches (both from config, never from
    /// a reply).
    pub fn protect(&mut self, extra: &[String], allow: &[String]) -> Result<(), protect::GlobError> {
        // `open` protected the built-in paths: only the config's globs change that.
        if !extra.is_empty() || !allow.is_empty() {
            self.protection = Self::protection_of(&self.repo, &self.root, extra, allow)?;
        }
        Ok(())
    }

    fn protection_of(
        repo: &Repository,
        root: &Path,
        extra: &[String],
        allow: &[String],
    ) -> Result<protect::Protection, protect::GlobError> {
        protect::Protection::new(protect::hooks_dir_inside(repo, root).as_deref(), extra, allow)
    }

    /// The index, read once for the run's checks.
    fn index(&self) -> Result<std::cell::Ref<'_, guard::IndexView>, git2::Error> {
        if self.index.borrow().is_none() {
            let view = guard::IndexView::load(&self.repo)?;
            *self.index.borrow_mut() = Some(view);
        }
        Ok(std::cell::Ref::map(self.index.borrow(), |view| view.as_ref().expect("loaded above")))
    }

    /// After the run wrote the index: the next reader reads it again.
    fn forget_index(&self) {
        self.index.borrow_mut().take();
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn repository(&self) -> &Repository {
        &self.repo
    }

    /// Where HEAD points now.
    pub fn head(&self) -> Result<Head, TxError> {
        let head = self.repo.find_reference("HEAD").map_err(TxError::git)?;
        match head.symbolic_target() {
            Some(target) => Ok(Head { reference: target.to_string(), commit: self.repo.refname_to_id(target).ok() }),
            None => Ok(Head { reference: "HEAD".into(), commit: head.target() }),
        }
    }

    /// Finish a run a crash interrupted, if there is one.
    pub fn recover(&self) -> Result<Option<Recovery>, TxError> {
        if !journal::path(&self.state_dir).exists()
            && !gitlock::any_recorded(&self.state_dir)
            && !sandbox::interrupted(&self.shared_dir)
            && !RepoLock::left_by_dead_run(&self.state_dir)
        {
            return Ok(None);
        }
        let _lock = RepoLock::acquire(&self.state_dir)?;
        self.recover_locked()
    }

    fn recover_locked(&self) -> Result<Option<Recovery>, TxError> {
        gitlock::clear_stale(&self.state_dir)?;
        sandbox::repair(&self.repo, &self.shared_dir)?;
        match Journal::read(&self.state_dir)? {
            Some(journal) => journal.finish(self, None).map(Some),
            None => Ok(None),
        }
    }

    /// The entry (blob, mode) of `path` in `commit`'s tree.
    fn entry_in(&self, commit: Option<Oid>, path: &str) -> Option<(Oid, i32)> {
        let tree = self.repo.find_commit(commit?).ok()?.tree().ok()?;
        let entry = tree.get_path(Path::new(path)).ok()?;
        Some((entry.id(), entry.filemode()))
    }

    /// The executable bit git would record for `path` now: the working
    /// file's (with `core.fileMode`, git's default), else HEAD's.
    fn executable_now(&self, commit: Option<Oid>, path: &str) -> bool {
        let file_mode = self.repo.config().and_then(|c| c.get_bool("core.fileMode")).unwrap_or(true);
        match worktree::executable(&self.root, path) {
            Some(executable) if file_mode => executable,
            _ => self.executable_in(commit, path),
        }
    }

    fn executable_in(&self, commit: Option<Oid>, path: &str) -> bool {
        self.entry_in(commit, path).is_some_and(|(_, mode)| mode == i32::from(FileMode::BlobExecutable))
    }
}

/// The repository around `start`, as `Repository::discover` finds it (across
/// file systems, no ceiling), found and opened in one walk: `discover` walks
/// to the repository and then opens it with a second one, a dozen system
/// calls more for every run.
pub fn discover_repository(start: &Path) -> Result<Repository, git2::Error> {
    Repository::open_ext(start, git2::RepositoryOpenFlags::CROSS_FS, std::iter::empty::<&std::ffi::OsStr>())
}

/// Remove the file at `path`; one already gone is no error.
fn remove_if_present(path: &Path) -> Result<(), TxError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(TxError::io(path, e)),
        _ => Ok(()),
    }
}
