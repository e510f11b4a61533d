//! Checks and the pre-commit hook run in a sandbox worktree under
//! `.git/agent-apply/sandbox`, never in the user's working tree. The sandbox
//! is created on first need and then moved with `checkout` + `read-tree -m`,
//! which rewrite only the files that differ.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use git2::{Oid, Repository};
use serde::Serialize;

use super::TxError;

/// How much of a failing check's output the report keeps.
const TAIL_LINES: usize = 40;

/// One check's result.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    pub name: String,
    pub passed: bool,
    pub exit_code: Option<i32>,
    /// The last lines of its output (stdout and stderr).
    pub output: String,
    pub millis: u128,
}

/// The repo's pre-commit hook (respecting `core.hooksPath`), if it exists.
pub fn pre_commit_hook(repo: &Repository, root: &Path) -> Option<PathBuf> {
    let hooks = repo
        .config()
        .ok()
        .and_then(|c| c.get_path("core.hooksPath").ok())
        .map(|p| if p.is_absolute() { p } else { root.join(p) })
        .unwrap_or_else(|| repo.commondir().join("hooks"));
    let hook = hooks.join("pre-commit");
    is_executable(&hook).then_some(hook)
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

fn git(dir: &Path, args: &[&str]) -> Result<(), TxError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .output()
        .map_err(|e| TxError::Sandbox(format!("cannot run git: {e}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(TxError::Sandbox(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

/// Put `new_tree` staged on top of `base` in the sandbox, then run the hook
/// and the checks there. Stops at the first failure.
pub fn run(
    root: &Path,
    state_dir: &Path,
    base: Oid,
    new_tree: Oid,
    hook: Option<&Path>,
    checks: &[String],
) -> Result<Vec<CheckResult>, TxError> {
    let sandbox = state_dir.join("sandbox");
    if !sandbox.join(".git").exists() {
        let _ = git(root, &["worktree", "prune"]);
        let path = sandbox.to_string_lossy().into_owned();
        git(root, &["worktree", "add", "--detach", "--force", "--no-checkout", &path, &base.to_string()])?;
    }
    git(&sandbox, &["checkout", "--detach", "--force", "--quiet", &base.to_string()])?;
    git(&sandbox, &["read-tree", "-u", "-m", &base.to_string(), &new_tree.to_string()])?;

    let mut results = Vec::new();
    let mut steps: Vec<(String, Command)> = Vec::new();
    if let Some(hook) = hook {
        steps.push(("pre-commit hook".into(), Command::new(hook)));
    }
    for check in checks {
        let mut command = Command::new("sh");
        command.arg("-c").arg(check);
        steps.push((check.clone(), command));
    }
    for (name, mut command) in steps {
        let started = Instant::now();
        let output = command
            .current_dir(&sandbox)
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_WORK_TREE")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| TxError::Sandbox(format!("cannot run {name}: {e}")))?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text += &String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
        let passed = output.status.success();
        results.push(CheckResult {
            name,
            passed,
            exit_code: output.status.code(),
            output: tail,
            millis: started.elapsed().as_millis(),
        });
        if !passed {
            break;
        }
    }
    Ok(results)
}
