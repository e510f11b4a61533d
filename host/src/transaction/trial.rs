//! Checks without a commit: `--check` under `--no-commit` (before the
//! working tree is touched) and `--dry-run` (a "would it pass" answer). The
//! new tree is written as objects only and checked out in the sandbox; no
//! branch, index or working-tree file of the user's changes.

use agent_apply_sdk::types::Change;

use super::{CheckResult, GitRepo, Head, TxError, sandbox};

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
        let tree = self.tree_with(head.commit, &self.blobs_of(head.commit, &flat)?)?;
        let base = match head.commit {
            Some(commit) => commit,
            None => self.empty_commit()?,
        };
        sandbox::run(&self.repo, &self.root, &self.shared_dir, base, tree, None, checks)
    }
}
