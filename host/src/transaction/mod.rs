//! The transaction: from a plugin's whole-file changes to a commit, all or
//! nothing. Paths are checked against the policy, snapshots are read, the new
//! tree is built from HEAD's with only the changed paths (cost grows with the
//! change), checks run in a sandbox, the branch moves by compare-and-swap, and
//! the working tree and index follow for the changed paths, under a journal
//! that a killed run's successor finishes.

pub mod fault;
mod gitlock;
mod journal;
mod lock;
mod paths;
pub mod process_tree;
pub mod protect;
mod sandbox;
mod undo;
mod worktree;

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use agent_apply_sdk::types::{Change, Edit, File};
use git2::{FileMode, Oid, Repository, Signature};
use serde::Serialize;

use crate::limits::{InputLimits, long_line, nul_offset};
pub use journal::Recovery;
use journal::{Entry, Journal};
use lock::RepoLock;
pub use paths::{PathError, check_path, lexical_normal};
pub use sandbox::CheckResult;
pub use undo::Undone;

/// The trailer that marks an agent commit (`Agent-Apply: <format>`).
pub const TRAILER: &str = "Agent-Apply";
/// The trailer on the commit that saves the user's own changes first.
pub const USER_TRAILER: &str = "Agent-Apply-User-Changes";

/// What can go wrong between a plugin's changes and a commit.
#[derive(Debug, thiserror::Error)]
pub enum TxError {
    #[error("{0}")]
    Git(String),
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
    #[error(
        "{path} is converted by git when it is staged or checked out ({conversion}); this tool stores bytes \
         unconverted, so it does not commit this file"
    )]
    Converted { path: String, conversion: String },
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

impl TxError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        TxError::Io { path: path.to_path_buf(), source }
    }

    pub fn git(error: git2::Error) -> Self {
        TxError::Git(error.message().to_string())
    }
}

/// A file that cannot be handed to a plugin.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{path} is not valid UTF-8 (first bad byte at offset {offset}); only text files can be edited")]
    NotUtf8 { path: String, offset: usize },
    #[error("{path} looks binary (it holds a NUL byte at offset {offset}); binary files are not edited")]
    Binary { path: String, offset: usize },
    #[error(
        "the edit would make {path} binary (a NUL byte at offset {offset} of its new content); binary content is not written"
    )]
    BecomesBinary { path: String, offset: usize },
    #[error("{path} is ignored by git; pass --allow-ignored to edit it anyway")]
    Ignored { path: String },
    #[error("{path} is {size} bytes, over the {limit}-byte limit for edited files")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("line {line} of {path} is {length} bytes long, over the {limit}-byte line limit")]
    LineTooLong { path: String, line: usize, length: usize, limit: usize },
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

impl SnapshotError {
    /// The path the error is about.
    pub fn path(&self) -> &str {
        match self {
            SnapshotError::Path(e) => e.path(),
            SnapshotError::NotUtf8 { path, .. }
            | SnapshotError::Binary { path, .. }
            | SnapshotError::BecomesBinary { path, .. }
            | SnapshotError::Ignored { path }
            | SnapshotError::TooLarge { path, .. }
            | SnapshotError::LineTooLong { path, .. }
            | SnapshotError::Io { path, .. } => path,
        }
    }
}

/// The repo-relative paths the edits name (targets and related paths), plus
/// `candidates`, in first-seen order without repeats.
pub fn planned_paths(edits: &[Edit], candidates: &[String]) -> Vec<String> {
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let named = edits.iter().flat_map(|e| std::iter::once(&e.path).chain(&e.related_paths));
    named.chain(candidates).filter(|path| seen.insert(path.as_str())).cloned().collect()
}

/// The changes whose new content is not text (it holds a NUL byte, as a
/// `\u0000` escape in a JSON edit can put there): each refused like a binary
/// target, by path.
pub fn binary_changes(changes: &[Change]) -> Vec<SnapshotError> {
    let written = changes.iter().filter_map(|change| match change {
        Change::Write(file) => Some((&file.path, &file.content)),
        Change::Rename(rename) => Some((&rename.to, &rename.content)),
        Change::Delete(_) => None,
    });
    written
        .filter_map(|(path, content)| {
            nul_offset(content.as_bytes()).map(|offset| SnapshotError::BecomesBinary { path: path.clone(), offset })
        })
        .collect()
}

/// Read the snapshot of one path under `root` (`None`: it does not exist),
/// refusing files over the size or line limits, binary files and non-UTF-8.
pub fn read_snapshot(root: &Path, path: &str, limits: &InputLimits) -> Result<Option<File>, SnapshotError> {
    let full = check_path(root, path)?;
    Ok(read_text(&full, path, limits)?.map(|content| File { path: path.to_string(), content }))
}

/// The text of the file at `full` (called `path` in errors), if it exists
/// and is within `limits`: a directory, a file over `max-file-bytes`, a
/// binary, an overlong line or bad UTF-8 is refused.
pub fn read_text(full: &Path, path: &str, limits: &InputLimits) -> Result<Option<String>, SnapshotError> {
    let max_bytes = limits.file_bytes;
    let io = |source| SnapshotError::Io { path: path.to_string(), source };
    let size = match std::fs::metadata(full) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
        Ok(meta) if meta.is_dir() => {
            return Err(io(std::io::Error::other("it is a directory")));
        }
        Ok(meta) if meta.len() > max_bytes => {
            return Err(SnapshotError::TooLarge { path: path.to_string(), size: meta.len(), limit: max_bytes });
        }
        Ok(meta) => meta.len(),
    };
    // Read no more than the limit: the file may have grown since `metadata`.
    // Sized up front (one more byte, to see the end): no regrowing copies.
    let mut bytes = Vec::with_capacity(size as usize + 1);
    std::fs::File::open(full).and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes)).map_err(io)?;
    text_within(bytes, path, limits).map(Some)
}

/// `bytes` (the content of `path`) as text, if within `limits`.
pub fn text_within(bytes: Vec<u8>, path: &str, limits: &InputLimits) -> Result<String, SnapshotError> {
    if bytes.len() as u64 > limits.file_bytes {
        let limit = limits.file_bytes;
        return Err(SnapshotError::TooLarge { path: path.to_string(), size: bytes.len() as u64, limit });
    }
    if let Some(offset) = nul_offset(&bytes) {
        return Err(SnapshotError::Binary { path: path.to_string(), offset });
    }
    if let Some((line, length)) = long_line(&bytes, limits.line_bytes) {
        return Err(SnapshotError::LineTooLong { path: path.to_string(), line, length, limit: limits.line_bytes });
    }
    String::from_utf8(bytes)
        .map_err(|e| SnapshotError::NotUtf8 { path: path.to_string(), offset: e.utf8_error().valid_up_to() })
}

/// What to do with uncommitted changes in a file the reply edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyPolicy {
    /// Commit the user's changes first, labelled as theirs, then the edit.
    #[default]
    CommitFirst,
    /// Apply on top of them and commit both together.
    Include,
    /// Refuse to apply (exit 4).
    Refuse,
}

/// The touched paths that hold the user's own changes.
#[derive(Debug, Default)]
struct WorkingStates {
    /// Working tree, index or mode differ from HEAD.
    dirty: Vec<String>,
    /// Staged content that differs from HEAD and from the working tree.
    partially_staged: Vec<String>,
}

/// Where HEAD pointed when the run started.
#[derive(Debug, Clone)]
pub struct Head {
    /// `refs/heads/NAME`, or `HEAD` when detached.
    pub reference: String,
    /// `None` on an unborn branch.
    pub commit: Option<Oid>,
}

/// Options for one commit.
pub struct CommitRequest<'a> {
    pub message: String,
    pub format: &'a str,
    pub dirty: DirtyPolicy,
    pub checks: &'a [String],
    pub verify: bool,
}

/// What a successful commit did.
#[derive(Debug, Clone, Serialize)]
pub struct Committed {
    pub commit: String,
    /// The commit holding the user's own earlier changes, if one was made.
    pub user_commit: Option<String>,
    pub dirty_paths: Vec<String>,
    pub checks: Vec<CheckResult>,
    /// What the run could not finish after the branch moved (the commit
    /// stands; each says how to finish).
    pub warnings: Vec<String>,
}

/// The checks failed; nothing was committed.
#[derive(Debug, Clone)]
pub struct ChecksFailed {
    pub checks: Vec<CheckResult>,
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
}

impl GitRepo {
    /// The repository around `start`.
    pub fn discover(start: &Path) -> Result<GitRepo, TxError> {
        GitRepo::open(Repository::discover(start).map_err(TxError::git)?)
    }

    /// The transaction over an already opened repository.
    pub fn open(repo: Repository) -> Result<GitRepo, TxError> {
        let root = repo.workdir().ok_or_else(|| TxError::Bare { path: repo.path().to_path_buf() })?.to_path_buf();
        let state_dir = repo.path().join("agent-apply");
        let shared_dir = repo.commondir().join("agent-apply");
        let protection = Self::protection_of(&repo, &root, &[], &[]).expect("the built-in globs are valid");
        Ok(GitRepo { repo, root, state_dir, shared_dir, protection })
    }

    /// Protect `extra` (globs) beside the built-in protected paths, and lift
    /// the protection of what `allow` matches (both from config, never from
    /// a reply).
    pub fn protect(&mut self, extra: &[String], allow: &[String]) -> Result<(), protect::GlobError> {
        self.protection = Self::protection_of(&self.repo, &self.root, extra, allow)?;
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
            && !lock::left_by_dead_run(&self.state_dir, lock::REPO_LOCK)
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
            Some(journal) => journal.finish(&self.repo, &self.root, &self.state_dir, None).map(Some),
            None => Ok(None),
        }
    }

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
    fn check_confined(&self, path: &str) -> Result<PathBuf, PathError> {
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

    /// The entry (blob, mode) of `path` in `commit`'s tree.
    fn entry_in(&self, commit: Option<Oid>, path: &str) -> Option<(Oid, i32)> {
        let tree = self.repo.find_commit(commit?).ok()?.tree().ok()?;
        let entry = tree.get_path(Path::new(path)).ok()?;
        Some((entry.id(), entry.filemode()))
    }

    /// The paths among `paths` whose working-tree or staged content (or
    /// executable bit) differs from HEAD.
    pub fn dirty_paths(&self, head: &Head, paths: &[String]) -> Result<Vec<String>, TxError> {
        Ok(self.working_states(head, paths)?.dirty)
    }

    /// How each of `paths` stands against HEAD and the index.
    fn working_states(&self, head: &Head, paths: &[String]) -> Result<WorkingStates, TxError> {
        let index = self.repo.index().map_err(TxError::git)?;
        let mut states = WorkingStates::default();
        for path in paths {
            let committed = self.entry_in(head.commit, path);
            let staged = index.get_path(Path::new(path), 0).map(|e| e.id);
            let working = worktree::current_blob(&self.root, path)?;
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

    fn signature(&self) -> Signature<'static> {
        self.repo
            .signature()
            .unwrap_or_else(|_| Signature::now("git agent-apply", "agent-apply@localhost").expect("valid signature"))
    }

    /// A tree: `base` with `changes` (path → new blob and executable bit, or
    /// deletion) applied. Only the trees along the changed paths are rewritten.
    fn tree_with(&self, base: Option<Oid>, changes: &BTreeMap<String, Option<(Oid, bool)>>) -> Result<Oid, TxError> {
        let base_tree = match base {
            Some(commit) => self.repo.find_commit(commit).and_then(|c| c.tree()).map_err(TxError::git)?,
            None => {
                let empty = self.repo.treebuilder(None).and_then(|b| b.write()).map_err(TxError::git)?;
                self.repo.find_tree(empty).map_err(TxError::git)?
            }
        };
        let mut update = git2::build::TreeUpdateBuilder::new();
        for (path, change) in changes {
            match change {
                Some((blob, executable)) => {
                    let mode = if *executable { FileMode::BlobExecutable } else { FileMode::Blob };
                    update.upsert(path.as_str(), *blob, mode);
                }
                None => {
                    update.remove(path.as_str());
                }
            }
        }
        update.create_updated(&self.repo, &base_tree).map_err(TxError::git)
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

    /// The changes as path → new content (`None`: deleted), each path
    /// required to be one the reply planned and checked against the policy
    /// again: a plugin's output is not trusted to stay within the plan.
    fn flatten<'c>(
        &self,
        changes: &'c [Change],
        planned: &[String],
    ) -> Result<BTreeMap<String, Option<&'c str>>, TxError> {
        let mut flat = BTreeMap::new();
        for change in changes {
            match change {
                Change::Write(file) => {
                    flat.insert(file.path.clone(), Some(file.content.as_str()));
                }
                Change::Delete(path) => {
                    flat.insert(path.clone(), None);
                }
                Change::Rename(r) => {
                    flat.insert(r.from.clone(), None);
                    flat.insert(r.to.clone(), Some(r.content.as_str()));
                }
            }
        }
        for path in flat.keys() {
            if !planned.contains(path) {
                return Err(TxError::UnplannedChange { path: path.clone() });
            }
            self.check_confined(path).map_err(|e| TxError::Refused(e.to_string()))?;
        }
        for (path, content) in &flat {
            if let Some(offset) = content.and_then(|c| nul_offset(c.as_bytes())) {
                return Err(TxError::Refused(format!(
                    "the new content of {path} holds a NUL byte at offset {offset}; binary files are not written"
                )));
            }
        }
        Ok(flat)
    }

    /// Commit `changes` (computed from `snapshots`) on top of `head`, then
    /// update the working tree and index for those paths.
    pub fn commit(
        &self,
        head: &Head,
        snapshots: &[File],
        planned: &[String],
        changes: &[Change],
        request: &CommitRequest<'_>,
    ) -> Result<Result<Committed, ChecksFailed>, TxError> {
        let flat = self.flatten(changes, planned)?;
        self.refuse_held_locks(head)?;
        self.refuse_unsettled()?;
        for (path, content) in &flat {
            let before = snapshots.iter().find(|f| &f.path == path).map(|f| f.content.as_str());
            self.refuse_conversion(path, before, *content)?;
        }
        let touched: Vec<String> = flat.keys().cloned().collect();
        let WorkingStates { dirty, partially_staged } = self.working_states(head, &touched)?;
        if !partially_staged.is_empty() {
            return Err(TxError::PartiallyStaged { paths: partially_staged });
        }
        if !dirty.is_empty() && request.dirty == DirtyPolicy::Refuse {
            return Err(TxError::Dirty { paths: dirty });
        }
        let signature = self.signature();
        let head_commit = head.commit.map(|id| self.repo.find_commit(id)).transpose().map_err(TxError::git)?;

        // The user's own changes to the touched files, saved first.
        let mut parent = head.commit;
        let mut user_commit = None;
        let snapshot_of = |path: &str| snapshots.iter().find(|f| f.path == path);
        if !dirty.is_empty() && request.dirty == DirtyPolicy::CommitFirst {
            let mut theirs = BTreeMap::new();
            for path in &dirty {
                let blob = match snapshot_of(path) {
                    Some(file) => Some((
                        self.repo.blob(file.content.as_bytes()).map_err(TxError::git)?,
                        self.executable_now(head.commit, path),
                    )),
                    None => None,
                };
                theirs.insert(path.clone(), blob);
            }
            let tree = self.repo.find_tree(self.tree_with(parent, &theirs)?).map_err(TxError::git)?;
            let message = format!(
                "Save uncommitted changes to {} before agent edits\n\nThese are the user's own changes, committed by git agent-apply so the\nagent's edit that follows can be reviewed and undone on its own.\n\n{USER_TRAILER}: yes\n",
                dirty.join(", ")
            );
            let parents: Vec<&git2::Commit<'_>> = head_commit.iter().collect();
            let id = self.repo.commit(None, &signature, &signature, &message, &tree, &parents).map_err(TxError::git)?;
            user_commit = Some(id);
            parent = Some(id);
        }

        let mut blobs = BTreeMap::new();
        for (path, content) in &flat {
            let entry = match content {
                Some(content) => Some((
                    self.repo.blob(content.as_bytes()).map_err(TxError::git)?,
                    self.executable_now(head.commit, path),
                )),
                None => None,
            };
            blobs.insert(path.clone(), entry);
        }
        let tree_id = self.tree_with(parent, &blobs)?;
        fault::point("after-objects");

        let mut checks = Vec::new();
        let hook = if request.verify { sandbox::pre_commit_hook(&self.repo, &self.root) } else { None };
        if !request.checks.is_empty() || hook.is_some() {
            let base = match parent {
                Some(parent) => parent,
                None => self.empty_commit()?,
            };
            checks =
                sandbox::run(&self.repo, &self.root, &self.shared_dir, base, tree_id, hook.as_deref(), request.checks)?;
            if checks.iter().any(|c| !c.passed) {
                return Ok(Err(ChecksFailed { checks }));
            }
        }

        let tree = self.repo.find_tree(tree_id).map_err(TxError::git)?;
        let parent_commit = parent.map(|id| self.repo.find_commit(id)).transpose().map_err(TxError::git)?;
        let parents: Vec<&git2::Commit<'_>> = parent_commit.iter().collect();
        let message = format!("{}\n\n{TRAILER}: {}\n", request.message.trim_end(), request.format);
        let commit = self.repo.commit(None, &signature, &signature, &message, &tree, &parents).map_err(TxError::git)?;

        // From here on the user's files change: one applier at a time, journalled.
        let _lock = RepoLock::acquire(&self.state_dir)?;
        self.recover_locked()?;
        let entries: Vec<Entry> = touched
            .iter()
            .map(|path| {
                let snapshot = snapshot_of(path);
                self.check_snapshot(path, snapshot)?;
                let after = blobs[path];
                Ok(Entry {
                    path: path.clone(),
                    before: snapshot.map(|f| journal::digest(f.content.as_bytes())),
                    after: flat[path].map(|c| journal::digest(c.as_bytes())),
                    source: after.map(|(b, _)| journal::Source::Blob(b.to_string())),
                    executable: after.is_some_and(|(_, x)| x),
                })
            })
            .collect::<Result<_, TxError>>()?;
        let journal = Journal::new(Some(head.reference.clone()), head.commit, Some(commit), true, entries);
        journal.write(&self.state_dir)?;
        fault::point("after-journal");
        let log = format!("agent-apply: {}", request.message.lines().next().unwrap_or(""));
        if let Err(error) = self.move_reference(head, commit, &log) {
            // Nothing of the user's changed: the journal has nothing to finish.
            Journal::remove(&self.state_dir)?;
            return Err(error);
        }
        fault::point("after-ref");
        // From here the branch has moved: whatever happens to the working
        // tree, the run applied, and says what is left to do.
        let warnings = match journal.finish(&self.repo, &self.root, &self.state_dir, Some(&flat)) {
            Ok(recovery) if recovery.left.is_empty() => Vec::new(),
            Ok(recovery) => vec![format!(
                "{} changed during the run and {} left as {} in the working tree; the commit holds the edit",
                recovery.left.join(", "),
                if recovery.left.len() == 1 { "was" } else { "were" },
                if recovery.left.len() == 1 { "it is" } else { "they are" },
            )],
            Err(error) => vec![format!(
                "committed, but the working tree and index could not be brought up to date ({error}); \
                 run `git agent-apply recover` to finish"
            )],
        };
        fault::point("after-worktree");
        // Only commits this tool made, exactly as made, can be undone.
        let mut warnings = warnings;
        if let Err(error) = undo::record_made(&self.state_dir, commit) {
            warnings.push(format!("the commit could not be recorded for `undo` ({error}); undo it with git"));
        }
        Ok(Ok(Committed {
            commit: commit.to_string(),
            user_commit: user_commit.map(|c| c.to_string()),
            dirty_paths: dirty,
            checks,
            warnings,
        }))
    }

    /// Refuse a path whose bytes git converts between the working tree and
    /// the repository (a clean/smudge filter as Git LFS uses, `ident`,
    /// `working-tree-encoding`, or end-of-line conversion that would change
    /// these contents): the blob stored must be what `git add` would store,
    /// and this tool does not run those filters. End-of-line conversion of
    /// contents without a CR (`core.autocrlf=input`, `text=auto` on LF
    /// files) is the identity, and is allowed.
    fn refuse_conversion(&self, path: &str, before: Option<&str>, after: Option<&str>) -> Result<(), TxError> {
        let attr = |name: &str| {
            self.repo.get_attr(Path::new(path), name, git2::AttrCheckFlags::FILE_THEN_INDEX).ok().flatten()
        };
        let converted = |conversion: String| Err(TxError::Converted { path: path.to_string(), conversion });
        if let Some(filter) = attr("filter").filter(|f| !matches!(*f, "false" | "unset" | "")) {
            return converted(format!("the `{filter}` filter"));
        }
        for name in ["ident", "working-tree-encoding"] {
            if attr(name).is_some_and(|v| v != "false") {
                return converted(format!("the `{name}` attribute"));
            }
        }
        let has_cr = |text: Option<&str>| text.is_some_and(|t| t.contains('\r'));
        if !has_cr(before) && !has_cr(after) {
            return Ok(());
        }
        let config = self.repo.config().map_err(TxError::git)?;
        let autocrlf = config.get_string("core.autocrlf").unwrap_or_default().to_ascii_lowercase();
        let eol_conversion = match attr("text") {
            Some("false") => false,
            Some(_) => true,
            None => attr("eol").is_some() || matches!(autocrlf.as_str(), "true" | "input"),
        };
        if eol_conversion {
            return converted("end-of-line conversion of its CRLF lines".into());
        }
        Ok(())
    }

    /// A commit of the empty tree, for checks on an unborn branch to start
    /// from. Fixed author and time: every run names the same object.
    fn empty_commit(&self) -> Result<Oid, TxError> {
        let tree = self.repo.treebuilder(None).and_then(|b| b.write()).map_err(TxError::git)?;
        let tree = self.repo.find_tree(tree).map_err(TxError::git)?;
        let signature =
            Signature::new("git agent-apply", "agent-apply@localhost", &git2::Time::new(0, 0)).map_err(TxError::git)?;
        self.repo.commit(None, &signature, &signature, "empty base for checks", &tree, &[]).map_err(TxError::git)
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
    fn refuse_held_locks(&self, head: &Head) -> Result<(), TxError> {
        let dir = if head.reference == "HEAD" { self.repo.path() } else { self.repo.commondir() };
        let locks = [self.repo.path().join("index.lock"), dir.join(format!("{}.lock", head.reference))];
        match locks.into_iter().find(|lock| lock.symlink_metadata().is_ok()) {
            Some(lock) => Err(TxError::Locked { lock }),
            None => Ok(()),
        }
    }

    /// Move `head.reference` from `head.commit` to `new`, only if it still
    /// points where the run started.
    fn move_reference(&self, head: &Head, new: Oid, log: &str) -> Result<(), TxError> {
        // HEAD (detached) is per worktree; branches live in the common dir.
        let dir = if head.reference == "HEAD" { self.repo.path() } else { self.repo.commondir() };
        let locks = [dir.join(format!("{}.lock", head.reference)), dir.join(format!("logs/{}.lock", head.reference))];
        let result = gitlock::recorded(&self.state_dir, "mid-ref-move", &locks, || {
            Ok(match head.commit {
                Some(old) => self.repo.reference_matching(&head.reference, new, true, old, log).map(drop),
                None => self.repo.reference(&head.reference, new, false, log).map(drop),
            })
        })?;
        result.map_err(|e| {
            let found =
                self.repo.refname_to_id(&head.reference).map(|id| id.to_string()).unwrap_or_else(|_| "missing".into());
            if e.code() == git2::ErrorCode::Locked {
                return TxError::Locked { lock: locks[0].clone() };
            }
            if e.code() == git2::ErrorCode::Modified
                || e.code() == git2::ErrorCode::Exists
                || found != head.commit.map(|c| c.to_string()).unwrap_or_else(|| "missing".into())
            {
                TxError::Moved {
                    reference: head.reference.clone(),
                    expected: head.commit.map_or_else(|| "unborn".into(), |c| c.to_string()),
                    found,
                }
            } else {
                TxError::git(e)
            }
        })
    }

    /// Check that the working tree still holds `path` exactly as the run
    /// read it (`None`: it did not exist). Bytes are compared, not hashes:
    /// the snapshot is in memory.
    fn check_snapshot(&self, path: &str, snapshot: Option<&File>) -> Result<(), TxError> {
        if !worktree::holds(&self.root, path, snapshot.map(|f| f.content.as_bytes()))? {
            return Err(TxError::FileChanged { path: path.to_string() });
        }
        Ok(())
    }

    /// `--no-commit`: write `changes` to the working tree only, all or
    /// nothing. One file is replaced atomically by itself; several go under
    /// the journal, their new contents kept in the state directory (no
    /// objects are written: nothing is committed).
    pub fn write_worktree(&self, snapshots: &[File], planned: &[String], changes: &[Change]) -> Result<(), TxError> {
        let flat = self.flatten(changes, planned)?;
        self.refuse_unsettled()?;
        let head = self.head()?;
        let _lock = RepoLock::acquire(&self.state_dir)?;
        self.recover_locked()?;
        let snapshot_of = |path: &str| snapshots.iter().find(|f| f.path == path);
        let mut entries = Vec::new();
        for (index, (path, content)) in flat.iter().enumerate() {
            let snapshot = snapshot_of(path);
            self.check_snapshot(path, snapshot)?;
            let executable = self.executable_now(head.commit, path);
            if flat.len() == 1 {
                // A single rename is already all or nothing; the temp file it
                // renames is recorded so that recovery removes it if killed.
                let full = self.root.join(path);
                let temp = worktree::temp_path(&full, &worktree::new_nonce());
                return match content {
                    Some(content) => gitlock::recorded(&self.state_dir, "mid-write", &[temp.clone()], || {
                        worktree::write_atomically(&full, &temp, content.as_bytes(), executable)
                    }),
                    None => worktree::update(
                        &self.repo,
                        &self.root,
                        &self.state_dir,
                        &[worktree::PathUpdate {
                            path: path.clone(),
                            content: None,
                            deleted: true,
                            executable,
                            write: true,
                        }],
                        false,
                        "",
                    ),
                };
            }
            let source = content.map(|c| journal::keep_pending(&self.state_dir, index, c.as_bytes())).transpose()?;
            entries.push(Entry {
                path: path.clone(),
                // Only a journalled write needs the digest; a single file is not journalled.
                before: snapshot.map(|f| journal::digest(f.content.as_bytes())),
                after: content.map(|c| journal::digest(c.as_bytes())),
                source,
                executable,
            });
        }
        let journal = Journal::new(None, None, None, false, entries);
        journal.write(&self.state_dir)?;
        fault::point("after-journal");
        journal.finish(&self.repo, &self.root, &self.state_dir, Some(&flat))?;
        fault::point("after-worktree");
        Ok(())
    }
}
