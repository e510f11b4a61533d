//! Checks without a commit: `--check` under `--no-commit` (before the
//! working tree is touched) and `--dry-run` (a "would it pass" answer). The
//! new tree is written as objects only, to a private object directory (see
//! [`objects`](super::objects)), and checked out in the sandbox: no object,
//! branch, index or working-tree file of the user's changes.

use agent_apply_sdk::types::Change;

use super::objects::PrivateObjects;
use super::sandbox::{self, Target};
use super::{CheckResult, GitRepo, Head, TxError};

impl GitRepo {
    /// Run `checks` in the sandbox on `head` with `changes` applied.
    pub fn trial_checks(
        &self,
        head: &Head,
        planned: &[String],
        changes: &[Change],
        checks: &[String],
    ) -> Result<Vec<CheckResult>, TxError> {
        let flat = self.flatten(changes, planned)?;
        let private = PrivateObjects::new(&self.repo)?;
        let store = private.store();
        let tree = self.tree_with(store, head.commit, &self.blobs_of(store, head.commit, &flat)?)?;
        let base = match head.commit {
            Some(commit) => commit,
            None => self.empty_commit(store)?,
        };
        let target = Target { base, tree, objects: store.private };
        sandbox::run(&self.repo, &self.root, &self.shared_dir, target, None, checks)
    }
}
