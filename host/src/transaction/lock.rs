//! One applier at a time per repository: `.git/agent-apply/lock`, created
//! exclusively and holding the owner's pid. A lock whose owner is gone (a
//! killed run) is taken over.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::TxError;

/// How long to wait for another applier before giving up with a conflict.
const WAIT: Duration = Duration::from_secs(10);

/// Held while a run moves the branch and updates the working tree.
#[derive(Debug)]
pub struct RepoLock {
    path: PathBuf,
}

impl RepoLock {
    pub fn acquire(state_dir: &Path) -> Result<RepoLock, TxError> {
        std::fs::create_dir_all(state_dir).map_err(|e| TxError::io(state_dir, e))?;
        let path = state_dir.join("lock");
        let started = Instant::now();
        loop {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let _ = write!(file, "{}", std::process::id());
                    return Ok(RepoLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if owner_is_gone(&path) {
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    if started.elapsed() > WAIT {
                        return Err(TxError::Busy { lock: path });
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(TxError::io(&path, e)),
            }
        }
    }
}

impl Drop for RepoLock {
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
