//! The journal that makes a run crash-safe. It is written (and synced)
//! before the branch moves, and removed once the working tree and index
//! hold the new state. A run that finds one left behind finishes it first:
//! if the branch moved, the working-tree update is completed; if not,
//! nothing of the user's was touched yet and the journal is dropped.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::{TxError, gitlock, worktree};

const FILE: &str = "journal.json";

/// One path the run rewrites in the working tree.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub path: String,
    /// Blob of the content before (absent: the file did not exist).
    pub before: Option<String>,
    /// Blob of the content after (absent: the file is deleted).
    pub after: Option<String>,
    pub executable: bool,
}

/// An interrupted run's intent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Journal {
    pub version: u32,
    /// The reference the run moves (`refs/heads/main`, or `HEAD` when
    /// detached); `None` for a working-tree-only run.
    pub reference: Option<String>,
    pub old_commit: Option<String>,
    pub new_commit: Option<String>,
    /// Whether the index follows the working tree for these paths.
    pub stage: bool,
    pub entries: Vec<Entry>,
}

/// What recovery did.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Recovery {
    /// Paths brought to the new state.
    pub completed: Vec<String>,
    /// Paths left alone because someone changed them after the crash.
    pub left: Vec<String>,
    /// The run had not moved the branch: nothing to finish.
    pub discarded: bool,
}

pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(FILE)
}

impl Journal {
    pub fn write(&self, state_dir: &Path) -> Result<(), TxError> {
        std::fs::create_dir_all(state_dir).map_err(|e| TxError::io(state_dir, e))?;
        let target = path(state_dir);
        let json = serde_json::to_vec_pretty(self).expect("journal serializes");
        let mut temp = tempfile::NamedTempFile::new_in(state_dir).map_err(|e| TxError::io(state_dir, e))?;
        std::io::Write::write_all(&mut temp, &json).map_err(|e| TxError::io(&target, e))?;
        temp.as_file().sync_all().map_err(|e| TxError::io(&target, e))?;
        temp.persist(&target).map_err(|e| TxError::io(&target, e.error))?;
        Ok(())
    }

    pub fn read(state_dir: &Path) -> Result<Option<Journal>, TxError> {
        let file = path(state_dir);
        match std::fs::read(&file) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| TxError::Journal { path: file, reason: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(TxError::io(&file, e)),
        }
    }

    pub fn remove(state_dir: &Path) -> Result<(), TxError> {
        let file = path(state_dir);
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(TxError::io(&file, e)),
            _ => Ok(()),
        }
    }

    /// Whether the run this journal describes got as far as moving the branch.
    fn committed(&self, repo: &Repository) -> bool {
        let Some(reference) = &self.reference else { return true };
        let now = repo.refname_to_id(reference).ok().map(|id| id.to_string());
        now.is_some() && now == self.new_commit
    }

    /// Finish (or drop) this journal's run. The caller holds the repo lock.
    pub fn finish(&self, repo: &Repository, root: &Path, state_dir: &Path) -> Result<Recovery, TxError> {
        let mut recovery = Recovery::default();
        gitlock::clear_stale(state_dir)?;
        for entry in &self.entries {
            worktree::remove_temp_file(root, &entry.path)?;
        }
        if !self.committed(repo) {
            recovery.discarded = true;
        } else {
            let mut plan = Vec::new();
            for entry in &self.entries {
                let current = worktree::current_blob(root, &entry.path)?;
                let after = entry.after.as_deref().map(parse_oid).transpose()?;
                let before = entry.before.as_deref().map(parse_oid).transpose()?;
                if current == after {
                    plan.push((entry, after, true));
                } else if current == before {
                    plan.push((entry, after, false));
                } else {
                    recovery.left.push(entry.path.clone());
                }
            }
            let writes: Vec<worktree::PathUpdate> = plan
                .iter()
                .map(|(entry, after, done)| worktree::PathUpdate {
                    path: entry.path.clone(),
                    blob: *after,
                    executable: entry.executable,
                    write: !done,
                })
                .collect();
            worktree::update(repo, root, state_dir, &writes, self.stage)?;
            recovery.completed = plan.iter().map(|(e, _, _)| e.path.clone()).collect();
        }
        Journal::remove(state_dir)?;
        Ok(recovery)
    }
}

fn parse_oid(hex: &str) -> Result<Oid, TxError> {
    Oid::from_str(hex).map_err(|e| TxError::Git(format!("bad object id {hex:?} in the journal: {e}")))
}
