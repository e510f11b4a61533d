//! The journal that makes a run crash-safe. It is written (and synced)
//! before the branch moves or the first file is replaced, and removed once
//! the working tree and index hold the new state. A run that finds one left
//! behind finishes it first: if the branch moved (or the run had no branch
//! to move), the working-tree update is completed; if not, nothing of the
//! user's was touched yet and the journal is dropped.
//!
//! Working-tree states are compared by content digest (xxh3-128), not by
//! git blob id: the journal only asks "is this file still as before, already
//! as after, or something else?", and SHA-1 with collision detection costs
//! milliseconds per megabyte where xxh3 costs microseconds.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::{GitRepo, TxError, gitlock, remove_if_present, worktree};

const FILE: &str = "journal.json";
/// A finished run's journal, set aside rather than deleted, and deleted
/// when the next journal is written. Deleting a synced file frees its
/// blocks, and on a file system mounted with `discard` that waits for the
/// disk to trim them: behind the writes of the files just replaced, 4-5
/// ms of a 10 MB reply's run (#27). Before the next journal is written
/// nothing is queued yet.
const RETIRED: &str = "journal.retired";
/// Where a working-tree-only run keeps new contents until they are in place.
/// Emptied, not removed, once they are: removing the directory frees its
/// block, as deleting a journal does.
const PENDING: &str = "pending";
/// The journal layout this build writes and reads.
const VERSION: u32 = 2;

/// A content digest, as the journal records it (32 hex digits).
pub fn digest(bytes: &[u8]) -> String {
    digest_text(xxhash_rust::xxh3::xxh3_128(bytes))
}

/// A digest as the journal writes it.
fn digest_text(digest: u128) -> String {
    format!("{digest:032x}")
}

/// The journal digest of the working-tree file at `path`, or `None` if it
/// does not exist ([`digest`] of its bytes, read in chunks).
pub fn current_digest(root: &Path, path: &str) -> Result<Option<String>, TxError> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let found = worktree::digest_of(root, path, |chunk| hasher.update(chunk))?;
    Ok(found.then(|| digest_text(hasher.digest128())))
}

/// Where an entry's new content can be read back from after a crash.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A blob in the object database (runs that commit).
    Blob(String),
    /// A file under the state directory's `pending/` (working-tree-only runs,
    /// which write no objects).
    Pending(String),
}

/// One path the run rewrites in the working tree.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub path: String,
    /// Digest of the content before (absent: the file did not exist).
    pub before: Option<String>,
    /// Digest of the content after (absent: the file is deleted).
    pub after: Option<String>,
    /// Where the content after is kept (absent when deleted).
    pub source: Option<Source>,
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
    /// Names the run's temp files (see `worktree::temp_path`).
    #[serde(default)]
    pub nonce: String,
    pub entries: Vec<Entry>,
}

/// What recovery did.
#[derive(Debug, Default, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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

/// Write `bytes` to `target` through a synced temp file in `dir`.
fn write_synced(dir: &Path, target: &Path, bytes: &[u8]) -> Result<(), TxError> {
    std::fs::create_dir_all(dir).map_err(|e| TxError::io(dir, e))?;
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| TxError::io(dir, e))?;
    std::io::Write::write_all(&mut temp, bytes).map_err(|e| TxError::io(target, e))?;
    temp.as_file().sync_all().map_err(|e| TxError::io(target, e))?;
    temp.persist(target).map_err(|e| TxError::io(target, e.error))?;
    Ok(())
}

/// Keep `content` under the state directory for a working-tree-only run and
/// return its source, named by its index in the run. Not synced: a kill
/// cannot tear it, and recovery checks its digest before using it.
pub fn keep_pending(state_dir: &Path, index: usize, content: &[u8]) -> Result<Source, TxError> {
    let dir = state_dir.join(PENDING);
    std::fs::create_dir_all(&dir).map_err(|e| TxError::io(&dir, e))?;
    let name = format!("{index}");
    let file = dir.join(&name);
    // A new file, never one left behind: a pending copy is linked into the
    // working tree (`worktree::update`), so writing through one that a
    // killed run did not remove would rewrite the user's file.
    remove_if_present(&file)?;
    let mut kept =
        std::fs::OpenOptions::new().write(true).create_new(true).open(&file).map_err(|e| TxError::io(&file, e))?;
    worktree::preallocate(&kept, content.len());
    std::io::Write::write_all(&mut kept, content).map_err(|e| TxError::io(&file, e))?;
    Ok(Source::Pending(name))
}

impl Journal {
    pub fn new(
        reference: Option<String>,
        old: Option<Oid>,
        new: Option<Oid>,
        stage: bool,
        entries: Vec<Entry>,
    ) -> Self {
        Journal {
            version: VERSION,
            reference,
            old_commit: old.map(|c| c.to_string()),
            new_commit: new.map(|c| c.to_string()),
            stage,
            nonce: worktree::new_nonce(),
            entries,
        }
    }

    pub fn write(&self, state_dir: &Path) -> Result<(), TxError> {
        remove_if_present(&state_dir.join(RETIRED))?;
        let json = serde_json::to_vec_pretty(self).expect("journal serializes");
        write_synced(state_dir, &path(state_dir), &json)
    }

    pub fn read(state_dir: &Path) -> Result<Option<Journal>, TxError> {
        let file = path(state_dir);
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(TxError::io(&file, e)),
        };
        #[derive(Deserialize)]
        struct Versioned {
            version: u32,
        }
        let bad = |reason: String| TxError::Journal { path: file.clone(), reason };
        let version = serde_json::from_slice::<Versioned>(&bytes).map_err(|e| bad(e.to_string()))?.version;
        if version != VERSION {
            return Err(bad(format!(
                "it has layout version {version}, this build reads version {VERSION}; finish it with the agent-apply \
                 that wrote it"
            )));
        }
        serde_json::from_slice(&bytes).map(Some).map_err(|e| bad(e.to_string()))
    }

    /// Retire the journal (see [`RETIRED`]), then remove whatever pending
    /// contents it kept: a kept copy is a link to the file now in place.
    pub fn remove(state_dir: &Path) -> Result<(), TxError> {
        let (journal, retired) = (path(state_dir), state_dir.join(RETIRED));
        match std::fs::rename(&journal, &retired) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(TxError::io(&journal, e)),
            _ => {}
        }
        let pending = state_dir.join(PENDING);
        let kept = match std::fs::read_dir(&pending) {
            Ok(kept) => kept,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(TxError::io(&pending, e)),
        };
        for entry in kept {
            let file = entry.map_err(|e| TxError::io(&pending, e))?.path();
            // Only files are kept there; anything else is removed whole.
            match std::fs::symlink_metadata(&file) {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&file).map_err(|e| TxError::io(&file, e))?,
                _ => remove_if_present(&file)?,
            }
        }
        Ok(())
    }

    /// Whether the run this journal describes got as far as moving the branch.
    fn committed(&self, repo: &Repository) -> bool {
        let Some(reference) = &self.reference else { return true };
        let now = repo.refname_to_id(reference).ok().map(|id| id.to_string());
        now.is_some() && now == self.new_commit
    }

    /// Finish (or drop) this journal's run. The caller holds the repo lock.
    /// `fresh` has the new contents by path when the caller is the run that
    /// wrote the journal, so they need not be read back.
    pub fn finish(&self, tx: &GitRepo, fresh: Option<&BTreeMap<String, Option<&str>>>) -> Result<Recovery, TxError> {
        let (repo, root, state_dir) = (&tx.repo, tx.root.as_path(), tx.state_dir.as_path());
        let mut recovery = Recovery::default();
        gitlock::clear_stale(state_dir)?;
        for entry in &self.entries {
            worktree::remove_temp_file(root, &entry.path, &self.nonce)?;
        }
        if !self.committed(repo) {
            recovery.discarded = true;
        } else {
            let mut writes = Vec::new();
            // A path the policy refuses (a journal from an older build could
            // name one) can never be written: leave it, say so, and finish
            // the rest, rather than fail every later run.
            let size = |entry: &Entry| fresh.and_then(|f| f.get(&entry.path)).map_or(0, |c| c.map_or(0, str::len));
            let digests = super::parallel::map(&self.entries, size, |entry| {
                super::check_path(root, &entry.path).ok().map(|_| current_digest(root, &entry.path))
            });
            for (entry, digest) in self.entries.iter().zip(digests) {
                let Some(current) = digest else {
                    recovery.left.push(entry.path.clone());
                    continue;
                };
                let current = current?;
                let write = if current == entry.after {
                    false
                } else if current == entry.before {
                    true
                } else {
                    recovery.left.push(entry.path.clone());
                    continue;
                };
                let content = match fresh.and_then(|f| f.get(&entry.path)) {
                    Some(content) => content.map(|c| Cow::Borrowed(c.as_bytes())),
                    None if write => self.content(repo, root, state_dir, entry)?.map(Cow::Owned),
                    None => None,
                };
                writes.push(worktree::PathUpdate {
                    path: entry.path.clone(),
                    content,
                    deleted: entry.after.is_none(),
                    executable: entry.executable,
                    write,
                    blob: match &entry.source {
                        Some(Source::Blob(hex)) => Oid::from_str(hex).ok(),
                        _ => None,
                    },
                    kept: match &entry.source {
                        Some(Source::Pending(name)) if write => Some(state_dir.join(PENDING).join(name)),
                        _ => None,
                    },
                });
                recovery.completed.push(entry.path.clone());
            }
            worktree::update(tx, &writes, self.stage, &self.nonce)?;
        }
        Journal::remove(state_dir)?;
        Ok(recovery)
    }

    /// An entry's new content, read back from where the run kept it.
    fn content(
        &self,
        repo: &Repository,
        root: &Path,
        state_dir: &Path,
        entry: &Entry,
    ) -> Result<Option<Vec<u8>>, TxError> {
        match &entry.source {
            None => Ok(None),
            Some(Source::Blob(hex)) => {
                let id = Oid::from_str(hex).map_err(|e| TxError::Journal {
                    path: path(state_dir),
                    reason: format!("bad object id {hex:?}: {e}"),
                })?;
                worktree::checkout_form(repo, root, &entry.path, id).map(Some)
            }
            Some(Source::Pending(name)) => {
                let file = state_dir.join(PENDING).join(name);
                let content = std::fs::read(&file).map_err(|e| TxError::io(&file, e))?;
                if entry.after.as_deref() != Some(digest(&content).as_str()) {
                    return Err(TxError::Journal {
                        path: file,
                        reason: format!(
                            "the kept new content of {} is damaged; the file was left as it is",
                            entry.path
                        ),
                    });
                }
                Ok(Some(content))
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A pending copy left by a killed run may be linked to the user's file
    /// (the run links copies into place): keeping a new one replaces the
    /// old name, never writes through it.
    #[test]
    fn keeping_a_pending_copy_never_writes_through_one_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let (state, user) = (dir.path().join("state"), dir.path().join("user.txt"));
        std::fs::create_dir_all(state.join(PENDING)).unwrap();
        std::fs::write(&user, "the user's\n").unwrap();
        std::fs::hard_link(&user, state.join(PENDING).join("0")).unwrap();
        assert_eq!(keep_pending(&state, 0, b"new\n").unwrap(), Source::Pending("0".into()));
        assert_eq!(std::fs::read(&user).unwrap(), b"the user's\n");
        assert_eq!(std::fs::read(state.join(PENDING).join("0")).unwrap(), b"new\n");
    }

    /// A finished journal is set aside and its kept copies removed, the
    /// directory kept (no block freed while the run's writes are queued);
    /// the next journal written deletes the one set aside, and none of it
    /// reads as a journal to finish.
    #[test]
    fn a_finished_journal_is_set_aside_until_the_next_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path();
        let journal = Journal::new(None, None, None, false, Vec::new());
        journal.write(state).unwrap();
        keep_pending(state, 0, b"new\n").unwrap();
        keep_pending(state, 1, b"other\n").unwrap();
        Journal::remove(state).unwrap();
        assert!(!path(state).exists());
        assert!(state.join(RETIRED).exists());
        assert_eq!(std::fs::read_dir(state.join(PENDING)).unwrap().count(), 0, "kept copies removed");
        assert_eq!(Journal::read(state).unwrap(), None);
        journal.write(state).unwrap();
        assert!(!state.join(RETIRED).exists(), "deleted before the next journal");
        assert_eq!(Journal::read(state).unwrap(), Some(journal));
        // Removing twice, or with nothing kept, is no error.
        Journal::remove(state).unwrap();
        Journal::remove(state).unwrap();
    }

    /// A file's digest read in chunks is the digest of its bytes, across
    /// chunk boundaries; an absent file, or one under a file, has none.
    #[test]
    fn a_files_digest_is_the_digest_of_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 1, 64 << 10, (64 << 10) + 1, 300_001] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(dir.path().join("f"), &bytes).unwrap();
            assert_eq!(current_digest(dir.path(), "f").unwrap(), Some(digest(&bytes)), "{len} bytes");
        }
        assert_eq!(current_digest(dir.path(), "absent").unwrap(), None);
        assert_eq!(current_digest(dir.path(), "f/under").unwrap(), None);
    }
}
