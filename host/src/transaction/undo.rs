//! `undo` and `redo`. Only a commit this tool made, byte for byte (its id is
//! in the record of made commits), is undone: a commit amended or rewritten
//! since carries the trailer but holds the user's work, and is refused.
//! Undo moves the branch to the parent and restores the touched paths under
//! the journal; the undone commit is remembered, so `redo` moves the branch
//! forward again. Both refuse when a touched path changed since, and both
//! can say what they would do without doing it.

use std::io::Write as _;
use std::path::Path;

use git2::Oid;
use serde::Serialize;

use super::journal::{self, Entry, Journal};
use super::lock::RepoLock;
use super::{GitRepo, Head, TRAILER, TxError, short_id, worktree};

/// Commits this tool made in this worktree, one id a line.
const MADE: &str = "made";
/// Commits undone, oldest first: `COMMIT PARENT` a line.
const UNDONE: &str = "undone";

/// What `undo` or `redo` did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Undone {
    /// The agent commit undone or redone.
    pub commit: String,
    pub format: String,
    /// The paths restored.
    pub restored: Vec<String>,
    /// Where the branch points now (or would).
    pub now: String,
    pub dry_run: bool,
    /// Paths that changed while it ran and were left as they are.
    pub left: Vec<String>,
}

/// Remember that this tool made `commit`.
pub fn record_made(state_dir: &Path, commit: Oid) -> Result<(), TxError> {
    append(state_dir, MADE, &commit.to_string())
}

fn append(state_dir: &Path, name: &str, line: &str) -> Result<(), TxError> {
    let file = state_dir.join(name);
    std::fs::create_dir_all(state_dir).map_err(|e| TxError::io(state_dir, e))?;
    let mut out =
        std::fs::OpenOptions::new().create(true).append(true).open(&file).map_err(|e| TxError::io(&file, e))?;
    writeln!(out, "{line}").map_err(|e| TxError::io(&file, e))
}

fn lines(state_dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(state_dir.join(name)).unwrap_or_default().lines().map(str::to_string).collect()
}

impl GitRepo {
    /// Revert the last agent commit: move the branch back to its parent and
    /// restore the paths it touched, if none changed since.
    pub fn undo(&self, dry_run: bool) -> Result<Undone, TxError> {
        self.recover()?;
        self.refuse_unsettled()?;
        let head = self.head()?;
        let commit_id = head.commit.ok_or_else(|| TxError::Refused("the branch has no commits".into()))?;
        let id = commit_id.to_string();
        let short = short_id(&id);
        let commit = self.repo.find_commit(commit_id).map_err(TxError::git)?;
        let format = commit
            .message()
            .unwrap_or("")
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{TRAILER}: ")))
            .ok_or_else(|| {
                TxError::Refused(format!("HEAD ({short}) is not an agent commit: it has no `{TRAILER}:` trailer"))
            })?
            .trim()
            .to_string();
        if !lines(&self.state_dir, MADE).contains(&commit_id.to_string()) {
            return Err(TxError::Refused(format!(
                "HEAD ({short}) has the `{TRAILER}:` trailer but is not a commit this tool made here: it was \
                 amended or rewritten since, so it may hold your work; undo it with git (`git reset --keep HEAD~1`) \
                 if you mean to"
            )));
        }
        let parent =
            commit.parent(0).map_err(|_| TxError::Refused("the agent commit has no parent to go back to".into()))?;
        let (restored, left) = self.switch(&head, commit_id, parent.id(), "agent-apply: undo", dry_run)?;
        if !dry_run {
            append(&self.state_dir, UNDONE, &format!("{commit_id} {}", parent.id()))?;
        }
        Ok(Undone { commit: commit_id.to_string(), format, restored, now: parent.id().to_string(), dry_run, left })
    }

    /// Redo the last undo: move the branch forward to the commit it undid,
    /// if the branch is still where that undo left it.
    pub fn redo(&self, dry_run: bool) -> Result<Undone, TxError> {
        self.recover()?;
        self.refuse_unsettled()?;
        let head = self.head()?;
        let mut undone = lines(&self.state_dir, UNDONE);
        let last = undone.last().and_then(|l| l.split_once(' ')).map(|(c, p)| (c.to_string(), p.to_string()));
        let (commit, parent) = last.ok_or_else(|| TxError::Refused("there is no undo to redo".into()))?;
        if head.commit.map(|c| c.to_string()).as_deref() != Some(parent.as_str()) {
            return Err(TxError::Refused(format!(
                "the branch moved since the last undo (it was left at {}); nothing to redo",
                &parent[..12.min(parent.len())]
            )));
        }
        let bad = |e: git2::Error| TxError::Refused(format!("the undone commit {commit} is gone: {}", e.message()));
        let commit_id = Oid::from_str(&commit).map_err(bad)?;
        let format = self.repo.find_commit(commit_id).map_err(bad)?.message().unwrap_or("").to_string();
        let format = format.lines().find_map(|l| l.strip_prefix(&format!("{TRAILER}: "))).unwrap_or("").trim();
        let from = Oid::from_str(&parent).map_err(bad)?;
        let (restored, left) = self.switch(&head, from, commit_id, "agent-apply: redo", dry_run)?;
        if !dry_run {
            undone.pop();
            let file = self.state_dir.join(UNDONE);
            let text: String = undone.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(&file, text).map_err(|e| TxError::io(&file, e))?;
        }
        Ok(Undone { commit, format: format.to_string(), restored, now: commit_id.to_string(), dry_run, left })
    }

    /// Move the branch from `from` (where it is) to `to`, bringing every path
    /// that differs between their trees to `to`'s content, under the
    /// journal; refused when one of those paths changed since `from`.
    /// Returns the paths, and those left as they were because they changed
    /// while it ran (the branch has moved all the same).
    fn switch(
        &self,
        head: &Head,
        from: Oid,
        to: Oid,
        log: &str,
        dry_run: bool,
    ) -> Result<(Vec<String>, Vec<String>), TxError> {
        let tree_of = |id: Oid| self.repo.find_commit(id).and_then(|c| c.tree()).map_err(TxError::git);
        let diff =
            self.repo.diff_tree_to_tree(Some(&tree_of(from)?), Some(&tree_of(to)?), None).map_err(TxError::git)?;
        let mut paths: Vec<String> = Vec::new();
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(path) = file.path().and_then(|p| p.to_str())
                    && !paths.iter().any(|p| p == path)
                {
                    paths.push(path.to_string());
                }
            }
        }
        let changed = self.dirty_paths(head, &paths)?;
        if !changed.is_empty() {
            return Err(TxError::Refused(format!(
                "{} changed since the agent commit; commit or discard those changes first",
                changed.join(", ")
            )));
        }
        if dry_run {
            return Ok((paths, Vec::new()));
        }
        let _lock = RepoLock::acquire(&self.state_dir)?;
        // Digests of what the working tree holds (git's conversions applied).
        let digest_in = |commit: Oid, path: &str| -> Result<Option<String>, TxError> {
            self.entry_in(Some(commit), path)
                .map(|(id, _)| worktree::checkout_form(&self.repo, &self.root, path, id).map(|b| journal::digest(&b)))
                .transpose()
        };
        let entries: Vec<Entry> = paths
            .iter()
            .map(|path| {
                Ok(Entry {
                    path: path.clone(),
                    // The file as it is now (checked clean against `from`
                    // above): what git's filters would write for `from` can
                    // differ in bytes that do not count (an expanded $Id$).
                    before: journal::current_digest(&self.root, path)?,
                    after: digest_in(to, path)?,
                    source: self.entry_in(Some(to), path).map(|(id, _)| journal::Source::Blob(id.to_string())),
                    executable: self.executable_in(Some(to), path),
                })
            })
            .collect::<Result<_, TxError>>()?;
        let journal = Journal::new(Some(head.reference.clone()), Some(from), Some(to), true, entries);
        journal.write(&self.state_dir)?;
        self.move_reference(head, to, log)?;
        let recovery = journal.finish(self, None)?;
        Ok((paths, recovery.left))
    }
}
