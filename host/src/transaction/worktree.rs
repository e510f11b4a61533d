//! Bring the user's working tree and index up to date for the changed
//! paths only: cost grows with the change, not with the repository.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::{TxError, fault, gitlock, journal};

/// The new state of one path.
#[derive(Debug, Clone)]
pub struct PathUpdate<'c> {
    pub path: String,
    /// The new content, when the file needs writing.
    pub content: Option<Cow<'c, [u8]>>,
    /// The path is deleted.
    pub deleted: bool,
    pub executable: bool,
    /// Whether the file still needs writing or removing (false: it already
    /// holds the new state, only the index may need it).
    pub write: bool,
}

/// The working-tree file at `path`, or `None` if it does not exist.
pub fn current(root: &Path, path: &str) -> Result<Option<Vec<u8>>, TxError> {
    let full = root.join(path);
    match std::fs::read(&full) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TxError::io(&full, e)),
    }
}

/// Whether the working-tree file at `path` holds exactly `expected` (`None`:
/// does not exist). Read in small chunks and compared as it goes: the
/// snapshot is already in memory, and a second whole copy of a large file
/// would cost more than the comparison.
pub fn holds(root: &Path, path: &str, expected: Option<&[u8]>) -> Result<bool, TxError> {
    use std::io::Read as _;
    let full = root.join(path);
    let mut file = match std::fs::File::open(&full) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(expected.is_none()),
        Err(e) => return Err(TxError::io(&full, e)),
    };
    let Some(mut expected) = expected else { return Ok(false) };
    let io = |e| TxError::io(&full, e);
    if file.metadata().map_err(io)?.len() != expected.len() as u64 {
        return Ok(false);
    }
    let mut chunk = vec![0; 64 << 10];
    loop {
        let read = match file.read(&mut chunk) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        if read == 0 {
            return Ok(expected.is_empty());
        }
        match expected.strip_prefix(&chunk[..read]) {
            Some(rest) => expected = rest,
            None => return Ok(false),
        }
    }
}

/// The blob id the working-tree file at `path` would hash to, or `None` if
/// it does not exist.
pub fn current_blob(root: &Path, path: &str) -> Result<Option<Oid>, TxError> {
    current(root, path)?.map(|bytes| Oid::hash_object(git2::ObjectType::Blob, &bytes)).transpose().map_err(TxError::git)
}

/// The journal digest of the working-tree file at `path`, or `None` if it
/// does not exist.
pub fn current_digest(root: &Path, path: &str) -> Result<Option<String>, TxError> {
    Ok(current(root, path)?.map(|bytes| journal::digest(&bytes)))
}

/// Write each file atomically (temp file + rename in its directory), then
/// update the index entries for these paths when `stage`.
pub fn update(
    repo: &Repository,
    root: &Path,
    state_dir: &Path,
    updates: &[PathUpdate],
    stage: bool,
) -> Result<(), TxError> {
    for (n, update) in updates.iter().enumerate() {
        if n == 1 {
            fault::point("mid-worktree");
        }
        if !update.write {
            continue;
        }
        let full = root.join(&update.path);
        match &update.content {
            Some(content) => write_atomically(&full, content, update.executable)?,
            None if update.deleted => match std::fs::remove_file(&full) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(TxError::io(&full, e)),
                _ => remove_empty_parents(root, &full),
            },
            None => unreachable!("a file to write comes with its content"),
        }
    }
    if stage {
        let mut index = repo.index().map_err(TxError::git)?;
        for update in updates {
            let path = Path::new(&update.path);
            match update.deleted {
                false => index.add_path(path).map_err(TxError::git)?,
                true => match index.remove_path(path) {
                    Err(e) if e.code() != git2::ErrorCode::NotFound => return Err(TxError::git(e)),
                    _ => {}
                },
            }
        }
        let lock = repo.path().join("index.lock");
        gitlock::recorded(state_dir, "mid-index-write", &[lock], || index.write().map_err(TxError::git))?;
    }
    Ok(())
}

/// Where `full` is written before it is renamed into place: a fixed name
/// beside it, so a run killed mid-write leaves a file that the journal's
/// paths lead recovery to, rather than an anonymous temp file in the user's tree.
pub fn temp_path(full: &Path) -> PathBuf {
    let name = full.file_name().expect("repo paths name a file").to_string_lossy();
    full.with_file_name(format!(".{name}.agent-apply-tmp"))
}

/// Remove what a killed write of `path` may have left behind.
pub fn remove_temp_file(root: &Path, path: &str) -> Result<(), TxError> {
    let temp = temp_path(&root.join(path));
    match std::fs::remove_file(&temp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(TxError::io(&temp, e)),
        _ => Ok(()),
    }
}

pub fn write_atomically(full: &Path, bytes: &[u8], executable: bool) -> Result<(), TxError> {
    let dir = full.parent().expect("repo paths have a parent");
    std::fs::create_dir_all(dir).map_err(|e| TxError::io(dir, e))?;
    let temp = temp_path(full);
    let mut file = std::fs::File::create(&temp).map_err(|e| TxError::io(&temp, e))?;
    std::io::Write::write_all(&mut file, bytes).map_err(|e| TxError::io(&temp, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = if executable { 0o755 } else { 0o644 };
        file.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(|e| TxError::io(&temp, e))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    drop(file);
    fault::point("mid-write");
    std::fs::rename(&temp, full).map_err(|e| TxError::io(full, e))?;
    Ok(())
}

fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}
