//! Locks under `.git/agent-apply/`. `lock` keeps one applier at a time in
//! the working tree and on the branch; `sandbox.lock` keeps one run at a time
//! in the checks' sandbox. Each holds its owner's pid while held, and a lock
//! whose owner is gone (a killed run) is taken over: the taker repairs what
//! the dead run left.
//!
//! The sandbox lock is a file created exclusively and removed after. The
//! repo lock, taken by every run, is a file kept between runs, held with
//! `flock` and empty when free, and carries after its owner line the paths of
//! the git locks and temp files its holder is writing (`gitlock::recorded`);
//! taking over a dead lock that carries some moves them to the record file
//! recovery reads. Why: every file a run creates is an inode allocated and
//! freed, 0.15 ms or more each on the bench's journal-less ext4, which
//! searches past every inode freed in the last minutes; a run created three
//! where `git apply` creates one (#27). An older binary, which knows only
//! the exclusive file, takes a free (empty) repo lock for a dead run's once
//! it is a second old, and a holder of this kind waits for a holder of that
//! kind (it does not `flock`, but its owner line is there).

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::TxError;

/// How long to wait for another applier before giving up with a conflict.
const WAIT: Duration = Duration::from_secs(10);

/// The repo lock's file name in the state directory.
pub const REPO_LOCK: &str = "lock";

/// Held while a run moves the branch and updates the working tree.
#[derive(Debug)]
pub struct RepoLock {
    path: PathBuf,
    file: File,
}

/// The repo locks this process holds: each one's path, its open file and
/// the length of its owner line, for [`record`] to write after.
static HELD: Mutex<Vec<(PathBuf, File, u64)>> = Mutex::new(Vec::new());

impl RepoLock {
    /// Take `state_dir/lock`, waiting up to [`WAIT`] for a live owner.
    pub fn acquire(state_dir: &Path) -> Result<RepoLock, TxError> {
        std::fs::create_dir_all(state_dir).map_err(|e| TxError::io(state_dir, e))?;
        let path = state_dir.join(REPO_LOCK);
        let started = Instant::now();
        loop {
            if let Some(lock) = Self::try_take(state_dir, &path).map_err(|e| TxError::io(&path, e))? {
                return Ok(lock);
            }
            if started.elapsed() > WAIT {
                return Err(TxError::Busy { lock: path });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The lock, if it is free or its owner is gone; `None` while another
    /// process holds it (or it was just moved: try again).
    fn try_take(state_dir: &Path, path: &Path) -> std::io::Result<Option<RepoLock>> {
        let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        // SAFETY: `flock` on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let error = std::io::Error::last_os_error();
            return if error.kind() == std::io::ErrorKind::WouldBlock { Ok(None) } else { Err(error) };
        }
        // Locked, but perhaps no longer the file at `path` (a taker moved a
        // dead run's away, or an older binary removed it).
        let (opened, there) = (file.metadata()?, std::fs::metadata(path));
        if !there.is_ok_and(|there| there.ino() == opened.ino() && there.dev() == opened.dev()) {
            return Ok(None);
        }
        let mut content = String::new();
        let _ = file.read_to_string(&mut content);
        if !content.is_empty() && !owner_gone(&content, path) {
            // An older binary's live run: it does not `flock`.
            return Ok(None);
        }
        if let Some((_, records)) = content.split_once('\n') {
            retire(state_dir, path, records);
            return Ok(None);
        }
        let owner = owner_record(std::process::id());
        file.set_len(0)?;
        file.write_all_at(owner.as_bytes(), 0)?;
        let registered = file.try_clone()?;
        HELD.lock().unwrap_or_else(|e| e.into_inner()).push((path.to_path_buf(), registered, owner.len() as u64));
        Ok(Some(RepoLock { path: path.to_path_buf(), file }))
    }

    /// Whether a run that no longer runs left the repo lock in `state_dir`
    /// held (a free one is empty).
    pub fn left_by_dead_run(state_dir: &Path) -> bool {
        let path = state_dir.join(REPO_LOCK);
        path.metadata().is_ok_and(|meta| meta.len() > 0) && owner_is_gone(&path)
    }
}

impl Drop for RepoLock {
    fn drop(&mut self) {
        HELD.lock().unwrap_or_else(|e| e.into_inner()).retain(|(path, ..)| *path != self.path);
        // Free again; closing the file (below) releases the `flock`.
        let _ = self.file.set_len(0);
    }
}

/// Write `lines` after the owner line of the repo lock this process holds in
/// `state_dir` (replacing what was there), or, with `lines` empty, leave the
/// owner line alone. False when this process holds no such lock.
pub fn record(state_dir: &Path, lines: &str) -> std::io::Result<bool> {
    let path = state_dir.join(REPO_LOCK);
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let Some((_, file, owner_len)) = held.iter().find(|(held, ..)| *held == path) else { return Ok(false) };
    file.set_len(*owner_len)?;
    if !lines.is_empty() {
        file.write_all_at(format!("\n{lines}").as_bytes(), *owner_len)?;
    }
    Ok(true)
}

/// Moves a dead run's records out of its repo lock: the lock becomes the
/// record file recovery reads, renamed so that its time (which recovery
/// compares git locks against) is kept; the next try makes a new lock.
/// Where a record file is already there (a second run killed before
/// recovering), the lines are added to it and the lock is emptied: the
/// record's time is then the append's, and recovery leaves a git lock older
/// than that, the safe side.
fn retire(state_dir: &Path, path: &Path, records: &str) {
    let record = state_dir.join(super::gitlock::RECORD);
    if !record.exists() {
        let _ = std::fs::rename(path, &record);
        return;
    }
    if let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(&record) {
        let _ = write!(file, "\n{records}");
    }
    let _ = std::fs::OpenOptions::new().write(true).open(path).and_then(|file| file.set_len(0));
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
    owner_gone(&std::fs::read_to_string(path).unwrap_or_default(), path)
}

/// [`owner_is_gone`] for the lock at `path`, whose content is `record`.
fn owner_gone(record: &str, path: &Path) -> bool {
    let mut fields = record.lines().next().unwrap_or_default().split_whitespace();
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
    fn the_repo_lock_is_kept_between_runs_and_carries_records() {
        let dir = tempfile::tempdir().unwrap();
        let (state, owner) = (dir.path(), owner_record(std::process::id()));
        let path = state.join(REPO_LOCK);
        let read = |name: &str| std::fs::read_to_string(state.join(name)).ok();
        let held = RepoLock::acquire(state).unwrap();
        assert!(RepoLock::try_take(state, &path).unwrap().is_none(), "held: no second holder");
        assert!(record(state, "/repo/.git/index.lock\n/repo/x.tmp").unwrap());
        assert_eq!(read(REPO_LOCK).unwrap(), format!("{owner}\n/repo/.git/index.lock\n/repo/x.tmp"));
        assert!(record(state, "").unwrap());
        assert_eq!(read(REPO_LOCK).unwrap(), owner);
        let inode = path.metadata().unwrap().ino();
        drop(held);
        assert_eq!(read(REPO_LOCK).as_deref(), Some(""), "free: kept, empty");
        assert!(!record(state, "/repo/y.tmp").unwrap(), "no lock held: nothing written");
        assert!(!RepoLock::left_by_dead_run(state));
        drop(RepoLock::acquire(state).unwrap());
        assert_eq!(path.metadata().unwrap().ino(), inode, "the same file, run after run");

        // An older binary's live holder (no flock, its owner line there).
        std::fs::write(&path, &owner).unwrap();
        assert!(RepoLock::try_take(state, &path).unwrap().is_none());
    }

    #[test]
    fn a_dead_runs_repo_lock_is_taken_over_and_its_records_become_the_record_file() {
        let dir = tempfile::tempdir().unwrap();
        let (state, owner) = (dir.path(), owner_record(std::process::id()));
        let read = |name: &str| std::fs::read_to_string(state.join(name)).ok();
        let record_file = super::super::gitlock::RECORD;
        // Without records: taken over in place.
        std::fs::write(state.join(REPO_LOCK), "999999999 1").unwrap();
        assert!(RepoLock::left_by_dead_run(state));
        let held = RepoLock::acquire(state).unwrap();
        assert_eq!((read(REPO_LOCK).unwrap(), read(record_file)), (owner.clone(), None));
        drop(held);
        // With records: they become the record file...
        let dead = "999999999 1\n/repo/.git/index.lock";
        std::fs::write(state.join(REPO_LOCK), dead).unwrap();
        let held = RepoLock::acquire(state).unwrap();
        assert_eq!((read(record_file).unwrap(), read(REPO_LOCK).unwrap()), (dead.to_string(), owner.clone()));
        drop(held);
        // ...or are added to the one there.
        std::fs::write(state.join(REPO_LOCK), "999999999 1\n/repo/z.tmp").unwrap();
        drop(RepoLock::acquire(state).unwrap());
        assert_eq!(read(record_file).unwrap(), format!("{dead}\n/repo/z.tmp"));
        assert_eq!(read(REPO_LOCK).as_deref(), Some(""));
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
