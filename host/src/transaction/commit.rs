//! Committing: the user's own changes saved first (by the dirty policy),
//! the agent's tree built from HEAD's with only the changed paths, checks in
//! the sandbox, the branch moved by compare-and-swap, the working tree and
//! index brought along under the journal. And `--no-commit`'s working-tree
//! writes.

use std::collections::BTreeMap;
use std::path::Path;

use agent_apply_sdk::types::{Change, File};
use git2::{FileMode, Oid, Signature};
use serde::Serialize;

use super::guard::WorkingStates;
use super::journal::{self, Entry, Journal};
use super::lock::RepoLock;
use super::objects::Store;
use super::{
    CheckResult, GitRepo, Head, TRAILER, TxError, USER_TRAILER, convert, fault, gitlock, sandbox, undo, worktree,
};
use crate::limits::nul_offset;

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

impl GitRepo {
    fn signature(&self) -> Signature<'static> {
        self.repo
            .signature()
            .unwrap_or_else(|_| Signature::now("git agent-apply", "agent-apply@localhost").expect("valid signature"))
    }

    /// The repository's own object database, where a commit's objects go.
    pub(super) fn own_objects(&self) -> Store<'_> {
        Store { repo: &self.repo, private: None }
    }

    /// A tree, written to `store`: `base` with `changes` (path → new blob
    /// and executable bit, or deletion) applied. Only the trees along the
    /// changed paths are rewritten.
    pub(super) fn tree_with(
        &self,
        store: Store<'_>,
        base: Option<Oid>,
        changes: &BTreeMap<String, Option<(Oid, bool)>>,
    ) -> Result<Oid, TxError> {
        let repo = store.repo;
        let base_tree = match base {
            Some(commit) => repo.find_commit(commit).and_then(|c| c.tree()).map_err(TxError::git)?,
            None => {
                let empty = repo.treebuilder(None).and_then(|b| b.write()).map_err(TxError::git)?;
                repo.find_tree(empty).map_err(TxError::git)?
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
        update.create_updated(repo, &base_tree).map_err(TxError::git)
    }

    /// The changes as path → new content (`None`: deleted), each path
    /// required to be one the reply planned and checked against the policy
    /// again: a plugin's output is not trusted to stay within the plan.
    pub(super) fn flatten<'c>(
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
        let dirty = self.refuse_before_writing(head, &flat, request.dirty)?;
        let snapshot_of = |path: &str| snapshots.iter().find(|f| f.path == path);
        let user_commit = match request.dirty {
            DirtyPolicy::CommitFirst if !dirty.is_empty() => {
                Some(self.save_users_changes(head, &dirty, &snapshot_of)?)
            }
            _ => None,
        };
        let parent = user_commit.or(head.commit);
        let blobs = self.blobs_of(self.own_objects(), head.commit, &flat)?;
        let tree = self.tree_with(self.own_objects(), parent, &blobs)?;
        fault::point(fault::Stage::AfterObjects);
        let checks = self.run_checks(parent, tree, request)?;
        if checks.iter().any(|c| !c.passed) {
            return Ok(Err(ChecksFailed { checks }));
        }
        let message = format!("{}\n\n{TRAILER}: {}\n", request.message.trim_end(), request.format);
        let commit = self.write_commit(parent, tree, &message)?;

        // From here on the user's files change: one applier at a time, journalled.
        let _lock = RepoLock::acquire(&self.state_dir)?;
        self.recover_locked()?;
        let root = self.root.as_path();
        let entries = super::parallel::try_map(&changed(&flat, snapshots), Changed::bytes, |file| {
            let after = blobs[file.path];
            let source = |_: &str| Ok(after.map(|(b, _)| journal::Source::Blob(b.to_string())));
            file.checked_entry(root, source, after.is_some_and(|(_, x)| x))
        })?;
        let journal = Journal::new(Some(head.reference.clone()), head.commit, Some(commit), true, entries);
        journal.write(&self.state_dir)?;
        fault::point(fault::Stage::AfterJournal);
        let log = format!("agent-apply: {}", request.message.lines().next().unwrap_or(""));
        if let Err(error) = self.move_reference(head, commit, &log) {
            // Nothing of the user's changed: the journal has nothing to finish.
            Journal::remove(&self.state_dir)?;
            return Err(error);
        }
        fault::point(fault::Stage::AfterRef);
        let warnings = self.after_the_branch_moved(&journal, commit, &flat);
        Ok(Ok(Committed {
            commit: commit.to_string(),
            user_commit: user_commit.map(|c| c.to_string()),
            dirty_paths: dirty,
            checks,
            warnings,
        }))
    }

    /// Every refusal that must come before an object is written: locks held
    /// by other git processes, operations in progress, partly staged files,
    /// and the `refuse` dirty policy. The dirty paths, if not.
    fn refuse_before_writing(
        &self,
        head: &Head,
        flat: &BTreeMap<String, Option<&str>>,
        policy: DirtyPolicy,
    ) -> Result<Vec<String>, TxError> {
        self.refuse_held_locks(head)?;
        self.refuse_unsettled()?;
        let touched: Vec<String> = flat.keys().cloned().collect();
        let WorkingStates { dirty, partially_staged } = self.working_states(head, &touched)?;
        if !partially_staged.is_empty() {
            return Err(TxError::PartiallyStaged { paths: partially_staged });
        }
        if !dirty.is_empty() && policy == DirtyPolicy::Refuse {
            return Err(TxError::Dirty { paths: dirty });
        }
        Ok(dirty)
    }

    /// Commit the user's own changes to the `dirty` paths on top of HEAD,
    /// labelled as theirs, so the agent's edit that follows stands alone.
    fn save_users_changes<'s>(
        &self,
        head: &Head,
        dirty: &[String],
        snapshot_of: &dyn Fn(&str) -> Option<&'s File>,
    ) -> Result<Oid, TxError> {
        let mut theirs = BTreeMap::new();
        for path in dirty {
            let blob =
                snapshot_of(path).map(|f| self.blob_for(self.own_objects(), path, f.content.as_bytes())).transpose()?;
            theirs.insert(path.clone(), blob.map(|b| (b, self.executable_now(head.commit, path))));
        }
        let tree = self.tree_with(self.own_objects(), head.commit, &theirs)?;
        let message = format!(
            "Save uncommitted changes to {} before agent edits\n\nThese are the user's own changes, committed by git agent-apply so the\nagent's edit that follows can be reviewed and undone on its own.\n\n{USER_TRAILER}: yes\n",
            dirty.join(", ")
        );
        self.write_commit(head.commit, tree, &message)
    }

    /// The blobs of `flat` (path → new content, `None` deleted), written to
    /// `store`, with the executable bit git would record for each (see
    /// `executable_now`).
    pub(super) fn blobs_of(
        &self,
        store: Store<'_>,
        head: Option<Oid>,
        flat: &BTreeMap<String, Option<&str>>,
    ) -> Result<BTreeMap<String, Option<(Oid, bool)>>, TxError> {
        let mut blobs = BTreeMap::new();
        for (path, content) in flat {
            let blob = content.map(|c| self.blob_for(store, path, c.as_bytes())).transpose()?;
            blobs.insert(path.clone(), blob.map(|b| (b, self.executable_now(head, path))));
        }
        Ok(blobs)
    }

    /// The blob `git add` would store for `bytes` (working-tree form) at
    /// `path`, written to `store`: through git's conversions where it has
    /// some (the repository's attributes and config decide them).
    fn blob_for(&self, store: Store<'_>, path: &str, bytes: &[u8]) -> Result<Oid, TxError> {
        match self.conversion(path) {
            None => store.repo.blob(bytes).map_err(TxError::git),
            Some(_) => convert::clean(&self.root, path, bytes, convert::Write::To(store.private)),
        }
    }

    /// A commit object of `tree` on `parent` (no reference moves).
    fn write_commit(&self, parent: Option<Oid>, tree: Oid, message: &str) -> Result<Oid, TxError> {
        let signature = self.signature();
        let tree = self.repo.find_tree(tree).map_err(TxError::git)?;
        let parent = parent.map(|id| self.repo.find_commit(id)).transpose().map_err(TxError::git)?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        self.repo.commit(None, &signature, &signature, message, &tree, &parents).map_err(TxError::git)
    }

    /// The checks and the pre-commit hook on `tree`, in the sandbox, if any.
    fn run_checks(
        &self,
        parent: Option<Oid>,
        tree: Oid,
        request: &CommitRequest<'_>,
    ) -> Result<Vec<CheckResult>, TxError> {
        let hook = if request.verify { sandbox::pre_commit_hook(&self.repo, &self.root) } else { None };
        if request.checks.is_empty() && hook.is_none() {
            return Ok(Vec::new());
        }
        let base = match parent {
            Some(parent) => parent,
            None => self.empty_commit(self.own_objects())?,
        };
        let target = sandbox::Target { base, tree };
        sandbox::run(&self.repo, &self.root, &self.shared_dir, target, hook.as_deref(), request.checks)
    }

    /// Finish the working tree and index once the branch has moved: whatever
    /// happens now, the run applied, and the warnings say what is left to do.
    fn after_the_branch_moved(
        &self,
        journal: &Journal,
        commit: Oid,
        flat: &BTreeMap<String, Option<&str>>,
    ) -> Vec<String> {
        let mut warnings = match journal.finish(self, Some(flat)) {
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
        fault::point(fault::Stage::AfterWorktree);
        // Only commits this tool made, exactly as made, can be undone.
        if let Err(error) = undo::record_made(&self.state_dir, commit) {
            warnings.push(format!("the commit could not be recorded for `undo` ({error}); undo it with git"));
        }
        warnings
    }

    /// A commit of the empty tree, written to `store`, for checks on an
    /// unborn branch to start from. Fixed author and time: every run names
    /// the same object.
    pub(super) fn empty_commit(&self, store: Store<'_>) -> Result<Oid, TxError> {
        let repo = store.repo;
        let tree = repo.treebuilder(None).and_then(|b| b.write()).map_err(TxError::git)?;
        let tree = repo.find_tree(tree).map_err(TxError::git)?;
        let signature =
            Signature::new("git agent-apply", "agent-apply@localhost", &git2::Time::new(0, 0)).map_err(TxError::git)?;
        repo.commit(None, &signature, &signature, "empty base for checks", &tree, &[]).map_err(TxError::git)
    }

    /// Move `head.reference` from `head.commit` to `new`, only if it still
    /// points where the run started.
    pub(super) fn move_reference(&self, head: &Head, new: Oid, log: &str) -> Result<(), TxError> {
        // HEAD (detached) is per worktree; branches live in the common dir.
        let dir = if head.reference == "HEAD" { self.repo.path() } else { self.repo.commondir() };
        let locks = [dir.join(format!("{}.lock", head.reference)), dir.join(format!("logs/{}.lock", head.reference))];
        let result = gitlock::recorded(&self.state_dir, fault::Stage::MidRefMove, &locks, || {
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
        let files = changed(&flat, snapshots);
        if let [file] = &files[..] {
            check_snapshot(&self.root, file.path, file.snapshot)?;
            return self.write_one_file(file.path, file.content, self.executable_now(head.commit, file.path));
        }
        // Git is asked here; each file is compared, kept and hashed on the pool.
        let executable: Vec<bool> = files.iter().map(|file| self.executable_now(head.commit, file.path)).collect();
        let (root, state_dir) = (self.root.as_path(), self.state_dir.as_path());
        let indexed: Vec<(usize, &Changed)> = files.iter().enumerate().collect();
        let entries = super::parallel::try_map(
            &indexed,
            |(_, file)| file.bytes(),
            |&(index, file)| {
                // Only a journalled write needs the digests; a single file is not journalled.
                let source = |content: &str| journal::keep_pending(state_dir, index, content.as_bytes()).map(Some);
                file.checked_entry(root, source, executable[index])
            },
        )?;
        let journal = Journal::new(None, None, None, false, entries);
        journal.write(&self.state_dir)?;
        fault::point(fault::Stage::AfterJournal);
        journal.finish(self, Some(&flat))?;
        fault::point(fault::Stage::AfterWorktree);
        Ok(())
    }

    /// `--no-commit` of one file: a single rename is already all or
    /// nothing; the temp file it renames is recorded so that recovery
    /// removes it if killed.
    fn write_one_file(&self, path: &str, content: Option<&str>, executable: bool) -> Result<(), TxError> {
        let full = self.root.join(path);
        let temp = worktree::temp_path(&full, &worktree::new_nonce());
        match content {
            Some(content) => {
                gitlock::recorded(&self.state_dir, fault::Stage::MidWrite, std::slice::from_ref(&temp), || {
                    worktree::write_atomically(&full, &temp, content.as_bytes(), executable)
                })
            }
            None => worktree::update(
                self,
                &[worktree::PathUpdate {
                    path: path.to_string(),
                    content: None,
                    deleted: true,
                    executable,
                    write: true,
                    blob: None,
                    kept: None,
                }],
                false,
                "",
            ),
        }
    }
}

/// A file a write changes: the snapshot the run read of it (`None`: it did
/// not exist) and its new content (`None`: it is deleted).
struct Changed<'a> {
    path: &'a String,
    snapshot: Option<&'a File>,
    content: Option<&'a str>,
}

/// The files of `flat`, in its order, each with its snapshot.
fn changed<'a>(flat: &'a BTreeMap<String, Option<&'a str>>, snapshots: &'a [File]) -> Vec<Changed<'a>> {
    flat.iter()
        .map(|(path, &content)| Changed { path, snapshot: snapshots.iter().find(|f| &f.path == path), content })
        .collect()
}

impl Changed<'_> {
    /// The bytes its journal entry reads and hashes (the pool's measure).
    fn bytes(&self) -> usize {
        self.snapshot.map_or(0, |f| f.content.len()) + self.content.map_or(0, str::len)
    }

    /// Its journal entry, once the working tree is checked to still hold
    /// the snapshot: the digests before and after, where the new content
    /// can be read back (`source`, asked only after the check) and its mode.
    fn checked_entry(
        &self,
        root: &Path,
        source: impl FnOnce(&str) -> Result<Option<journal::Source>, TxError>,
        executable: bool,
    ) -> Result<Entry, TxError> {
        check_snapshot(root, self.path, self.snapshot)?;
        Ok(Entry {
            path: self.path.clone(),
            before: self.snapshot.map(|f| journal::digest(f.content.as_bytes())),
            after: self.content.map(|c| journal::digest(c.as_bytes())),
            source: match self.content {
                Some(content) => source(content)?,
                None => None,
            },
            executable,
        })
    }
}

/// Check that the working tree still holds `path` exactly as the run read
/// it (`None`: it did not exist). Bytes are compared, not hashes: the
/// snapshot is in memory.
fn check_snapshot(root: &Path, path: &str, snapshot: Option<&File>) -> Result<(), TxError> {
    if !worktree::holds(root, path, snapshot.map(|f| f.content.as_bytes()))? {
        return Err(TxError::FileChanged { path: path.to_string() });
    }
    Ok(())
}
