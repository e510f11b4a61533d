//! Where a run writes the objects of a new tree. A commit writes into the
//! repository's own database. Checks without a commit (`--check` under
//! `--dry-run` or `--no-commit`) need the tree checked out somewhere too,
//! but must leave the user's `.git` as it was: no object, no entry under
//! `.git/worktrees/`, nothing a filter stores in its git directory (Git
//! LFS's `.git/lfs`). They get a scratch repository in the system's
//! temporary directory, removed when the trial ends:
//!
//! - its objects read the repository's through an alternate (git's
//!   `objects/info/alternates`; Git LFS follows it to `.git/lfs/objects` and
//!   copies what it needs into the scratch repository's own store). The
//!   alternate is linked only once the new objects are written ([`Scratch::link`]):
//!   git and libgit2 "freshen" an object they are asked to write that an
//!   alternate already has, touching the repository's file instead of
//!   writing their own, so the few trees the new tree is built from are
//!   copied in first ([`Scratch::seed`]);
//! - its config includes the repository's, so filters, `core.autocrlf` and
//!   the like convert as they do there, then pins what must stay the
//!   scratch repository's own (its work tree, no sparse checkout);
//! - its refs, `shallow` list and `info/` attributes and excludes are
//!   copies, so checks that run `git describe`, `git log` or `git status`
//!   see what they would see in a worktree of the repository.

use std::path::{Path, PathBuf};

use git2::Repository;

use super::TxError;

/// The object database new objects go to.
#[derive(Clone, Copy)]
pub struct Store<'r> {
    /// The repository handle they are written through.
    pub repo: &'r Repository,
    /// The scratch repository's git directory, for git commands that write
    /// objects or run filters (`GIT_DIR`); `None` for the repository's own.
    pub private: Option<&'r Path>,
}

/// A scratch repository that sees the repository's objects, with a work
/// tree for the checks.
pub struct Scratch {
    _dir: tempfile::TempDir,
    repo: Repository,
    git_dir: PathBuf,
    work: PathBuf,
}

impl Scratch {
    /// A fresh one beside nothing of `repo`'s.
    pub fn new(repo: &Repository) -> Result<Self, TxError> {
        let dir = tempfile::Builder::new()
            .prefix("agent-apply-trial-")
            .tempdir()
            .map_err(|e| TxError::io(&std::env::temp_dir(), e))?;
        let work = dir.path().join("work");
        Repository::init(&work).map_err(TxError::git)?;
        let git_dir = work.join(".git");
        let common = repo.commondir();
        write(&git_dir.join("config"), config(common, &work).as_bytes())?;
        write(&git_dir.join("packed-refs"), packed_refs(repo).as_bytes())?;
        for name in ["shallow", "info/attributes", "info/exclude"] {
            copy_if_there(&common.join(name), &git_dir.join(name))?;
        }
        let repo = Repository::open(&work).map_err(TxError::git)?;
        Ok(Scratch { _dir: dir, repo, git_dir, work })
    }

    /// Copy from `repo` what building a tree on `commit` with `paths`
    /// changed reads: the commit and the trees along each path.
    pub fn seed<'p>(
        &self,
        repo: &Repository,
        commit: git2::Oid,
        paths: impl Iterator<Item = &'p str>,
    ) -> Result<(), TxError> {
        let (theirs, ours) = (repo.odb().map_err(TxError::git)?, self.repo.odb().map_err(TxError::git)?);
        let mut copied = std::collections::HashSet::new();
        let mut copy = |id: git2::Oid| -> Result<(), TxError> {
            if copied.insert(id) {
                let object = theirs.read(id).map_err(TxError::git)?;
                ours.write(object.kind(), object.data()).map_err(TxError::git)?;
            }
            Ok(())
        };
        copy(commit)?;
        let root = repo.find_commit(commit).and_then(|c| c.tree()).map_err(TxError::git)?;
        for path in paths {
            copy(root.id())?;
            let mut tree = root.clone();
            let dirs: Vec<&str> = path.split('/').collect();
            for dir in &dirs[..dirs.len() - 1] {
                let sub = tree.get_name(dir).filter(|e| e.kind() == Some(git2::ObjectType::Tree)).map(|e| e.id());
                let Some(sub) = sub else { break };
                copy(sub)?;
                tree = repo.find_tree(sub).map_err(TxError::git)?;
            }
        }
        Ok(())
    }

    /// Let git commands in the scratch repository read `repo`'s objects,
    /// once the new ones are written.
    pub fn link(&self, repo: &Repository) -> Result<(), TxError> {
        let theirs = repo.commondir().join("objects");
        let theirs = theirs.canonicalize().unwrap_or(theirs);
        write(&self.git_dir.join("objects/info/alternates"), format!("{}\n", theirs.display()).as_bytes())
    }

    pub fn store(&self) -> Store<'_> {
        Store { repo: &self.repo, private: Some(&self.git_dir) }
    }

    /// Where the checks run.
    pub fn work(&self) -> &Path {
        &self.work
    }
}

/// The scratch repository's config: the repository's, included first, then
/// what must not come from it (a `core.worktree` there would point the
/// scratch checkout at the user's files).
fn config(common: &Path, work: &Path) -> String {
    let quoted = |path: &Path| format!("\"{}\"", path.display().to_string().replace('\\', "\\\\").replace('"', "\\\""));
    let theirs = common.join("config");
    let theirs = theirs.canonicalize().unwrap_or(theirs);
    format!(
        "[include]\n\tpath = {}\n[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = {}\n\
         \tsparseCheckout = false\n\tfsmonitor = false\n",
        quoted(&theirs),
        quoted(work)
    )
}

/// Every ref of `repo` that names an object, in `packed-refs` form.
fn packed_refs(repo: &Repository) -> String {
    let mut text = String::new();
    let Ok(refs) = repo.references() else { return text };
    for reference in refs.flatten() {
        if let (Some(name), Some(target)) = (reference.name(), reference.target())
            && name.starts_with("refs/")
        {
            text.push_str(&format!("{target} {name}\n"));
        }
    }
    text
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), TxError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| TxError::io(parent, e))?;
    }
    std::fs::write(path, bytes).map_err(|e| TxError::io(path, e))
}

fn copy_if_there(from: &Path, to: &Path) -> Result<(), TxError> {
    match std::fs::read(from) {
        Ok(bytes) => write(to, &bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(TxError::io(from, e)),
    }
}
