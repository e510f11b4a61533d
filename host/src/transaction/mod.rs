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
mod sandbox;
mod trial;
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
pub use paths::{PathError, check_path};
pub use sandbox::CheckResult;

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
    state_dir: PathBuf,
}

impl GitRepo {
    /// The repository around `start`.
    pub fn discover(start: &Path) -> Result<GitRepo, TxError> {
        GitRepo::open(Repository::discover(start).map_err(TxError::git)?)
    }

    /// The transaction over an already opened repository.
    pub fn open(repo: Repository) -> Result<GitRepo, TxError> {
        let root = repo
            .workdir()
            .ok_or_else(|| TxError::Refused("the repository is bare; edits need a working tree".into()))?
            .to_path_buf();
        let state_dir = repo.commondir().join("agent-apply");
        Ok(GitRepo { repo, root, state_dir })
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
            && !sandbox::interrupted(&self.state_dir)
        {
            return Ok(None);
        }
        let _lock = RepoLock::acquire(&self.state_dir)?;
        self.recover_locked()
    }

    fn recover_locked(&self) -> Result<Option<Recovery>, TxError> {
        gitlock::clear_stale(&self.state_dir)?;
        sandbox::repair(&self.repo, &self.state_dir)?;
        match Journal::read(&self.state_dir)? {
            Some(journal) => journal.finish(&self.repo, &self.root, &self.state_dir, None).map(Some),
            None => Ok(None),
        }
    }

    /// Check `path` against the repository's policy: ignored files are
    /// refused unless `allow_ignored`.
    pub fn check_ignored(&self, path: &str, allow_ignored: bool) -> Result<(), SnapshotError> {
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

    /// The paths among `paths` whose working-tree or staged content differs
    /// from HEAD.
    pub fn dirty_paths(&self, head: &Head, paths: &[String]) -> Result<Vec<String>, TxError> {
        let index = self.repo.index().map_err(TxError::git)?;
        let mut dirty = Vec::new();
        for path in paths {
            let committed = self.entry_in(head.commit, path).map(|(id, _)| id);
            let staged = index.get_path(Path::new(path), 0).map(|e| e.id);
            let working = worktree::current_blob(&self.root, path)?;
            if staged != committed || working != committed {
                dirty.push(path.clone());
            }
        }
        Ok(dirty)
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

    fn executable_in(&self, commit: Option<Oid>, path: &str) -> bool {
        self.entry_in(commit, path).is_some_and(|(_, mode)| mode == i32::from(FileMode::BlobExecutable))
    }

    /// The changes as path → new content (`None`: deleted), each path
    /// required to be one the reply planned.
    fn flatten<'c>(changes: &'c [Change], planned: &[String]) -> Result<BTreeMap<String, Option<&'c str>>, TxError> {
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
        let flat = Self::flatten(changes, planned)?;
        let touched: Vec<String> = flat.keys().cloned().collect();
        let dirty = self.dirty_paths(head, &touched)?;
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
                        self.executable_in(head.commit, path),
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

        let blobs = self.blobs_of(head.commit, &flat)?;
        let tree_id = self.tree_with(parent, &blobs)?;
        fault::point("after-objects");

        let mut checks = Vec::new();
        let hook = if request.verify { sandbox::pre_commit_hook(&self.repo, &self.root) } else { None };
        if !request.checks.is_empty() || hook.is_some() {
            let base = parent.ok_or_else(|| TxError::Refused("checks need a first commit to run against".into()))?;
            checks =
                sandbox::run(&self.repo, &self.root, &self.state_dir, base, tree_id, hook.as_deref(), request.checks)?;
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
        self.move_reference(head, commit, &format!("agent-apply: {}", request.message.lines().next().unwrap_or("")))?;
        fault::point("after-ref");
        let recovery = journal.finish(&self.repo, &self.root, &self.state_dir, Some(&flat))?;
        fault::point("after-worktree");
        if !recovery.left.is_empty() {
            return Err(TxError::Refused(format!(
                "committed, but {} changed during the run and were left as they are",
                recovery.left.join(", ")
            )));
        }
        Ok(Ok(Committed {
            commit: commit.to_string(),
            user_commit: user_commit.map(|c| c.to_string()),
            dirty_paths: dirty,
            checks,
        }))
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
        let flat = Self::flatten(changes, planned)?;
        let head = self.head()?;
        let _lock = RepoLock::acquire(&self.state_dir)?;
        self.recover_locked()?;
        let snapshot_of = |path: &str| snapshots.iter().find(|f| f.path == path);
        let mut entries = Vec::new();
        for (index, (path, content)) in flat.iter().enumerate() {
            let snapshot = snapshot_of(path);
            self.check_snapshot(path, snapshot)?;
            let executable = self.executable_in(head.commit, path);
            if flat.len() == 1 {
                // A single rename is already all or nothing; the temp file it
                // renames is recorded so that recovery removes it if killed.
                let full = self.root.join(path);
                return match content {
                    Some(content) => {
                        gitlock::recorded(&self.state_dir, "mid-write", &[worktree::temp_path(&full)], || {
                            worktree::write_atomically(&full, content.as_bytes(), executable)
                        })
                    }
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

    /// Revert the last agent commit: move the branch back to its parent and
    /// restore the paths it touched, if none changed since.
    pub fn undo(&self) -> Result<Undone, TxError> {
        self.recover()?;
        let head = self.head()?;
        let commit_id = head.commit.ok_or_else(|| TxError::Refused("the branch has no commits".into()))?;
        let commit = self.repo.find_commit(commit_id).map_err(TxError::git)?;
        let message = commit.message().unwrap_or("");
        let format = message
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{TRAILER}: ")))
            .ok_or_else(|| {
                TxError::Refused(format!(
                    "HEAD ({}) is not an agent commit: it has no `{TRAILER}:` trailer",
                    &commit_id.to_string()[..12]
                ))
            })?
            .trim()
            .to_string();
        let parent =
            commit.parent(0).map_err(|_| TxError::Refused("the agent commit has no parent to go back to".into()))?;
        let diff = self
            .repo
            .diff_tree_to_tree(
                Some(&parent.tree().map_err(TxError::git)?),
                Some(&commit.tree().map_err(TxError::git)?),
                None,
            )
            .map_err(TxError::git)?;
        let mut paths = Vec::new();
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(path) = file.path().and_then(|p| p.to_str()) {
                    if !paths.iter().any(|p: &String| p == path) {
                        paths.push(path.to_string());
                    }
                }
            }
        }
        let changed = self.dirty_paths(&head, &paths)?;
        if !changed.is_empty() {
            return Err(TxError::Refused(format!(
                "{} changed since the agent commit; commit or discard those changes first",
                changed.join(", ")
            )));
        }
        let _lock = RepoLock::acquire(&self.state_dir)?;
        let digest_in = |commit: Oid, path: &str| -> Result<Option<String>, TxError> {
            self.entry_in(Some(commit), path)
                .map(|(id, _)| self.repo.find_blob(id).map(|b| journal::digest(b.content())))
                .transpose()
                .map_err(TxError::git)
        };
        let entries: Vec<Entry> = paths
            .iter()
            .map(|path| {
                Ok(Entry {
                    path: path.clone(),
                    before: digest_in(commit_id, path)?,
                    after: digest_in(parent.id(), path)?,
                    source: self.entry_in(Some(parent.id()), path).map(|(id, _)| journal::Source::Blob(id.to_string())),
                    executable: self.executable_in(Some(parent.id()), path),
                })
            })
            .collect::<Result<_, TxError>>()?;
        let journal = Journal::new(Some(head.reference.clone()), Some(commit_id), Some(parent.id()), true, entries);
        journal.write(&self.state_dir)?;
        self.move_reference(&head, parent.id(), "agent-apply: undo")?;
        journal.finish(&self.repo, &self.root, &self.state_dir, None)?;
        Ok(Undone { commit: commit_id.to_string(), format, restored: paths, now: parent.id().to_string() })
    }
}

/// What `undo` did.
#[derive(Debug, Clone, Serialize)]
pub struct Undone {
    pub commit: String,
    pub format: String,
    pub restored: Vec<String>,
    pub now: String,
}
