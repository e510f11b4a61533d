//! Checks without a commit: `--check` under `--no-commit` (before the
//! working tree is touched) and `--dry-run` (a "would it pass" answer). The
//! new tree is written as objects only, to a scratch repository in the
//! temporary directory (see [`objects`](super::objects)), and checked out
//! there: nothing of the user's repository is written, not even under
//! `.git`.

use agent_apply_sdk::types::Change;

use super::objects::Scratch;
use super::sandbox;
use super::{CheckResult, GitRepo, Head, TxError};

impl GitRepo {
    /// Run `checks` on `head` with `changes` applied, in a scratch repository.
    pub fn trial_checks(
        &self,
        head: &Head,
        planned: &[String],
        changes: &[Change],
        checks: &[String],
    ) -> Result<Vec<CheckResult>, TxError> {
        let flat = self.flatten(changes, planned)?;
        let scratch = Scratch::new(&self.repo)?;
        if let Some(commit) = head.commit {
            scratch.seed(&self.repo, commit, flat.keys().map(String::as_str))?;
        }
        let store = scratch.store();
        let tree = self.tree_with(store, head.commit, &self.blobs_of(store, head.commit, &flat)?)?;
        let base = match head.commit {
            Some(commit) => commit,
            None => self.empty_commit(store)?,
        };
        scratch.link(&self.repo)?;
        sandbox::trial(scratch.work(), base, tree, checks)
    }
}
