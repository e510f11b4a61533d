//! Checks and the pre-commit hook run in a sandbox worktree under
//! `.git/agent-apply/sandbox`, never in the user's working tree. The sandbox
//! is created on first need and then moved with `checkout` + `read-tree -m`,
//! which rewrite only the files that differ.
//!
//! One run at a time uses it, under `sandbox.lock`. Every process started
//! here dies with the run (on Linux), checks with every process they started
//! ([`process_tree`]), so a killed run leaves no check running and no git
//! command writing into `.git/worktrees/` behind it; what the killed command left
//! half-written, the next taker of the lock (or `recover`) removes, and the
//! sandbox is made again.
//!
//! Checks without a commit run in a scratch repository instead ([`trial`]),
//! so that a dry run leaves nothing under the user's `.git`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use git2::{Oid, Repository};
use serde::Serialize;

use super::TxError;
use super::lock::{self, PidLock};
use super::process_tree::{self, dies_with_run};

const LOCK: &str = "sandbox.lock";

/// How long a run waits for another run's checks to finish.
const WAIT: Duration = Duration::from_secs(600);

/// How much of a failing check's output the report keeps.
const TAIL_LINES: usize = 40;

/// One check's result.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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

/// Whether a killed run left the sandbox half-made or half-moved.
pub fn interrupted(state_dir: &Path) -> bool {
    lock::left_by_dead_run(state_dir, LOCK)
}

/// Remove a sandbox a killed run left behind, if any: its directory and its
/// administrative directory under `.git/worktrees/`. The next run with checks
/// makes a fresh one.
pub fn repair(repo: &Repository, state_dir: &Path) -> Result<(), TxError> {
    if !interrupted(state_dir) {
        return Ok(());
    }
    // Not waiting: a live run that took the lock over first repairs the
    // sandbox itself, and the caller holds the repo lock that run will want.
    match PidLock::acquire(state_dir, LOCK, Duration::ZERO) {
        Ok((_lock, _)) => remove_sandbox(repo, state_dir),
        Err(TxError::Busy { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}

fn remove_sandbox(repo: &Repository, state_dir: &Path) -> Result<(), TxError> {
    let sandbox = state_dir.join("sandbox");
    let ours = [sandbox.join(".git"), sandbox.canonicalize().unwrap_or_else(|_| sandbox.clone()).join(".git")];
    let admin_dirs = repo.commondir().join("worktrees");
    if let Ok(entries) = std::fs::read_dir(&admin_dirs) {
        for entry in entries.flatten() {
            // `git worktree add` names the admin dir after the path's last
            // component (`sandbox`, `sandbox1`, ...) and writes `gitdir`
            // early; one killed before that has no `gitdir` at all.
            let gitdir = std::fs::read_to_string(entry.path().join("gitdir")).ok();
            let is_ours = match gitdir {
                Some(gitdir) => ours.iter().any(|ours| Path::new(gitdir.trim()) == ours),
                None => entry.file_name().to_string_lossy().starts_with("sandbox"),
            };
            if is_ours {
                remove_dir(&entry.path())?;
            }
        }
    }
    remove_dir(&sandbox)
}

fn remove_dir(path: &Path) -> Result<(), TxError> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(TxError::io(path, e)),
        _ => Ok(()),
    }
}

/// Run git in `dir`.
fn git(dir: &Path, args: &[&str]) -> Result<(), TxError> {
    let mut command = Command::new("git");
    let output = dies_with_run(&mut command)
        .arg("-C")
        .arg(dir)
        // The sandbox is ours: the user's checkout hooks do not run in it.
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_OBJECT_DIRECTORY")
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

/// What the sandbox checks: `tree` staged on top of the commit `base`.
pub struct Target {
    pub base: Oid,
    pub tree: Oid,
}

/// Put the target's tree staged on top of its base in the sandbox, then run
/// the hook and the checks there. Stops at the first failure.
pub fn run(
    repo: &Repository,
    root: &Path,
    state_dir: &Path,
    target: Target,
    hook: Option<&Path>,
    checks: &[String],
) -> Result<Vec<CheckResult>, TxError> {
    let (_lock, took_over) = PidLock::acquire(state_dir, LOCK, WAIT)?;
    if took_over {
        remove_sandbox(repo, state_dir)?;
    }
    let sandbox = state_dir.join("sandbox");
    if !sandbox.join(".git").exists() {
        let _ = git(root, &["worktree", "prune"]);
        let path = sandbox.to_string_lossy().into_owned();
        git(root, &["worktree", "add", "--detach", "--force", "--no-checkout", &path, &target.base.to_string()])?;
    }
    check_out(&sandbox, &target)?;
    run_steps(&sandbox, hook, checks)
}

/// Run `checks` on `tree` staged on top of `base` in `work`, the work tree
/// of a scratch repository that holds both (a trial without a commit): no
/// lock, since no other run sees it, and nothing to restore, since it goes
/// when the trial ends.
pub fn trial(work: &Path, base: Oid, tree: Oid, checks: &[String]) -> Result<Vec<CheckResult>, TxError> {
    check_out(work, &Target { base, tree })?;
    run_steps(work, None, checks)
}

/// Put the target in a work tree that exists.
fn check_out(sandbox: &Path, target: &Target) -> Result<(), TxError> {
    let (base, tree) = (target.base.to_string(), target.tree.to_string());
    git(sandbox, &["checkout", "--detach", "--force", "--quiet", &base])?;
    git(sandbox, &["read-tree", "-u", "-m", &base, &tree])
}

/// Run the hook and the checks in `sandbox`; stops at the first failure.
fn run_steps(sandbox: &Path, hook: Option<&Path>, checks: &[String]) -> Result<Vec<CheckResult>, TxError> {
    let mut results = Vec::new();
    let mut steps: Vec<(String, Command)> = Vec::new();
    if let Some(hook) = hook {
        steps.push(("pre-commit hook".into(), process_tree::program_command(hook)));
    }
    for check in checks {
        steps.push((check.clone(), process_tree::check_command(check)));
    }
    for (name, mut command) in steps {
        let started = Instant::now();
        let status = crate::progress::Status::start(format!("running {name}"));
        let output = command
            .current_dir(sandbox)
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_OBJECT_DIRECTORY")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| TxError::Sandbox(format!("cannot run {name}: {e}")))?;
        drop(status);
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
