//! Pid locks under `.git/agent-apply/`: a file created exclusively and
//! holding the owner's pid. A lock whose owner is gone (a killed run) is
//! taken over, and the taker is told so it can repair what the dead run left.
//! `lock` keeps one applier at a time in the working tree and on the branch;
//! `sandbox.lock` keeps one run at a time in the checks' sandbox.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::TxError;

/// How long to wait for another applier before giving up with a conflict.
const WAIT: Duration = Duration::from_secs(10);

/// Held while a run moves the branch and updates the working tree.
#[derive(Debug)]
pub struct RepoLock {
    _held: PidLock,
}

/// The repo lock's file name in the state directory.
pub const REPO_LOCK: &str = "lock";

impl RepoLock {
    pub fn acquire(state_dir: &Path) -> Result<RepoLock, TxError> {
        PidLock::acquire(state_dir, REPO_LOCK, WAIT).map(|(held, _)| RepoLock { _held: held })
    }
}

/// An exclusive pid lock file.
#[derive(Debug)]
pub struct PidLock {
    path: PathBuf,
}

impl PidLock {
    /// Take `state_dir/name`, waiting up to `wait` for a live owner. The
    /// flag says whether a dead owner's lock was taken over.
    pub fn acquire(state_dir: &Path, name: &str, wait: Duration) -> Result<(PidLock, bool), TxError> {
        std::fs::create_dir_all(state_dir).map_err(|e| TxError::io(state_dir, e))?;
        let path = state_dir.join(name);
        let started = Instant::now();
        let mut took_over = false;
        loop {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let _ = write!(file, "{}", owner_record(std::process::id()));
                    return Ok((PidLock { path }, took_over));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if owner_is_gone(&path) {
                        let _ = std::fs::remove_file(&path);
                        took_over = true;
                        continue;
                    }
                    if started.elapsed() > wait {
                        return Err(TxError::Busy { lock: path });
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(TxError::io(&path, e)),
            }
        }
    }
}

/// Whether `state_dir/name` is held by a process that no longer runs.
pub fn left_by_dead_run(state_dir: &Path, name: &str) -> bool {
    let path = state_dir.join(name);
    path.exists() && owner_is_gone(&path)
}

impl Drop for PidLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What a lock file holds: the owner's pid and, where the system says, when
/// that process started, so that a later process given the same pid is not
/// taken for the owner.
fn owner_record(pid: u32) -> String {
    match process_start(pid) {
        Some(start) => format!("{pid} {start}"),
        None => pid.to_string(),
    }
}

/// Whether the owner recorded in the lock file no longer runs: no such
/// process, a zombie, or another process that reused the pid. An
/// unreadable or empty lock (its owner was killed while writing it) counts
/// as gone once it is a second old.
fn owner_is_gone(path: &Path) -> bool {
    let record = std::fs::read_to_string(path).unwrap_or_default();
    let mut fields = record.split_whitespace();
    match fields.next().and_then(|pid| pid.parse::<u32>().ok()) {
        Some(pid) => {
            let recorded_start = fields.next().and_then(|start| start.parse::<u64>().ok());
            !process_exists(pid) || recorded_start.is_some_and(|start| process_start(pid) != Some(start))
        }
        None => std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().unwrap_or_default() > Duration::from_secs(1)),
    }
}

/// The fields of `/proc/PID/stat` after the command name (which may hold
/// spaces and parentheses): the process state first.
#[cfg(target_os = "linux")]
fn proc_stat(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat.rsplit_once(')')?.1.split_whitespace().map(str::to_string).collect())
}

/// A running (not zombie) process with this pid exists.
#[cfg(target_os = "linux")]
fn process_exists(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|fields| fields.first().is_some_and(|state| state != "Z" && state != "X"))
}

/// When the process started, in clock ticks since boot (`stat` field 22).
#[cfg(target_os = "linux")]
fn process_start(pid: u32) -> Option<u64> {
    proc_stat(pid)?.get(19)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
fn process_exists(_pid: u32) -> bool {
    true
}

#[cfg(not(target_os = "linux"))]
fn process_start(_pid: u32) -> Option<u64> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn lock_holding(record: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        std::fs::write(&path, record).unwrap();
        (dir, path)
    }

    #[test]
    fn a_live_owner_holds_its_lock() {
        let (_dir, path) = lock_holding(&owner_record(std::process::id()));
        assert!(!owner_is_gone(&path));
        let (_dir, path) = lock_holding(&std::process::id().to_string());
        assert!(!owner_is_gone(&path), "a record without a start time still counts");
    }

    #[test]
    fn a_reused_pid_is_not_the_owner() {
        let start = process_start(std::process::id()).expect("linux reports start times");
        let (_dir, path) = lock_holding(&format!("{} {}", std::process::id(), start + 1));
        assert!(owner_is_gone(&path));
    }

    #[test]
    fn an_exited_or_zombie_owner_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Exited but not yet waited for: a zombie.
        let started = Instant::now();
        while proc_stat(pid).is_some_and(|fields| fields[0] != "Z") && started.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let (_dir, path) = lock_holding(&pid.to_string());
        assert!(owner_is_gone(&path));
        child.wait().unwrap();
        assert!(owner_is_gone(&path));
    }
}
