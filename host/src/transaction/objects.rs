//! Where a run writes the objects of a new tree. A commit writes into the
//! repository's own database. Checks without a commit (`--check` under
//! `--dry-run` or `--no-commit`) need the tree's blobs and trees too, to
//! check it out in the sandbox, but must leave nothing behind in the
//! user's repository: those go to a private object directory in the
//! system's temporary directory, which reads the repository's objects
//! through an alternate (git's `objects/info/alternates`), and which every
//! git command of the trial is pointed at (`GIT_OBJECT_DIRECTORY`). It is
//! removed when the trial ends.

use std::path::{Path, PathBuf};

use git2::Repository;

use super::TxError;

/// The object database new objects go to.
#[derive(Clone, Copy)]
pub struct Store<'r> {
    /// The repository handle they are written through.
    pub repo: &'r Repository,
    /// A private object directory, for git commands to write and read in
    /// (`GIT_OBJECT_DIRECTORY`); `None` for the repository's own.
    pub private: Option<&'r Path>,
}

/// A private object directory that sees the repository's objects.
pub struct PrivateObjects {
    _dir: tempfile::TempDir,
    repo: Repository,
    objects: PathBuf,
}

impl PrivateObjects {
    /// A fresh one beside nothing of `repo`'s: a bare repository in the
    /// temporary directory whose alternate is `repo`'s object database.
    pub fn new(repo: &Repository) -> Result<Self, TxError> {
        let dir = tempfile::Builder::new()
            .prefix("agent-apply-objects-")
            .tempdir()
            .map_err(|e| TxError::io(&std::env::temp_dir(), e))?;
        Repository::init_bare(dir.path()).map_err(TxError::git)?;
        let theirs = repo.commondir().join("objects");
        let theirs = theirs.canonicalize().unwrap_or(theirs);
        let objects = dir.path().join("objects");
        let alternates = objects.join("info").join("alternates");
        std::fs::create_dir_all(objects.join("info")).map_err(|e| TxError::io(&alternates, e))?;
        std::fs::write(&alternates, format!("{}\n", theirs.display())).map_err(|e| TxError::io(&alternates, e))?;
        // Opened after the alternate is in place, so its database reads it.
        let repo = Repository::open_bare(dir.path()).map_err(TxError::git)?;
        Ok(PrivateObjects { _dir: dir, repo, objects })
    }

    pub fn store(&self) -> Store<'_> {
        Store { repo: &self.repo, private: Some(&self.objects) }
    }
}
