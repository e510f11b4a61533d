//! Checks without a commit: `--check` under `--no-commit` (before the
//! working tree is touched) and `--dry-run` (a "would it pass" answer). The
//! new tree is written as objects only and checked out in the sandbox; no
//! branch, index or working-tree file of the user's changes.

use std::collections::BTreeMap;

use agent_apply_sdk::types::Change;
use git2::Oid;

use super::{CheckResult, GitRepo, Head, TxError, sandbox};

impl GitRepo {
    /// The blobs of `flat` (path → new content, `None` deleted), with the
    /// executable bit each path has at `head`.
    pub(super) fn blobs_of(
        &self,
        head: Option<Oid>,
        flat: &BTreeMap<String, Option<&str>>,
    ) -> Result<BTreeMap<String, Option<(Oid, bool)>>, TxError> {
        let mut blobs = BTreeMap::new();
        for (path, content) in flat {
            let entry = match content {
                Some(content) => {
                    Some((self.repo.blob(content.as_bytes()).map_err(TxError::git)?, self.executable_in(head, path)))
                }
                None => None,
            };
            blobs.insert(path.clone(), entry);
        }
        Ok(blobs)
    }

    /// Run `checks` in the sandbox on `head` with `changes` applied.
    pub fn trial_checks(
        &self,
        head: &Head,
        planned: &[String],
        changes: &[Change],
        checks: &[String],
    ) -> Result<Vec<CheckResult>, TxError> {
        let base = head.commit.ok_or_else(|| TxError::Refused("checks need a first commit to run against".into()))?;
        let flat = Self::flatten(changes, planned)?;
        let tree = self.tree_with(Some(base), &self.blobs_of(head.commit, &flat)?)?;
        sandbox::run(&self.repo, &self.root, &self.state_dir, base, tree, None, checks)
    }
}
