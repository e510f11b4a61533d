//! libgit2 takes git's own lock files (`index.lock`, `refs/heads/main.lock`)
//! while it writes. A run SIGKILLed at that moment leaves the lock behind,
//! and every later git command (and every later run) refuses to touch the
//! index or the branch. So before each such write the run records the lock's
//! path in its state directory, and removes the record after; recovery,
//! holding the repo lock, removes a recorded lock, which can only be a dead
//! run's. A working-tree-only write of one file records its temp file the
//! same way, since no journal names it.

use std::path::{Path, PathBuf};

use super::{TxError, fault};

const RECORD: &str = "git-lock";

/// Run `write`, which takes the git lock files `locks`, with them recorded
/// (one path a line); `stage` names the moment for fault injection.
pub fn recorded<T>(
    state_dir: &Path,
    stage: &str,
    locks: &[PathBuf],
    write: impl FnOnce() -> Result<T, TxError>,
) -> Result<T, TxError> {
    let record = state_dir.join(RECORD);
    let lines: Vec<String> = locks.iter().map(|l| l.to_string_lossy().into_owned()).collect();
    std::fs::write(&record, lines.join("\n")).map_err(|e| TxError::io(&record, e))?;
    fault::point(stage);
    let result = write()?;
    remove(&record)?;
    Ok(result)
}

/// Whether a run left a record behind (it was killed mid-write).
pub fn any_recorded(state_dir: &Path) -> bool {
    state_dir.join(RECORD).exists()
}

/// Remove the git locks a killed run recorded, if any. The caller holds
/// the repo lock.
pub fn clear_stale(state_dir: &Path) -> Result<(), TxError> {
    let record = state_dir.join(RECORD);
    let locks = match std::fs::read_to_string(&record) {
        Ok(locks) => locks,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(TxError::io(&record, e)),
    };
    for lock in locks.lines() {
        remove(Path::new(lock))?;
    }
    remove(&record)
}

fn remove(path: &Path) -> Result<(), TxError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(TxError::io(path, e)),
        _ => Ok(()),
    }
}
