//! libgit2 takes git's own lock files (`index.lock`, `refs/heads/main.lock`)
//! while it writes. A run SIGKILLed at that moment leaves the lock behind,
//! and every later git command (and every later run) refuses to touch the
//! index or the branch. So before each such write the run records the lock's
//! path in its state directory, and removes the record after, whether the
//! write succeeded or failed: only a killed run leaves a record. Recovery,
//! holding the repo lock (so the recording run is dead), removes a recorded
//! lock only if that run can have made it: it did not exist when the record
//! was written (a lock already there is refused before recording) and it is
//! no older than the record. A lock another git process holds is never
//! removed. A working-tree-only write of one file records its temp file the
//! same way, since no journal names it. The record is kept in the repo lock
//! the run holds (see lock.rs), in a file of its own only where it holds
//! none; a dead run's lock that carries one becomes that file.

use std::path::{Path, PathBuf};

use super::{TxError, fault, lock, remove_if_present};

/// The record file's name in the state directory.
pub(super) const RECORD: &str = "git-lock";

/// Run `write`, which takes the git lock files `locks`, with them recorded
/// (one path a line); `stage` names the moment for fault injection.
pub fn recorded<T>(
    state_dir: &Path,
    stage: fault::Stage,
    locks: &[PathBuf],
    write: impl FnOnce() -> Result<T, TxError>,
) -> Result<T, TxError> {
    wait_until_free(locks)?;
    let record = state_dir.join(RECORD);
    let lines: Vec<String> = locks.iter().map(|l| l.to_string_lossy().into_owned()).collect();
    let lines = lines.join("\n");
    let lock_error = |e| TxError::io(&state_dir.join(lock::REPO_LOCK), e);
    let in_lock = lock::record(state_dir, &lines).map_err(lock_error)?;
    if !in_lock {
        std::fs::write(&record, &lines).map_err(|e| TxError::io(&record, e))?;
    }
    fault::point(stage);
    let result = write();
    if in_lock {
        lock::record(state_dir, "").map_err(lock_error)?;
    } else {
        remove_if_present(&record)?;
    }
    result
}

/// Wait a moment for `locks` to be free: git holds them for milliseconds
/// (another applier finishing its index write, a `git status` refreshing
/// it). One still there after that is held, and an error.
pub fn wait_until_free(locks: &[PathBuf]) -> Result<(), TxError> {
    const PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);
    let started = std::time::Instant::now();
    loop {
        match locks.iter().find(|lock| lock.symlink_metadata().is_ok()) {
            None => return Ok(()),
            Some(lock) if started.elapsed() > PATIENCE => return Err(TxError::Locked { lock: lock.clone() }),
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
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
    let recorded_at = record.metadata().and_then(|m| m.modified()).map_err(|e| TxError::io(&record, e))?;
    // Only paths: a record moved from a dead run's lock starts with its owner.
    for lock in locks.lines().map(Path::new).filter(|line| line.is_absolute()) {
        let made_by_the_run = lock
            .symlink_metadata()
            .is_ok_and(|meta| meta.is_file() && meta.modified().is_ok_and(|at| at >= recorded_at));
        if made_by_the_run {
            remove_if_present(lock)?;
        }
    }
    remove_if_present(&record)
}
