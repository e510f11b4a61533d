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

impl RepoLock {
    pub fn acquire(state_dir: &Path) -> Result<RepoLock, TxError> {
        PidLock::acquire(state_dir, "lock", WAIT).map(|(held, _)| RepoLock { _held: held })
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
                    let _ = write!(file, "{}", std::process::id());
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

/// Whether the pid in the lock file no longer runs. An unreadable or empty
/// lock (its owner was killed while writing it) counts as gone once it is a
/// second old.
fn owner_is_gone(path: &Path) -> bool {
    match std::fs::read_to_string(path).ok().and_then(|s| s.trim().parse::<u32>().ok()) {
        Some(pid) => !process_exists(pid),
        None => std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().unwrap_or_default() > Duration::from_secs(1)),
    }
}

#[cfg(target_os = "linux")]
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(not(target_os = "linux"))]
fn process_exists(_pid: u32) -> bool {
    true
}
